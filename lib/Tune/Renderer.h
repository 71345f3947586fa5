//===- Renderer.h - a schedule as transform-dialect text --------*- C++ -*-===//
//
// The renderer writes one transform library (`@__transform_main`) for a valid schedule: the producer
// matchers, each action's fragment (through its definition), then the target's finish (bufferization, the GPU
// mapping, vector lowering) and the fragments that act on the mapped kernel. It keeps the handles the
// fragments share (the root, the block / thread / K loops) and fresh SSA names.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TUNE_RENDERER_H
#define KFORGE_LIB_TUNE_RENDERER_H

#include "kforge/Tune/Actions.h"

#include <string>
#include <vector>

namespace kforge::tune {

class Renderer {
public:
  Renderer(const PayloadFacts &facts, llvm::StringRef target)
      : payloadFacts(facts), facts(facts), gpu(target == "gpu") {}

  std::string render(const Schedule &schedule, std::vector<int> *actionLines);

  // Text.
  static inline const std::string kUnary = "(!transform.any_op) -> !transform.any_op";
  static inline const std::string kPair = "(!transform.any_op) -> (!transform.any_op, !transform.any_op)";
  static inline const std::string kFusePair =
      "(!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)";
  void line(const std::string &text) { lines.push_back(text); }
  /// The 1-based number of the next line.
  int nextLine() const { return static_cast<int>(lines.size()) + 1; }
  std::string fresh(llvm::StringRef base) { return "%" + base.str() + std::to_string(counter++); }
  /// A match of the entry function in `in`.
  std::string matchFunc(llvm::StringRef in);
  /// The op producing the payload's root, from `returnOp` (a handle to func.return): through the reshapes
  /// between the root and the return (emitted as lines), then `get_producer_of_operand` (returned, unemitted).
  std::string rootProducer(llvm::StringRef returnOp);
  /// A handle to the bufferized payload's gpu.launch ops (for the fragments on the mapped kernel).
  std::string matchLaunches();
  /// "[#gpu.block<y>, #gpu.block<x>]" for the tiled loops of `sizes` (last tiled loop -> x).
  static std::string mapping(llvm::ArrayRef<int64_t> sizes, llvm::StringRef kind);

  /// A Loops-point action's fragment, through its definition (also for the fixed schedules of split's and
  /// split_k's second kernels).
  void renderLoopAction(size_t index, const Schedule &schedule);
  /// The ops named `opNames` (a quoted, comma-separated list; none: skip) in `in` in their generic form, then
  /// every generic's unit dims folded away (rank-reducing slices).
  void renderFoldUnitDims(const std::string &opNames, const std::string &in);
  /// split's row kernel on the root: one row per block over `lanes` lanes.
  void renderRowKernel(int64_t lanes);
  /// split_k's second kernel: the sum of the partials.
  void renderPartialsSum();
  /// A kernel of its own for the linalg.transpose `transpose` of a [outer, inner, C] (or [inner, C]) result
  /// `shape`: 16-byte vectors along both sides where the extents allow (kernelsBefore gets its block).
  void renderTransposeKernel(const std::string &transpose, llvm::ArrayRef<int64_t> shape);

  // State the fragments share.
  const PayloadFacts payloadFacts; ///< The payload's.
  PayloadFacts facts;              ///< The op the actions schedule: the root's; after a kernel split, the op it leaves.
  const bool gpu;
  std::string root, func, inner, blockLoop, threadLoop, kLoop;
  std::string producerAttr = "kforge.producer"; ///< What fuse fuses: the marked producers.
  bool leftoverPasses = true;                   ///< fuse's extra passes for producers used twice.
  bool vectorized = false;                      ///< Some fragment vectorized: the finish lowers vectors.
  bool masked = false; ///< Vectorized under masks (partial tiles): the finish lowers the masks.
  /// The blocks of the kernels a split renders with fixed schedules, in program order before and after the one
  /// the schedule's actions size (split_rows' partials and channels_last's transposes before it; split's row
  /// kernel and split_k's sum after it).
  std::vector<std::vector<int64_t>> kernelsBefore, kernelsAfter;
  bool splitKSchedule = false;                  ///< The schedule starts with split_k.

private:
  /// The matcher and marker of the op stage computes as its implicit GEMM (a convolution: kforge.implicit_gemm).
  void renderImplicitGemmMatcher();
  void renderProducerMatchers(bool split);
  void renderKernelLoopMatcher();
  void renderOnEachGeneric(const std::string &op);
  void renderFoldUnitBatch();
  void renderFinish(const Schedule &schedule);

  std::vector<std::string> lines;
  int counter = 0;
};

} // namespace kforge::tune

#endif // KFORGE_LIB_TUNE_RENDERER_H
