//===- Random.cpp - the judge's random inputs, fast ------------------------===//

#include "Random.h"

#include <cmath>
#include <cstdlib>

using namespace kforge;

static uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Xoshiro256::Xoshiro256(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t state = a;
  state = splitmix64(state) ^ b;
  state = splitmix64(state) ^ c;
  for (uint64_t &word : s)
    word = splitmix64(state);
}

namespace {
/// The ziggurat's 128 layers for the normal density (Marsaglia and Tsang's RNOR tables, in double).
struct Ziggurat {
  static constexpr double kR = 3.442619855899; ///< Where the tail begins.
  uint32_t k[128];                             ///< |hz| below k[i]: the value lies inside layer i's rectangle.
  double w[128], f[128];
  Ziggurat() {
    const double scale = 2147483648.0, area = 9.91256303526217e-3;
    double d = kR, t = d, q = area / std::exp(-0.5 * d * d);
    k[0] = static_cast<uint32_t>((d / q) * scale);
    k[1] = 0;
    w[0] = q / scale;
    w[127] = d / scale;
    f[0] = 1.0;
    f[127] = std::exp(-0.5 * d * d);
    for (int i = 126; i >= 1; --i) {
      d = std::sqrt(-2.0 * std::log(area / d + std::exp(-0.5 * d * d)));
      k[i + 1] = static_cast<uint32_t>((d / t) * scale);
      t = d;
      f[i] = std::exp(-0.5 * d * d);
      w[i] = d / scale;
    }
  }
};
const Ziggurat &tables() {
  static const Ziggurat z;
  return z;
}
} // namespace

float kforge::standardNormal(Xoshiro256 &generator) {
  const Ziggurat &z = tables();
  while (true) {
    uint64_t bits = generator();
    int iz = static_cast<int>(bits & 127);
    int32_t hz = static_cast<int32_t>(bits >> 32);
    uint32_t magnitude = hz < 0 ? uint32_t(-int64_t(hz)) : uint32_t(hz);
    double x = hz * z.w[iz];
    if (magnitude < z.k[iz])
      return static_cast<float>(x); // inside the layer's rectangle: ~98.8% of draws
    if (iz == 0) {
      // The tail beyond kR (Marsaglia's method).
      double tx, ty;
      do {
        tx = -std::log(generator.uniformOpen()) / Ziggurat::kR;
        ty = -std::log(generator.uniformOpen());
      } while (ty + ty < tx * tx);
      return static_cast<float>(hz > 0 ? Ziggurat::kR + tx : -Ziggurat::kR - tx);
    }
    // The wedge between the rectangle and the density.
    if (z.f[iz] + generator.uniformOpen() * (z.f[iz - 1] - z.f[iz]) < std::exp(-0.5 * x * x))
      return static_cast<float>(x);
  }
}
