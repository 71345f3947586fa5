//===- DType.h - element types the runner can feed and compare ---*- C++ -*-===//

#ifndef KFORGE_RUNNER_DTYPE_H
#define KFORGE_RUNNER_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

/// The runner works on float values and stores them in the artifact's element type. f64 arguments are the
/// values between kernels of a partitioned model whose importer computes statistics in f64 (torch-mlir's
/// layer and group norms): drawn and compared as floats, stored as doubles. The integer types are for outputs
/// (argmax's indices: exact in a float up to 2^24) and for inputs whose payload says they are indices
/// ("domain": "index:N"); other integer inputs (masks) random draws cannot give, and are refused.
enum class DType { F32, F16, BF16, I64, I32, F64 };

/// Whether `type` is an integer type (compared exactly, not drawn as an input).
bool isInteger(DType type);

std::optional<DType> parseDType(const std::string &name);
size_t elementBytes(DType type);
/// The default correctness tolerance of a task in this precision (shared/MEASURE.md; KernelBench's rule).
double defaultTolerance(DType type);

/// The relative L2 tolerance of an fp32 output when TF32 is allowed (kforge-run --precision tf32): 2^-9. TF32
/// keeps 10 of f32's 23 mantissa bits; with its operands truncated (what the tensor cores read of an f32) a
/// product of normal inputs is off by 7.7e-4 (relative L2, any K), about 1e-3 on all-positive inputs (the
/// truncation's bias, coherent), and rounding to nearest gives 2.9e-4; a K tile of 32 dropped in 1 of 512
/// output tiles is off by 3.7e-3 at K = 4096 and 2.4e-3 at 8192 (a NumPy model of 256 x 256 products, session
/// 53; test/Runner/tf32-tolerance-cpu.test runs a TF32-truncated product and a dropped tile through kforge-run).
inline constexpr double kTf32Tolerance = 0x1p-9;
/// `value` rounded to the nearest representable value of `type` (round to nearest even).
float roundTo(DType type, float value);
/// Stores `count` floats at `values` in `type`'s encoding at `bytes` (count * elementBytes(type) bytes).
void packInto(DType type, const float *values, size_t count, uint8_t *bytes);
/// Fills `count` elements at `bytes` with the poison outputs start as: NaN, or an integer type's most negative
/// value (which unpack reads back as NaN).
void poisonInto(DType type, size_t count, uint8_t *bytes);
/// Reads `count` elements in `type`'s encoding at `bytes` into `values` as floats.
void unpackInto(DType type, const uint8_t *bytes, size_t count, float *values);
/// Stores `values` in `type`'s encoding.
std::vector<uint8_t> pack(DType type, const std::vector<float> &values);
/// Reads `bytes` in `type`'s encoding back as floats.
std::vector<float> unpack(DType type, const std::vector<uint8_t> &bytes);
/// Reads `size` bytes at `data` in `type`'s encoding back as floats.
std::vector<float> unpack(DType type, const uint8_t *data, size_t size);

} // namespace kforge

#endif // KFORGE_RUNNER_DTYPE_H
