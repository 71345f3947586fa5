//===- RandomTest.cpp - the judge's input generator ------------------------===//

#include "Random.h"
#include "DeviceInputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

using namespace kforge;

static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

TEST(Random, EachValueIsAFunctionOfSeedArgumentAndIndex) {
  uint64_t key = inputKey(7, 1);
  EXPECT_EQ(key, inputKey(7, 1));
  EXPECT_NE(key, inputKey(7, 2));
  EXPECT_NE(key, inputKey(8, 1));
  int sameAsNeighbours = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    float x = inputValue(key, i, InputMode::Normal, 0);
    EXPECT_EQ(bitsOf(x), bitsOf(inputValue(inputKey(7, 1), i, InputMode::Normal, 0)));
    sameAsNeighbours += x == inputValue(inputKey(7, 2), i, InputMode::Normal, 0);
    sameAsNeighbours += x == inputValue(inputKey(8, 1), i, InputMode::Normal, 0);
    sameAsNeighbours += x == inputValue(key, i + 1, InputMode::Normal, 0);
  }
  EXPECT_LT(sameAsNeighbours, 5);
}

// Pinned values: the GPU generator (DeviceInputs.cpp's PTX) must give exactly these bits, and a GPU executor's
// inputs are checked against the host's on every run; a change here changes every seed's inputs (and the seed
// cache's key, "inputs4" in Verify.cpp, must change with it).
TEST(Random, ValuesArePinned) {
  uint64_t key = inputKey(0, 0);
  char text[128];
  std::snprintf(text, sizeof(text), "%016llx %08x %08x %08x %08x", static_cast<unsigned long long>(key),
                bitsOf(inputValue(key, 0, InputMode::Normal, 0)), bitsOf(inputValue(key, 1, InputMode::Normal, 0)),
                bitsOf(inputValue(key, 1, InputMode::Positive, 0)),
                bitsOf(inputValue(key, 5, InputMode::Index, 50257)));
  // The same bits from an independent Python model of Random.h (integers, numpy float32).
  EXPECT_EQ(std::string(text), "9b88c3cde6d7953d bd1dea61 bea18363 3ea18363 47396100");
}

TEST(Random, TheGpuGeneratorCarriesTheHostsScale) {
  char constant[16];
  std::snprintf(constant, sizeof(constant), "0f%08X", bitsOf(kIrwinHallScale));
  EXPECT_NE(std::string(fillInputsPtx()).find(constant), std::string::npos) << constant;
  EXPECT_NE(std::string(fillInputsPtx()).find("sub.s64 %rd11, %rd11, 262140"), std::string::npos);
}

TEST(Random, NormalModeIsCloseToNZeroOne) {
  uint64_t key = inputKey(3, 0);
  const int n = 4000000;
  double sum = 0, squares = 0, fourth = 0, largest = 0;
  int beyond2 = 0, beyond3 = 0, negative = 0;
  for (int i = 0; i < n; ++i) {
    double x = inputValue(key, static_cast<uint64_t>(i), InputMode::Normal, 0);
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += x * x;
    fourth += x * x * x * x;
    largest = std::max(largest, std::fabs(x));
    beyond2 += std::fabs(x) > 2;
    beyond3 += std::fabs(x) > 3;
    negative += x < 0;
  }
  double mean = sum / n, variance = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.003);
  EXPECT_NEAR(variance, 1.0, 0.003);
  EXPECT_NEAR(fourth / n, 2.85, 0.03); // Irwin-Hall of order 8: 3 - 6 / 40
  EXPECT_NEAR(double(negative) / n, 0.5, 0.002);
  EXPECT_LE(largest, 4.9);
  // N(0, 1): P(|x| > 2) = 0.0455, P(|x| > 3) = 0.0027; the sum of eight uniforms has slightly lighter tails.
  EXPECT_NEAR(double(beyond2) / n, 0.0455, 0.003);
  EXPECT_NEAR(double(beyond3) / n, 0.0027, 0.0012);
}

TEST(Random, PositiveAndIndexModes) {
  uint64_t key = inputKey(1, 2);
  int counts[7] = {};
  for (uint64_t i = 0; i < 70000; ++i) {
    float normal = inputValue(key, i, InputMode::Normal, 0);
    EXPECT_EQ(inputValue(key, i, InputMode::Positive, 0), std::max(std::fabs(normal), kIrwinHallScale));
    float index = inputValue(key, i, InputMode::Index, 7);
    ASSERT_TRUE(index >= 0 && index < 7 && index == std::floor(index)) << index;
    ++counts[static_cast<int>(index)];
  }
  for (int count : counts)
    EXPECT_NEAR(count, 10000, 400);
}

// The sum of eight uniforms is 0 about once in 130,000 draws: a positive input (one whose logarithm the payload
// takes) must not be, or a large input has thousands of infinite logarithms (a KL divergence over 16384 x 32768
// was non-finite on the GPU). 0 becomes one step of the scale, the smallest positive value the sum takes.
TEST(Random, PositiveValuesAreNeverZero) {
  uint64_t key = inputKey(3, 1), zero = 0;
  bool found = false;
  for (uint64_t i = 0; i < (uint64_t{1} << 22) && !found; ++i)
    if (inputValue(key, i, InputMode::Normal, 0) == 0.0f)
      found = true, zero = i;
  ASSERT_TRUE(found) << "no zero draw in 2^22 (expected about 30)";
  EXPECT_EQ(inputValue(key, zero, InputMode::Positive, 0), kIrwinHallScale);
  EXPECT_GT(kIrwinHallScale, 0.0f);
}

TEST(Random, CheckedPositionsSpanTheArgument) {
  EXPECT_EQ(checkedInputPositions(0).size(), 0u);
  EXPECT_EQ(checkedInputPositions(1), std::vector<uint64_t>({0}));
  EXPECT_EQ(checkedInputPositions(2), std::vector<uint64_t>({0, 1}));
  for (size_t count : {size_t(31), size_t(32), size_t(1000), size_t(1) << 33}) {
    std::vector<uint64_t> positions = checkedInputPositions(count);
    EXPECT_EQ(positions.front(), 0u);
    EXPECT_EQ(positions.back(), count - 1);
    EXPECT_LE(positions.size(), 32u);
    for (size_t j = 1; j < positions.size(); ++j)
      EXPECT_LT(positions[j - 1], positions[j]);
  }
}
