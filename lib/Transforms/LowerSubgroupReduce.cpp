//===- LowerSubgroupReduce.cpp - gpu.subgroup_reduce to shuffles ----------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGELOWERSUBGROUPREDUCE
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
constexpr int64_t kWarp = 32;

/// The value that leaves any float `kind` reduction unchanged, if `kind` is one this lowering handles.
std::optional<TypedAttr> neutralFloat(gpu::AllReduceOperation kind, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  switch (kind) {
  case gpu::AllReduceOperation::ADD:
    return FloatAttr::get(type, 0.0);
  case gpu::AllReduceOperation::MUL:
    return FloatAttr::get(type, 1.0);
  case gpu::AllReduceOperation::MAXIMUMF:
  case gpu::AllReduceOperation::MAXNUMF:
    return FloatAttr::get(type, APFloat::getInf(semantics, /*Negative=*/true));
  case gpu::AllReduceOperation::MINIMUMF:
  case gpu::AllReduceOperation::MINNUMF:
    return FloatAttr::get(type, APFloat::getInf(semantics, /*Negative=*/false));
  default:
    return std::nullopt;
  }
}

/// Whether `block` lies on a cycle of its region's control flow (then an op in it may run more than once).
bool onCycle(Block *block) {
  SmallVector<Block *> work(block->getSuccessors().begin(), block->getSuccessors().end());
  llvm::SmallPtrSet<Block *, 16> seen;
  while (!work.empty()) {
    Block *next = work.pop_back_val();
    if (next == block)
      return true;
    if (seen.insert(next).second)
      work.append(next->getSuccessors().begin(), next->getSuccessors().end());
  }
  return false;
}

/// A uniform float gpu.all_reduce over a block of whole warps, with one barrier: each warp reduces its values
/// by shuffles and lane 0 writes the warp's partial to a workgroup buffer of the op's own; after the barrier
/// every warp reads all the partials and reduces them by shuffles itself. Upstream's lowering has warp 0
/// alone reduce the partials and write the total back, which costs a second barrier (and a branch between
/// full and partial warps that whole warps never need). The buffer is written once per kernel run (the op is
/// on no control-flow cycle), so no later reduction can overwrite it while a slow warp still reads it.
struct OneBarrierAllReduce : OpRewritePattern<gpu::AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(gpu::AllReduceOp op, PatternRewriter &rewriter) const override {
    auto func = op->getParentOfType<gpu::GPUFuncOp>();
    std::optional<gpu::AllReduceOperation> kind = op.getOp();
    auto type = dyn_cast<FloatType>(op.getType());
    if (!func || !func.isKernel() || !op.getUniform() || !kind || !type || type.getWidth() > 32 ||
        op->getParentRegion() != &func.getBody() || onCycle(op->getBlock()))
      return rewriter.notifyMatchFailure(op, "not a uniform float all-reduce of a kernel, run once");
    std::optional<TypedAttr> neutral = neutralFloat(*kind, type);
    std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize();
    if (!neutral || !known)
      return rewriter.notifyMatchFailure(op, "no neutral element, or no known block size");
    ArrayRef<int32_t> block = *known;
    int64_t threads = int64_t(block[0]) * block[1] * block[2];
    if (threads % kWarp != 0 || threads < kWarp || threads > 1024)
      return rewriter.notifyMatchFailure(op, "the block is not whole warps");
    int64_t warps = threads / kWarp;
    // The partials are read by clusters of the next power of two lanes, so every lane gets the total.
    int64_t cluster = llvm::PowerOf2Ceil(warps);

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
    BlockArgument buffer =
        func.addWorkgroupAttribution(MemRefType::get({warps}, type, MemRefLayoutAttrInterface{}, workgroup), loc);

    // The thread's linear index in the block, its lane and its warp.
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); };
    Value linear = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    if (block[1] * block[2] > 1) {
      Value y = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::y);
      Value z = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::z);
      Value yz = arith::AddIOp::create(rewriter, loc, y, arith::MulIOp::create(rewriter, loc, z, index(block[1])));
      linear = arith::AddIOp::create(rewriter, loc, linear, arith::MulIOp::create(rewriter, loc, yz, index(block[0])));
    }
    Value lane = arith::RemUIOp::create(rewriter, loc, linear, index(kWarp));
    Value warp = arith::DivUIOp::create(rewriter, loc, linear, index(kWarp));
    Value warpTotal = gpu::SubgroupReduceOp::create(rewriter, loc, op.getValue(), *kind, /*uniform=*/true);

    // Lane 0 of each warp writes the warp's partial; then the barrier.
    Block *before = rewriter.getInsertionBlock();
    Block *after = rewriter.splitBlock(before, rewriter.getInsertionPoint());
    Block *store = rewriter.createBlock(after);
    rewriter.setInsertionPointToEnd(before);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane, index(0));
    cf::CondBranchOp::create(rewriter, loc, first, store, after);
    rewriter.setInsertionPointToEnd(store);
    memref::StoreOp::create(rewriter, loc, warpTotal, buffer, ValueRange{warp});
    cf::BranchOp::create(rewriter, loc, after);
    rewriter.setInsertionPointToStart(after);
    gpu::BarrierOp::create(rewriter, loc);

    // Lane l reads partial l mod cluster (the neutral element past the last warp) and its cluster reduces them.
    Value slot = arith::RemUIOp::create(rewriter, loc, lane, index(cluster));
    Value partial;
    if (cluster == warps) {
      partial = memref::LoadOp::create(rewriter, loc, buffer, ValueRange{slot});
    } else {
      Value valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, slot, index(warps));
      Value safeSlot = arith::SelectOp::create(rewriter, loc, valid, slot, index(0));
      Value identity = arith::ConstantOp::create(rewriter, loc, *neutral);
      partial = arith::SelectOp::create(rewriter, loc, valid,
                                        memref::LoadOp::create(rewriter, loc, buffer, ValueRange{safeSlot}), identity);
    }
    std::optional<uint32_t> clusterSize;
    if (cluster < kWarp)
      clusterSize = static_cast<uint32_t>(cluster);
    Value total = gpu::SubgroupReduceOp::create(rewriter, loc, partial, *kind, /*uniform=*/true, clusterSize);
    rewriter.replaceOp(op, total);
    return success();
  }
};

/// A barrier right before a kernel's return orders no later access: every thread's next step is its exit.
struct DropBarrierBeforeReturn : OpRewritePattern<gpu::BarrierOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(gpu::BarrierOp op, PatternRewriter &rewriter) const override {
    if (!isa_and_nonnull<gpu::ReturnOp>(op->getNextNode()))
      return rewriter.notifyMatchFailure(op, "not followed by the return");
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerSubgroupReducePass : kforge::impl::KforgeLowerSubgroupReduceBase<LowerSubgroupReducePass> {
  void runOnOperation() override {
    // Block-wide rows (distribute_rows_to_lanes beyond 32 lanes): uniform gpu.all_reduce in kernels, to
    // shuffles within each warp and a shared-memory step across the warps; one barrier where the block is
    // whole warps of a known size. These go first: upstream's all-reduce pattern matches the whole gpu.func
    // and would take every all-reduce in it.
    RewritePatternSet oneBarrier(&getContext());
    oneBarrier.add<OneBarrierAllReduce, DropBarrierBeforeReturn>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(oneBarrier))))
      return signalPassFailure();
    // The rest: upstream's all-reduce lowering (two barriers), and every subgroup reduction to shuffles.
    RewritePatternSet patterns(&getContext());
    populateGpuBreakDownSubgroupReducePatterns(patterns, /*maxShuffleBitwidth=*/32, /*benefit=*/3);
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, kWarp, /*shuffleBitwidth=*/32, /*benefit=*/2);
    populateGpuLowerClusteredSubgroupReduceToShufflePatterns(patterns, kWarp, /*shuffleBitwidth=*/32, /*benefit=*/2);
    // A 64-bit value the 32-bit forms cannot take (an f64 statistic: torch-mlir's group norm sums in f64), shuffled
    // as i64, each 64-bit shuffle then split into two 32-bit ones (populateGpuShufflePatterns).
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, kWarp, /*shuffleBitwidth=*/64, /*benefit=*/1);
    populateGpuLowerClusteredSubgroupReduceToShufflePatterns(patterns, kWarp, /*shuffleBitwidth=*/64, /*benefit=*/1);
    populateGpuShufflePatterns(patterns);
    populateGpuAllReducePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
