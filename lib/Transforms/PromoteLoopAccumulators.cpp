//===- PromoteLoopAccumulators.cpp - a loop's accumulator in memory, as a loop-carried value ===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEPROMOTELOOPACCUMULATORS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// The allocation or argument a memref view is cut from.
static Value viewBase(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      memref = view.getViewSource();
    else if (isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      memref = def->getOperand(0);
    else
      break;
  }
  return memref;
}

/// An allocation: no other memref can alias it unless it is a view of it.
static bool isAllocation(Value base) {
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp, gpu::AllocOp>(base.getDefiningOp());
}

namespace {
/// A location the loop reads and then writes, once per iteration: `load` (possibly several) before `store`, at
/// the top of the loop's body, on loop-invariant indices of a memref cut from an allocation that nothing else in
/// the loop touches.
struct Accumulator {
  SmallVector<memref::LoadOp> loads;
  memref::StoreOp store;
};
} // namespace

/// The accumulators of `loop`, or none when the loop does anything but read and write memory (a call, a
/// barrier, an op with unknown effects).
static SmallVector<Accumulator> findAccumulators(scf::ForOp loop) {
  SmallVector<Value> touched; // every memref the loop reads or writes, nested ops included
  bool opaque = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return touched.push_back(load.getMemRef());
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return touched.push_back(store.getMemRef());
    if (isPure(op) || op->hasTrait<OpTrait::IsTerminator>() || isa<scf::ForOp, scf::IfOp>(op))
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || !effects.hasNoEffect())
      opaque = true;
  });
  if (opaque)
    return {};
  auto invariant = [&](Value v) { return loop.isDefinedOutsideOfLoop(v); };
  SmallVector<Accumulator> found;
  for (auto store : loop.getBody()->getOps<memref::StoreOp>()) {
    Value memref = store.getMemRef(), base = viewBase(memref);
    if (!isAllocation(base) || !invariant(memref) || !llvm::all_of(store.getIndices(), invariant))
      continue;
    // Nothing else of the allocation is touched in the loop but this location, in this block.
    Accumulator acc{{}, store};
    for (auto load : loop.getBody()->getOps<memref::LoadOp>())
      if (load.getMemRef() == memref && load.getIndices() == store.getIndices() && load->isBeforeInBlock(store))
        acc.loads.push_back(load);
    auto sameBase = llvm::count_if(touched, [&](Value other) { return viewBase(other) == base; });
    if (!acc.loads.empty() && sameBase == static_cast<int64_t>(acc.loads.size()) + 1)
      found.push_back(acc);
  }
  return found;
}

/// `loop` with each accumulator carried as a value: read before the loop, written after it.
static void promote(scf::ForOp loop, MutableArrayRef<Accumulator> accumulators, RewriterBase &rewriter) {
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> initial;
  for (Accumulator &acc : accumulators)
    initial.push_back(memref::LoadOp::create(rewriter, loop.getLoc(), acc.store.getMemRef(), acc.store.getIndices()));
  SmallVector<Value> stored;
  for (Accumulator &acc : accumulators)
    stored.push_back(acc.store.getValueToStore());
  FailureOr<LoopLikeOpInterface> grown =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
                                       [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return stored; });
  if (failed(grown))
    return;
  auto newLoop = cast<scf::ForOp>(grown->getOperation());
  unsigned first = newLoop.getNumRegionIterArgs() - accumulators.size();
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [i, acc] : llvm::enumerate(accumulators)) {
    Value carried = newLoop.getRegionIterArgs()[first + i];
    for (memref::LoadOp load : acc.loads) {
      rewriter.replaceAllUsesWith(load.getResult(), carried);
      rewriter.eraseOp(load);
    }
    memref::StoreOp::create(rewriter, acc.store.getLoc(), newLoop.getResult(first + i), acc.store.getMemRef(),
                            acc.store.getIndices());
    rewriter.eraseOp(acc.store);
  }
}

namespace {
struct PromoteLoopAccumulatorsPass : kforge::impl::KforgePromoteLoopAccumulatorsBase<PromoteLoopAccumulatorsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Loops of one iteration (a unit tile dimension, lowered) first become their body: their induction
    // variable would otherwise make the indices inside them look loop-variant.
    SmallVector<scf::ForOp> single;
    getOperation()->walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      if (kforge::isInsideGpuKernel(loop) && loop.getStaticTripCount() == 1)
        single.push_back(loop);
    });
    for (scf::ForOp loop : single)
      (void)loop.promoteIfSingleIteration(rewriter);
    // Innermost loops first: a promoted inner loop leaves its outer loop a read before it and a write after it.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      if (kforge::isInsideGpuKernel(loop))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      SmallVector<Accumulator> accumulators = findAccumulators(loop);
      if (!accumulators.empty())
        promote(loop, accumulators, rewriter);
    }
  }
};
} // namespace
