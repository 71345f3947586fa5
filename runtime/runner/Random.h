//===- Random.h - the judge's random inputs, fast ---------------*- C++ -*-===//
//
// kforge-run draws every input of every seed: billions of values for a multi-GB problem, once per seed. With
// std::mt19937_64 and std::normal_distribution that cost ~19 ns a value per core (8 s of a 13 GB softmax's
// first run on the H100); xoshiro256** and Marsaglia and Tsang's ziggurat draw the same distribution, N(0, 1),
// in a few. Deterministic: the same seeds give the same values on every machine (no libm in the common path;
// the rare tail and wedge draws use exp and log, which agree to the last bit on glibc's x86-64).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_RANDOM_H
#define KFORGE_RUNNER_RANDOM_H

#include <cstdint>
#include <limits>

namespace kforge {

/// xoshiro256** (Blackman and Vigna), seeded through splitmix64; a UniformRandomBitGenerator.
class Xoshiro256 {
public:
  using result_type = uint64_t;
  /// Seeded from several words (e.g. seed, argument, block), mixed so that neighbouring words give unrelated
  /// streams.
  Xoshiro256(uint64_t a, uint64_t b = 0, uint64_t c = 0);
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return std::numeric_limits<uint64_t>::max(); }
  uint64_t operator()() {
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  /// Uniform in (0, 1), never 0 (a logarithm's argument).
  double uniformOpen() { return (double((*this)() >> 11) + 0.5) * 0x1.0p-53; }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s[4];
};

/// N(0, 1) by the ziggurat method (Marsaglia and Tsang 2000, 128 layers); the layer and the value come from
/// separate bits of one 64-bit draw.
float standardNormal(Xoshiro256 &generator);

} // namespace kforge

#endif // KFORGE_RUNNER_RANDOM_H
