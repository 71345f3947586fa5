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

#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace kforge {

/// std::allocator whose value-initialization is default-initialization (nothing, for float).
template <typename T> struct DefaultInitAllocator : std::allocator<T> {
  template <typename U> struct rebind { using other = DefaultInitAllocator<U>; };
  DefaultInitAllocator() = default;
  template <typename U> DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept {}
  template <typename U> void construct(U *p) noexcept { ::new (static_cast<void *>(p)) U; }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

/// A float buffer whose resize leaves new elements uninitialised: write them before reading them.
using Floats = std::vector<float, DefaultInitAllocator<float>>;

} // namespace kforge

#endif // KFORGE_RUNNER_FLOATS_H
