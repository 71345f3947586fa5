//===- MapToGpuNaive.cpp - one thread per output point, one kernel per op -===//

#include "kforge/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEMAPTOGPUNAIVE
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

static constexpr int64_t kThreadsPerBlock = 256;

/// Loads (or for a scalar operand, forwards) the value of `operand` at iteration point `ivs`.
static Value loadOperand(OpBuilder &b, Location loc, linalg::LinalgOp op, OpOperand &operand, ValueRange ivs) {
  if (!isa<MemRefType>(operand.get().getType()))
    return operand.get();
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  return memref::LoadOp::create(b, loc, operand.get(), indices);
}

/// Emits, at `b`'s insertion point, the scalar body of `op` at the full iteration point `ivs`.
static void emitPoint(OpBuilder &b, Location loc, linalg::LinalgOp op, ValueRange ivs) {
  Block &body = op->getRegion(0).front();
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands())
    mapping.map(body.getArgument(operand.getOperandNumber()), loadOperand(b, loc, op, operand, ivs));
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  for (auto [value, init] : llvm::zip(yield.getValues(), op.getDpsInitsMutable())) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
    memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value), init.get(), indices);
  }
}

static LogicalResult mapOp(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return op.emitError() << "naive GPU mapping needs static loop bounds";
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> parallel, reduction;
  int64_t points = 1;
  for (auto [dim, iterator] : llvm::enumerate(iterators)) {
    if (iterator == utils::IteratorType::parallel) {
      parallel.push_back(dim);
      points *= ranges[dim];
    } else {
      reduction.push_back(dim);
    }
  }
  if (points == 0) {
    op->erase();
    return success();
  }

  Location loc = op.getLoc();
  OpBuilder b(op);
  auto index = [&](int64_t value) { return arith::ConstantIndexOp::create(b, loc, value).getResult(); };
  int64_t threads = std::min(points, kThreadsPerBlock);
  Value one = index(1);
  Value gridX = index(llvm::divideCeil(points, threads));
  Value blockX = index(threads);
  auto launch = gpu::LaunchOp::create(b, loc, gridX, one, one, blockX, one, one);
  b.setInsertionPointToEnd(&launch.getBody().front());
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, blockX), launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, index(points));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  gpu::TerminatorOp::create(b, loc);

  b.setInsertionPointToStart(&guard.getThenRegion().front());
  // Parallel indices from the linear thread id, the last parallel dimension fastest.
  SmallVector<Value> ivs(iterators.size());
  Value rest = linear;
  for (unsigned dim : llvm::reverse(parallel)) {
    Value size = index(ranges[dim]);
    ivs[dim] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  // Reduction loops run sequentially in the thread.
  for (unsigned dim : reduction) {
    auto loop = scf::ForOp::create(b, loc, index(0), index(ranges[dim]), index(1));
    ivs[dim] = loop.getInductionVar();
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  emitPoint(b, loc, op, ivs);
  op->erase();
  return success();
}

namespace {
struct MapToGpuNaivePass : kforge::impl::KforgeMapToGpuNaiveBase<MapToGpuNaivePass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!kforge::isInsideGpuKernel(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError() << "naive GPU mapping runs after bufferization (found an op on tensors)";
        return signalPassFailure();
      }
      if (failed(mapOp(op)))
        return signalPassFailure();
    }
  }
};
} // namespace
