//===- Random.h - the judge's random inputs, the same on the host and the GPU ---*- C++ -*-===//
//
// kforge-run draws every input of every seed: billions of values for a multi-GB problem. Each value is a pure
// function of (seed, argument, element index), computed with integer arithmetic and one correctly rounded
// float multiplication, so that the host (the judge, kforge-compile --sample-outputs) and a GPU executor
// (DeviceInputs.h: the inputs made where they are used, instead of copied over PCIe for every seed of every
// candidate) produce the same bits, and any element can be drawn alone.
//
// The distribution: the sum of eight uniform 16-bit integers (two 64-bit hashes), centred and scaled to unit
// variance: Irwin-Hall of order 8, close to N(0, 1) (kurtosis 2.85, tails to 4.9 standard deviations), on a
// grid of 1 / 53510 (finer than bf16's spacing near 1, coarser than f32's).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_RANDOM_H
#define KFORGE_RUNNER_RANDOM_H

#include <algorithm>
#include <cstdint>

namespace kforge {

/// splitmix64's finalizer (Steele, Lea and Flood): a bijection of 64-bit words that mixes every bit.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The key of argument `argument`'s values for `seed`: neighbouring seeds and arguments give unrelated keys.
inline uint64_t inputKey(uint64_t seed, uint64_t argument) {
  return mix64(mix64(seed + 0x9e3779b97f4a7c15ull) ^ (argument * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull));
}

/// What values an input takes: roughly N(0, 1), its absolute value (never 0), or uniform integers in [0, bound).
enum class InputMode : uint32_t { Normal = 0, Positive = 1, Index = 2 };

/// The unit-variance scale of the centred sum of eight uniform 16-bit integers: 1 / sqrt(8 (2^32 - 1) / 12),
/// rounded to f32 (the GPU generator's PTX carries the same bits, 0f379CC471).
inline constexpr float kIrwinHallScale = 0x1.3988e2p-16f;

/// Element `index` of the argument whose key is `key` (inputKey).
inline float inputValue(uint64_t key, uint64_t index, InputMode mode, uint64_t bound) {
  uint64_t first = mix64(key + index * 0x9e3779b97f4a7c15ull);
  if (mode == InputMode::Index)
    return static_cast<float>(first % bound);
  uint64_t second = mix64(first ^ 0x2545f4914f6cdd1dull);
  // Eight values in [0, 65535] (mean 32767.5 each) less their mean: an integer below 2^19 in magnitude, exact
  // in f32, scaled by one correctly rounded multiplication.
  int64_t sum = -262140;
  for (int shift = 0; shift < 64; shift += 16)
    sum += static_cast<int64_t>((first >> shift) & 0xffff) + static_cast<int64_t>((second >> shift) & 0xffff);
  float value = static_cast<float>(sum) * kIrwinHallScale;
  // Positive: |value|, and never 0 (the sum is 0 about once in 130,000 draws: a 16384 x 32768 input has
  // thousands, whose logarithm made a KL divergence infinite). 0 becomes one step of the scale, the smallest
  // magnitude the sum takes otherwise, so the values stay those of |N(0, 1)| elsewhere.
  if (mode == InputMode::Positive)
    return std::max(value < 0 ? -value : value, kIrwinHallScale);
  return value;
}

} // namespace kforge

#endif // KFORGE_RUNNER_RANDOM_H
