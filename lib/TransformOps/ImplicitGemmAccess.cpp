//===- ImplicitGemmAccess.cpp - a block's implicit GEMM, element by element -===//

#include "ImplicitGemmAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

FailureOr<kforge::ImplicitGemmPlan> kforge::planImplicitGemmLoops(linalg::LinalgOp op, ArrayRef<int64_t> serialLoops,
                                                                  std::string &why) {
  if (!op.hasPureBufferSemantics()) {
    why = "expected a linalg op on memrefs (after bufferization)";
    return failure();
  }
  FailureOr<kforge::ImplicitGemm> gemm = kforge::analyzeImplicitGemm(op, why);
  if (failed(gemm))
    return failure();
  ImplicitGemmPlan plan;
  plan.op = op;
  plan.gemm = *gemm;
  plan.c = op.getDpsInits()[0];
  plan.outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  plan.extents = op.getStaticLoopRanges();
  plan.sizes.assign(plan.extents.size(), Value());
  for (auto [d, extent] : llvm::enumerate(plan.extents)) {
    if (!ShapedType::isDynamic(extent))
      continue;
    // A partial block tile: a parallel loop whose size (the output's) is bounded by its block tile.
    std::optional<unsigned> dim = plan.outMap.getResultPosition(getAffineDimExpr(d, op->getContext()));
    Value size = dim ? kforge::dynamicSize(plan.c, *dim) : Value();
    std::optional<int64_t> bound = size ? kforge::constantUpperBound(size) : std::nullopt;
    if (!bound) {
      why = "loop " + std::to_string(d) +
            " has a dynamic size that is not a partial block tile of the output (bounded by a constant)";
      return failure();
    }
    plan.extents[d] = *bound;
    plan.sizes[d] = size;
  }
  for (int64_t d : serialLoops) {
    if (d < 0 || d >= static_cast<int64_t>(plan.extents.size()) || plan.gemm.roles[d] == kforge::GemmRole::K ||
        llvm::is_contained(plan.serialLoops, d)) {
      why = "serial_loops: " + std::to_string(d) + " is not a parallel loop of the op (or is named twice)";
      return failure();
    }
    plan.serialLoops.push_back(d);
    plan.serialPositions *= plan.extents[d];
  }
  for (auto [d, role] : llvm::enumerate(plan.gemm.roles)) {
    int64_t loop = static_cast<int64_t>(d), extent = plan.extents[d];
    if (llvm::is_contained(plan.serialLoops, loop))
      continue;
    switch (role) {
    case kforge::GemmRole::K:
      plan.kLoops.push_back(loop);
      plan.k *= extent;
      break;
    case kforge::GemmRole::M:
      plan.mLoops.push_back(loop);
      plan.m *= extent;
      break;
    case kforge::GemmRole::N:
      plan.nLoops.push_back(loop);
      plan.n *= extent;
      break;
    case kforge::GemmRole::Batch:
      if (extent != 1) {
        why = "loop " + std::to_string(d) + " (" + std::to_string(extent) +
              " wide) is read by both multiplicands or by neither: tile it by 1 or walk it serially (serial_loops)";
        return failure();
      }
      break;
    }
  }
  if (plan.mLoops.empty() || plan.nLoops.empty()) {
    why = std::string("serial_loops leaves the GEMM no ") + (plan.mLoops.empty() ? "row (M)" : "column (N)") + " loop";
    return failure();
  }
  return plan;
}

void kforge::makeInnermostK(ImplicitGemmPlan &plan, int64_t loop) {
  auto at = llvm::find(plan.kLoops, loop);
  if (at != plan.kLoops.end())
    std::rotate(at, at + 1, plan.kLoops.end());
}

using kforge::ImplicitGemmAccess;

SmallVector<Value> ImplicitGemmAccess::delinearize(Value linear, ArrayRef<int64_t> loops) {
  SmallVector<Value> found;
  int64_t inner = 1;
  for (int64_t d : loops)
    inner *= access.extents[d];
  AffineExpr x = getAffineDimExpr(0, ctx);
  for (auto [i, d] : llvm::enumerate(loops)) {
    inner /= access.extents[d];
    AffineExpr e = x.floorDiv(inner);
    found.push_back(apply(i == 0 ? e : e % access.extents[d], linear));
  }
  return found;
}

Value ImplicitGemmAccess::clampIndex(Value i, int64_t extent) {
  return affine::AffineMinOp::create(
      b, loc, AffineMap::get(1, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(extent - 1, ctx)}, ctx),
      ValueRange{i});
}

SmallVector<Value> ImplicitGemmAccess::positions(const Coord &at, bool clamped) {
  SmallVector<Value> where(access.extents.size());
  auto place = [&](Value linear, int64_t constant, ArrayRef<int64_t> loops, int64_t limit, bool padded) {
    if (!linear)
      return;
    bool shift = constant && access.extents[loops.back()] % group == 0;
    if (constant && !shift)
      linear = add(linear, constant);
    if (clamped && padded)
      linear = clampIndex(linear, limit);
    SmallVector<Value> found = delinearize(linear, loops);
    if (shift) {
      found.back() = add(found.back(), constant);
      if (clamped && padded) // (a clamped group start need not be a multiple of the group)
        found.back() = clampIndex(found.back(), access.extents[loops.back()]);
    }
    for (auto [d, position] : llvm::zip(loops, found))
      where[d] = clamped ? kforge::clampToExtent(b, loc, position, access.sizes[d]) : position;
  };
  place(at.row, at.rowAdd, access.mLoops, access.m, access.mPadded != access.m);
  place(at.col, at.colAdd, access.nLoops, access.n, access.nPadded != access.n);
  place(at.k, at.kAdd, access.kLoops, access.k, access.k % access.blockK != 0);
  if (at.kInTile) // (kTileCoord: the innermost K loop is whole tiles long, so no carry leaves it)
    where[access.kLoops.back()] =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx)),
                                      ValueRange{where[access.kLoops.back()], at.kInTile});
  for (auto [d, position] : llvm::zip(access.serialLoops, serial))
    where[d] = position;
  Value zero;
  for (Value &position : where)
    if (!position)
      position = zero ? zero : (zero = index(0));
  return where;
}

Value ImplicitGemmAccess::stored(Value row, Value col, ArrayRef<Value> at) {
  Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
  auto both = [&](Value x, Value bound) {
    ok = arith::AndIOp::create(b, loc, ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, bound));
  };
  if (access.mPadded != access.m)
    both(row, index(access.m));
  if (access.nPadded != access.n)
    both(col, index(access.n));
  for (auto [position, size] : llvm::zip(at, access.sizes))
    if (size)
      both(position, size);
  return ok;
}

Value ImplicitGemmAccess::evaluate(Value value, ArrayRef<Value> at, DenseMap<Value, Value> &done) {
  if (Value known = done.lookup(value))
    return known;
  Block *body = access.op.getBlock();
  Value result;
  if (auto arg = dyn_cast<BlockArgument>(value); arg && arg.getOwner() == body) {
    OpOperand *operand = access.op.getMatchingOpOperand(arg);
    Value source = operand->get();
    if (!isa<MemRefType>(source.getType())) {
      result = source; // a scalar input
    } else {
      SmallVector<Value> indices;
      AffineMap map = access.op.getMatchingIndexingMap(operand);
      for (AffineExpr expr : map.getResults())
        indices.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, expr), at));
      result = memref::LoadOp::create(b, loc, source, indices);
    }
  } else if (Operation *def = value.getDefiningOp(); !def || def->getBlock() != body) {
    result = value; // defined outside the body
  } else if (auto position = dyn_cast<linalg::IndexOp>(def)) {
    result = at[position.getDim()];
  } else {
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, evaluate(operand, at, done));
    Operation *clone = b.clone(*def, mapping);
    for (auto [old, now] : llvm::zip(def->getResults(), clone->getResults()))
      done[old] = now;
    result = clone->getResult(cast<OpResult>(value).getResultNumber());
  }
  done[value] = result;
  return result;
}

ImplicitGemmAccess::Read ImplicitGemmAccess::evaluateRead(Value multiplicand, ArrayRef<Value> at,
                                                          DenseMap<Value, Value> &done) {
  Read read;
  Value value = multiplicand;
  if (auto select = value.getDefiningOp<arith::SelectOp>()) {
    read.valid = evaluate(select.getCondition(), at, done);
    value = select.getTrueValue();
  }
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    OpOperand *operand = access.op.getMatchingOpOperand(arg);
    read.source = operand->get();
    AffineMap map = access.op.getMatchingIndexingMap(operand);
    for (AffineExpr expr : map.getResults())
      read.indices.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, expr), at));
    return read;
  }
  auto load = value.getDefiningOp<memref::LoadOp>();
  read.source = evaluate(load.getMemRef(), at, done);
  for (Value position : load.getIndices())
    read.indices.push_back(evaluate(position, at, done));
  return read;
}

ImplicitGemmAccess::Coord ImplicitGemmAccess::kTileCoord(Value kInTile, Value kOff) {
  Coord at;
  if (access.blockK > 0 && !access.kLoops.empty() && access.extents[access.kLoops.back()] % access.blockK == 0 &&
      !access.sizes[access.kLoops.back()]) {
    at.k = kOff;
    at.kInTile = kInTile;
  } else {
    at.k = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(2, 0, getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx)), ValueRange{kInTile, kOff});
  }
  return at;
}

Value ImplicitGemmAccess::withinK(const Coord &at) {
  if (access.k % access.blockK == 0)
    return Value();
  Value kIndex = at.kAdd ? add(at.k, at.kAdd) : at.k;
  if (at.kInTile)
    kIndex =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx)),
                                      ValueRange{kIndex, at.kInTile});
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kIndex, index(access.k));
}

SmallVector<Value> ImplicitGemmAccess::outIndices(ArrayRef<Value> at) {
  SmallVector<Value> indices;
  for (AffineExpr result : access.outMap.getResults())
    indices.push_back(at[cast<AffineDimExpr>(result).getPosition()]);
  return indices;
}

void ImplicitGemmAccess::storeIf(Value ok, Value value, Value target, ValueRange indices) {
  if (!ok) {
    memref::StoreOp::create(b, loc, value, target, indices);
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  memref::StoreOp::create(b, loc, value, target, indices);
}

Value ImplicitGemmAccess::initialValue(const Coord &at) {
  if (access.neighbours.fill)
    return access.neighbours.fill.getDpsInputs()[0];
  Value initial = access.neighbours.initCopy ? access.neighbours.initCopy.getSource() : access.c;
  SmallVector<Value> indices = outIndices(positions(at, /*clamped=*/true));
  if (access.neighbours.initGeneric)
    return kforge::epilogueElement(b, loc, access.neighbours.initGeneric, access.c, Value(), indices);
  return memref::LoadOp::create(b, loc, initial, indices);
}

void ImplicitGemmAccess::forEachSerialPosition(function_ref<void()> gemm) {
  if (access.serialPositions == 1)
    return gemm();
  auto loop = scf::ForOp::create(b, loc, index(0), index(access.serialPositions), index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  serial = delinearize(loop.getInductionVar(), access.serialLoops);
  gemm();
}
