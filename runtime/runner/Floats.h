//===- Floats.h - the judge's float buffers, not zero-filled ----*- C++ -*-===//
//
// A seed's inputs and outputs are multi-GB vectors that the judge overwrites whole right away (the inputs by
// the parallel draw, the outputs by the parallel copy out of the executor's shared memory). A std::vector<float>
// resized over fresh memory is first zero-filled on one thread, touching every page there: on the H100's host
// that made one seed of a 8.6 GB matvec cost 5.6 s, most of it before the draw began. Floats leaves new
// elements uninitialised, so the pages are first touched by the threads that write them.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_FLOATS_H
#define KFORGE_RUNNER_FLOATS_H

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace kforge {

/// Buffers of at least this many bytes sit on 2 MB boundaries and are offered transparent huge pages (unless
/// KFORGE_HUGE_PAGES=0).
inline constexpr size_t kHugePageBufferBytes = size_t(64) << 20;

/// Whether large buffers ask for huge pages: yes unless KFORGE_HUGE_PAGES=0 (Floats.cpp). A search keeps each
/// seed's reference outputs in fresh buffers (three of 6.4 GB for a 4096 x 393216 softmax), and copying them
/// out of the executor's shared memory ran at ~6.3 GB/s on the H100's host, page faults and all (session 64).
/// With huge pages on that host (transparent huge pages in madvise mode), session 65 measured that softmax's
/// baseline copies at 2.27 s against 3.18 s, its set-up 5.6 s against 7.0 s and its first correct trial 8.0 s
/// against 9.9 s (results/benchmarks-h100/2026-12-07/s65-call-2). On the development VM a fresh 1 GB copy took
/// 0.15-0.2 s with free huge pages, 1.4 s when the kernel compacted memory for them first, 0.33 s without: a
/// host where compaction stalls can turn them off.
bool hugePagesWanted();
/// `bytes` (at least kHugePageBufferBytes) on a 2 MB boundary, madvise(MADV_HUGEPAGE)'d: its first touches then
/// fault 2 MB at a time instead of 4 KB. Released by freeHugeBuffer.
void *allocateHugeBuffer(size_t bytes);
void freeHugeBuffer(void *pointer);

/// std::allocator whose value-initialization is default-initialization (nothing, for float), and whose large
/// buffers may take huge pages.
template <typename T> struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  template <typename U> struct rebind { using other = DefaultInitAllocator<U>; };
  DefaultInitAllocator() = default;
  template <typename U> DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept {}
  // (hugePagesWanted() is fixed for the process: a buffer is released the way it was allocated.)
  T *allocate(size_t n) {
    if (n * sizeof(T) >= kHugePageBufferBytes && hugePagesWanted())
      return static_cast<T *>(allocateHugeBuffer(n * sizeof(T)));
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T *p, size_t n) noexcept {
    if (n * sizeof(T) >= kHugePageBufferBytes && hugePagesWanted())
      freeHugeBuffer(p);
    else
      std::allocator<T>::deallocate(p, n);
  }
  template <typename U> void construct(U *p) noexcept { ::new (static_cast<void *>(p)) U; }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};
template <typename T, typename U>
bool operator==(const DefaultInitAllocator<T> &, const DefaultInitAllocator<U> &) noexcept {
  return true;
}
template <typename T, typename U>
bool operator!=(const DefaultInitAllocator<T> &, const DefaultInitAllocator<U> &) noexcept {
  return false;
}

/// A float buffer whose resize leaves new elements uninitialised: write them before reading them.
using Floats = std::vector<float, DefaultInitAllocator<float>>;

} // namespace kforge

#endif // KFORGE_RUNNER_FLOATS_H
