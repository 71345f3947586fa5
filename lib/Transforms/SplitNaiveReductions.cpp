//===- SplitNaiveReductions.cpp - long reductions in two, for the naive GPU mapping -===//
//
// The naive GPU reference runs one thread per result point. A reduction with few results and a long reduced
// dimension (a loss over 2^29 elements: one thread, 20 s a run on an H100) would make every seed of a search
// wait on it. Upstream's linalg::splitReduction rewrites such an op as partial reductions over interleaved
// chunks (a parallel dimension of `ratio` threads per result) and a reduction of the partials, where it
// recognises the combiner and its neutral element; everything else is left to the naive mapping as it is.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGESPLITNAIVEREDUCTIONS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {

/// Below this many result points the naive mapping leaves most of a GPU idle.
constexpr int64_t kFewPoints = 4096;
/// A reduced dimension this long takes one thread long enough to matter (~1 ms at ~100 M elements/s).
constexpr int64_t kLongReduction = 65536;
/// Threads the split aims at: enough to keep a GPU's memory system busy.
constexpr int64_t kTargetThreads = 32768;

/// The largest divisor of `size` that is at most `limit` (1 if none is larger).
int64_t largestDivisorAtMost(int64_t size, int64_t limit) {
  for (int64_t d = std::min(size, limit); d > 1; --d)
    if (size % d == 0)
      return d;
  return 1;
}

/// How to split `op`'s reduction, or ratio 0 (leave it).
linalg::SplitReductionOptions splitFor(linalg::LinalgOp op) {
  linalg::SplitReductionOptions none;
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1)
    return none;
  // Upstream's split keeps a body's linalg.index as it was, so after it the index names the partial's chunk,
  // not the element: a loss that gathers each row's logit by its row index read the wrong rows (cross
  // entropy's naive reference disagreed with the CPU build by 4.6e-4 on an H100, where the CPU build agrees
  // with float64). Such an op stays whole: slower (one thread walks the reduction), but right.
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return none;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return none;
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  int64_t points = 1;
  for (auto [dim, size] : llvm::enumerate(ranges))
    if (dim != reductionDims[0])
      points *= size;
  int64_t length = ranges[reductionDims[0]];
  if (points >= kFewPoints || length < kLongReduction)
    return none;
  // Each chunk keeps at least ~1024 elements, so that the partials stay a small second reduction.
  int64_t ratio = largestDivisorAtMost(length, std::min(kTargetThreads / points, length / 1024));
  if (ratio <= 1)
    return none;
  // The new parallel dimension inner (element k * ratio + t goes to partial t: neighbouring threads read
  // neighbouring elements) and last among the partials' dimensions.
  linalg::SplitReductionOptions options;
  options.ratio = ratio;
  options.index = static_cast<unsigned>(op.getRank(op.getDpsInitOperand(0)));
  options.innerParallel = true;
  return options;
}

struct SplitNaiveReductionsPass : kforge::impl::KforgeSplitNaiveReductionsBase<SplitNaiveReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && splitFor(op).ratio > 1)
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      // A failure (no recognised combiner or neutral element) leaves the op unchanged: the naive mapping
      // takes it whole, slowly but correctly.
      (void)linalg::splitReduction(rewriter, op, [](linalg::LinalgOp candidate) { return splitFor(candidate); });
    }
  }
};

} // namespace
