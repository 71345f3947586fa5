//===- Parallel.h - the judge's bulk copies, on all cores -*- C++ -*-===//
//
// The judge moves every argument of every seed through the executors' shared memory: on a 4096x393216
// softmax that is 6.4 GB in and 6.4 GB out per seed and candidate. One thread copies ~5 GB/s; the GPU
// machine's host has 16 cores and a memory system several times faster than one core can drive.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_PARALLEL_H
#define KFORGE_RUNNER_PARALLEL_H

#include <cstddef>

namespace kforge {

/// `work(begin, end)` over [0, n) in contiguous pieces, on up to every core when n is large (one call on
/// this thread otherwise). Pieces never overlap; the call returns when all are done.
template <typename Work> void forPieces(size_t n, Work work);

/// dst[0, n) = src[0, n) (the ranges must not overlap).
void copyFloats(float *dst, const float *src, size_t n);
/// dst[0, n) = value.
void fillFloats(float *dst, size_t n, float value);

namespace detail {
/// How many pieces to cut n elements into: 1 below a few MB, else up to the number of cores (at most 16).
size_t piecesFor(size_t n);
void runPieces(size_t pieces, void (*body)(void *, size_t), void *context);
} // namespace detail

template <typename Work> void forPieces(size_t n, Work work) {
  size_t pieces = detail::piecesFor(n);
  if (pieces <= 1) {
    work(size_t(0), n);
    return;
  }
  struct Context {
    Work *work;
    size_t n, pieces;
  } context{&work, n, pieces};
  detail::runPieces(
      pieces,
      [](void *raw, size_t p) {
        auto *c = static_cast<Context *>(raw);
        size_t per = (c->n + c->pieces - 1) / c->pieces;
        size_t begin = p * per < c->n ? p * per : c->n, end = begin + per < c->n ? begin + per : c->n;
        (*c->work)(begin, end);
      },
      &context);
}

} // namespace kforge

#endif // KFORGE_RUNNER_PARALLEL_H
