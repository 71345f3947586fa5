//===- SimtTile.cpp - a block's SIMT GEMM tile: thread shares and K steps --===//

#include "SimtTile.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

std::pair<Value, Value> kforge::simt::vectorPosition(OpBuilder &b, Location loc, Value thread, int64_t threads,
                                                     int64_t first, int64_t rows, int64_t cols) {
  MLIRContext *ctx = b.getContext();
  AffineExpr d = getAffineDimExpr(0, ctx);
  auto apply = [&](AffineExpr e, Value x) -> Value {
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, e), ValueRange{x});
  };
  int64_t perRow = cols / kVector, vectors = rows * perRow;
  if (first + threads <= vectors)
    return {apply((d + first).floorDiv(perRow), thread), apply(((d + first) % perRow) * kVector, thread)};
  Value v = affine::AffineMinOp::create(
      b, loc, AffineMap::get(1, 0, {d + first, getAffineConstantExpr(vectors - 1, ctx)}, ctx), ValueRange{thread});
  return {apply(d.floorDiv(perRow), v), apply((d % perRow) * kVector, v)};
}

SmallVector<Value> kforge::simt::multiplyStep(OpBuilder &b, Location loc, Value aShared, Value bShared, Value stage,
                                              int64_t kk, int64_t tileM, int64_t tileN,
                                              llvm::function_ref<Value(int64_t)> row,
                                              llvm::function_ref<Value(int64_t)> col, SmallVector<Value> acc) {
  SmallVector<Value> rows, cols;
  for (int64_t i = 0; i < tileM; i += kVector)
    rows.push_back(row(i));
  for (int64_t j = 0; j < tileN; j += kVector)
    cols.push_back(col(j));
  auto vec = VectorType::get({kVector}, b.getF32Type());
  Value kIndex = arith::ConstantIndexOp::create(b, loc, kk);
  auto read = [&](Value shared, ValueRange at) {
    SmallVector<Value> values;
    for (Value position : at) {
      Value v = vector::LoadOp::create(b, loc, vec, shared, ValueRange{stage, kIndex, position});
      for (int64_t e = 0; e < kVector; ++e)
        values.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e}));
    }
    return values;
  };
  SmallVector<Value> aValues = read(aShared, rows), bValues = read(bShared, cols);
  for (size_t i = 0; i < aValues.size(); ++i)
    for (size_t j = 0; j < bValues.size(); ++j) {
      Value &slot = acc[i * bValues.size() + j];
      slot = math::FmaOp::create(b, loc, aValues[i], bValues[j], slot);
    }
  return acc;
}
