//===- Parallel.cpp - the judge's bulk copies, on all cores ---------------===//

#include "Parallel.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

using namespace kforge;

/// Below this many elements (16 MB of floats) a copy takes a few ms and threads cost more than they save.
static constexpr size_t kParallelFrom = size_t(1) << 22;

size_t detail::piecesFor(size_t n) {
  if (n < kParallelFrom)
    return 1;
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::min<size_t>({cores, 16, n / (kParallelFrom / 4)});
}

void detail::runPieces(size_t pieces, void (*body)(void *, size_t), void *context) {
  std::vector<std::thread> threads;
  threads.reserve(pieces - 1);
  for (size_t p = 1; p < pieces; ++p)
    threads.emplace_back(body, context, p);
  body(context, 0);
  for (std::thread &t : threads)
    t.join();
}

void kforge::copyFloats(float *dst, const float *src, size_t n) {
  forPieces(n, [&](size_t begin, size_t end) { std::memcpy(dst + begin, src + begin, (end - begin) * sizeof(float)); });
}

void kforge::fillFloats(float *dst, size_t n, float value) {
  forPieces(n, [&](size_t begin, size_t end) { std::fill(dst + begin, dst + end, value); });
}
