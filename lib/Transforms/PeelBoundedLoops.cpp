//===- PeelBoundedLoops.cpp - a loop of q or q + 1 iterations as q static ones and a guarded last one ===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEPEELBOUNDEDLOOPS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// The constant `bound` of `value` (its smallest, or with UB its largest, possible value), if it has one.
static std::optional<int64_t> constantBound(Value value, presburger::BoundType type) {
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      type, ValueBoundsConstraintSet::Variable(value), /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (failed(bound))
    return std::nullopt;
  return *bound;
}

/// A main loop of at most this many iterations over a private array is unrolled here: LLVM's threshold leaves a
/// 15-iteration loop computing exp() rolled (by 3) and a 49-iteration one (a 50257-wide row over 1024 lanes)
/// whole, and its array then stays in local memory. 128: what a thread's 255 registers can hold beside its
/// other values; a larger array spills whatever the unrolling.
constexpr int64_t kFullUnrollLimit = 128;

/// Whether `loop` reads or writes a thread's private array (an alloca, possibly through views): only with every
/// index static does it become registers.
static bool touchesPrivateArray(scf::ForOp loop) {
  auto isPrivate = [](Value memref) {
    while (Operation *def = memref.getDefiningOp()) {
      if (isa<memref::AllocaOp>(def))
        return true;
      if (!isa<memref::SubViewOp, memref::CastOp, memref::ReinterpretCastOp, memref::ExpandShapeOp,
               memref::CollapseShapeOp>(def))
        return false;
      memref = def->getOperand(0);
    }
    return false;
  };
  WalkResult found = loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op); load && isPrivate(load.getMemRef()))
      return WalkResult::interrupt();
    if (auto store = dyn_cast<memref::StoreOp>(op); store && isPrivate(store.getMemRef()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Splits `loop` (constant lower bound and step, a dynamic upper bound that takes it through either q or q + 1
/// iterations, q > 0 known) into a loop of q iterations with a constant upper bound, followed by its last
/// iteration under an `scf.if`. Returns whether it did.
static bool peel(scf::ForOp loop, IRRewriter &rewriter) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !step || *step <= 0 || getConstantIntValue(loop.getUpperBound()))
    return false;
  std::optional<int64_t> fewest = constantBound(loop.getUpperBound(), presburger::BoundType::LB);
  std::optional<int64_t> most = constantBound(loop.getUpperBound(), presburger::BoundType::UB);
  if (!fewest || !most || *fewest <= *lower)
    return false;
  int64_t fullIterations = (*fewest - *lower) / *step;
  int64_t split = *lower + fullIterations * *step;
  // What is left runs at most once: from `split` the upper bound is at most one step away.
  if (fullIterations == 0 || *most > split + *step)
    return false;

  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Type indexType = loop.getInductionVar().getType();
  Value splitValue = arith::ConstantOp::create(rewriter, loc, rewriter.getIntegerAttr(indexType, split));
  auto full = cast<scf::ForOp>(rewriter.clone(*loop));
  full.getUpperBoundMutable().assign(splitValue);

  Value remains = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, splitValue, loop.getUpperBound());
  ValueRange carried = full.getResults();
  auto last = scf::IfOp::create(rewriter, loc, loop.getResultTypes(), remains, /*withElseRegion=*/!carried.empty());
  {
    OpBuilder::InsertionGuard guard(rewriter);
    // With results the blocks start empty; without, with the yield the body goes before.
    rewriter.setInsertionPointToStart(&last.getThenRegion().front());
    IRMapping mapping;
    mapping.map(loop.getInductionVar(), splitValue);
    mapping.map(loop.getRegionIterArgs(), carried);
    for (Operation &op : loop.getBody()->without_terminator())
      rewriter.clone(op, mapping);
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    if (!carried.empty()) {
      SmallVector<Value> yielded;
      for (Value value : yield.getOperands())
        yielded.push_back(mapping.lookupOrDefault(value));
      scf::YieldOp::create(rewriter, loc, yielded);
      rewriter.setInsertionPointToStart(&last.getElseRegion().front());
      scf::YieldOp::create(rewriter, loc, carried);
    }
  }
  rewriter.replaceOp(loop, last.getResults());
  if (fullIterations <= kFullUnrollLimit && touchesPrivateArray(full))
    (void)loopUnrollFull(full);
  return true;
}

namespace {
struct PeelBoundedLoopsPass : kforge::impl::KforgePeelBoundedLoopsBase<PeelBoundedLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) {
      if (kforge::isInsideGpuKernel(loop))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      peel(loop, rewriter);
  }
};
} // namespace
