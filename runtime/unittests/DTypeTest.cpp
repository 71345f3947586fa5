//===- DTypeTest.cpp - fp16/bf16 encodings of the runner -------------------===//

#include "DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace kforge;

namespace {

uint16_t bits16(DType type, float value) {
  std::vector<uint8_t> bytes = pack(type, {value});
  uint16_t bits;
  std::memcpy(&bits, bytes.data(), 2);
  return bits;
}

TEST(DTypeTest, ParsesTheSupportedTypes) {
  EXPECT_EQ(parseDType("f32"), DType::F32);
  EXPECT_EQ(parseDType("f16"), DType::F16);
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("i64"), DType::I64);
  EXPECT_EQ(parseDType("i32"), DType::I32);
  EXPECT_EQ(parseDType("f64"), DType::F64);
  EXPECT_FALSE(parseDType("i8").has_value());
}

// f64 (a partitioned model's f64 statistics between kernels): 8 bytes a value, stored as doubles, read back
// as floats, NaN (the poison) kept; the fp32 rule.
TEST(DTypeTest, F64StoresDoubles) {
  EXPECT_EQ(elementBytes(DType::F64), 8u);
  EXPECT_FALSE(isInteger(DType::F64));
  EXPECT_DOUBLE_EQ(defaultTolerance(DType::F64), 1e-4);
  std::vector<float> values = {1.5f, -0.1f, 3.0e30f, NAN};
  std::vector<uint8_t> bytes = pack(DType::F64, values);
  ASSERT_EQ(bytes.size(), 32u);
  double stored;
  std::memcpy(&stored, &bytes[8], 8);
  EXPECT_EQ(stored, static_cast<double>(-0.1f));
  std::vector<float> back = unpack(DType::F64, bytes);
  for (size_t i = 0; i + 1 < values.size(); ++i)
    EXPECT_EQ(back[i], values[i]);
  EXPECT_TRUE(std::isnan(back.back()));
}

// Integer outputs (argmax's indices): stored exactly, compared exactly, and the NaN poison survives the round
// trip (as the type's most negative value), so an index the kernel never wrote still reads as unwritten.
TEST(DTypeTest, IntegerOutputsRoundTripWithThePoison) {
  for (DType type : {DType::I64, DType::I32}) {
    EXPECT_TRUE(isInteger(type));
    EXPECT_EQ(defaultTolerance(type), 0.0);
    std::vector<float> values = {0.0f, 7.0f, -3.0f, 16777216.0f, NAN};
    std::vector<uint8_t> bytes = pack(type, values);
    EXPECT_EQ(bytes.size(), values.size() * elementBytes(type));
    std::vector<float> back = unpack(type, bytes);
    ASSERT_EQ(back.size(), values.size());
    for (size_t i = 0; i + 1 < values.size(); ++i)
      EXPECT_EQ(back[i], values[i]);
    EXPECT_TRUE(std::isnan(back.back()));
  }
  EXPECT_EQ(elementBytes(DType::I64), 8u);
  int64_t stored;
  std::memcpy(&stored, pack(DType::I64, {41.0f}).data(), 8);
  EXPECT_EQ(stored, 41);
  EXPECT_FALSE(isInteger(DType::F32));
}

TEST(DTypeTest, F16KnownEncodings) {
  EXPECT_EQ(bits16(DType::F16, 1.0f), 0x3c00);
  EXPECT_EQ(bits16(DType::F16, -2.0f), 0xc000);
  EXPECT_EQ(bits16(DType::F16, 65504.0f), 0x7bff);       // largest finite
  EXPECT_EQ(bits16(DType::F16, 1e6f), 0x7c00);           // overflows to infinity
  EXPECT_EQ(bits16(DType::F16, 5.9604645e-08f), 0x0001); // smallest subnormal
  EXPECT_EQ(bits16(DType::F16, 0.0f), 0x0000);
  EXPECT_TRUE(std::isnan(unpack(DType::F16, pack(DType::F16, {NAN}))[0]));
}

TEST(DTypeTest, F16RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(bits16(DType::F16, 1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: even is 1 + 2^-9.
  EXPECT_EQ(bits16(DType::F16, 1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST(DTypeTest, Bf16KnownEncodingsAndRounding) {
  EXPECT_EQ(bits16(DType::BF16, 1.0f), 0x3f80);
  EXPECT_EQ(bits16(DType::BF16, -3.0f), 0xc040);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(bits16(DType::BF16, 1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_TRUE(std::isnan(unpack(DType::BF16, pack(DType::BF16, {NAN}))[0]));
}

TEST(DTypeTest, RoundTripsRepresentableValues) {
  for (DType type : {DType::F32, DType::F16, DType::BF16}) {
    std::vector<float> values;
    for (float v = -8.0f; v <= 8.0f; v += 0.125f)
      values.push_back(roundTo(type, v));
    EXPECT_EQ(unpack(type, pack(type, values)), values);
  }
}

TEST(DTypeTest, TolerancesFollowPrecision) {
  EXPECT_DOUBLE_EQ(defaultTolerance(DType::F32), 1e-4);
  // One unit roundoff of the output type (DType.cpp says why).
  EXPECT_DOUBLE_EQ(defaultTolerance(DType::BF16), 0x1p-8);
  EXPECT_DOUBLE_EQ(defaultTolerance(DType::F16), 0x1p-11);
  EXPECT_EQ(elementBytes(DType::F16), 2u);
}

TEST(DTypeTest, ThePoisonReadsBackAsNaNInEveryType) {
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32}) {
    std::vector<uint8_t> bytes(3 * elementBytes(type), 0);
    poisonInto(type, 3, bytes.data());
    std::vector<float> back(3, 0.0f);
    unpackInto(type, bytes.data(), 3, back.data());
    for (float value : back)
      EXPECT_TRUE(std::isnan(value)) << static_cast<int>(type);
  }
}

TEST(DTypeTest, PackIntoWritesOnlyItsElements) {
  std::vector<float> values{1.5f, -2.25f, 3.0f};
  std::vector<uint8_t> bytes(4 * 2 + 1, 0xAB);
  packInto(DType::BF16, values.data(), 3, bytes.data() + 1);
  EXPECT_EQ(bytes[0], 0xAB);
  EXPECT_EQ(bytes.back(), 0xAB);
  std::vector<float> back(3);
  unpackInto(DType::BF16, bytes.data() + 1, 3, back.data());
  EXPECT_EQ(back, values);
}

} // namespace
