//===- L2Flush.h - evicting L2 before each timed GPU call --------*- C++ -*-===//
//
// Before each timed repetition kforge-run evicts the inputs from L2 by touching a buffer of 4x L2 (at least
// 256 MiB). How it touches the buffer decides what L2 holds when the clock starts:
//   - dirty (shared/MEASURE.md's protocol, the default): the buffer is written (cuMemsetD8), so L2 is full of
//     dirty lines, which the timed call writes back to DRAM as it evicts them (as after a kernel that wrote
//     its output);
//   - clean: the buffer is read by a small kernel (PTX, JIT-compiled by the driver), so whatever L2 held is
//     written back before the clock starts and it holds clean lines (as under ncu's cache control). On the
//     H200 the reductions ran 3-8% faster so (benchmark call 39, docs/perf/reductions-h200.md).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_L2FLUSH_H
#define KFORGE_RUNNER_L2FLUSH_H

#include "CudaDriver.h"

#include <string>

namespace kforge {

/// "dirty" or "clean"; anything else is not an L2 state.
bool isL2State(const std::string &state);

/// The clean flush's kernel (PTX for sm_75 and later): a grid-stride loop of 16-byte loads over the buffer.
const char *l2ReadFlushPtx();

class L2Flush {
public:
  explicit L2Flush(CudaDriver &cuda) : cuda(cuda) {}
  L2Flush(const L2Flush &) = delete;
  L2Flush &operator=(const L2Flush &) = delete;
  ~L2Flush();

  /// Allocates the buffer for device `ordinal` (and, for "clean", loads the read kernel and fills the buffer
  /// once). Empty on success, else why not.
  std::string prepare(int ordinal, const std::string &state);
  /// Queues one flush on the legacy stream; `rep` varies the dirty flush's byte. Empty, or why it failed.
  std::string run(int rep);
  /// How the clock's report says L2 was flushed.
  std::string describe() const;

private:
  CudaDriver &cuda;
  bool clean = false;
  CUdeviceptr buffer = 0, sink = 0;
  size_t bytes = 0;
  unsigned grid = 0;
  void *module = nullptr;
  CUfunction read = nullptr;
};

} // namespace kforge

#endif // KFORGE_RUNNER_L2FLUSH_H
