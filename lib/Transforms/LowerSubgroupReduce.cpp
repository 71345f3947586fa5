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
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
