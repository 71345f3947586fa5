//===- LowerSubgroupReduce.cpp - gpu.subgroup_reduce to shuffles ----------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGELOWERSUBGROUPREDUCE
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct LowerSubgroupReducePass : kforge::impl::KforgeLowerSubgroupReduceBase<LowerSubgroupReducePass> {
  void runOnOperation() override {
    constexpr unsigned kWarp = 32;
    RewritePatternSet patterns(&getContext());
    populateGpuBreakDownSubgroupReducePatterns(patterns, /*maxShuffleBitwidth=*/32, /*benefit=*/2);
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, kWarp);
    populateGpuLowerClusteredSubgroupReduceToShufflePatterns(patterns, kWarp);
    // Block-wide rows (distribute_rows_to_lanes beyond 32 lanes): uniform gpu.all_reduce in kernels, to
    // shuffles within each warp and a shared-memory step across the warps.
    populateGpuAllReducePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
