//===- UnrollStridedTransfers.cpp - strided 1-D transfers as scalar accesses ===//
//
// See the pass description in Passes.td: a 1-D vector transfer over a memref dimension with a non-unit stride
// becomes one scalar access per element at a static vector position, so the vector stays in registers.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEUNROLLSTRIDEDTRANSFERS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// The transfer's memref when it is one this pass rewrites: unmasked, in bounds, a static 1-D vector of at
/// most `maxElements`, the minor-identity map, and a memref whose innermost stride is not 1; or a 0-D vector
/// (one element: a lane's single column of a row, `vector<f32>`), which the later lowerings leave as a transfer.
static MemRefType rewritable(VectorTransferOpInterface transfer, int64_t maxElements) {
  auto memref = dyn_cast<MemRefType>(transfer.getShapedType());
  VectorType vector = transfer.getVectorType();
  if (!memref || vector.isScalable() || transfer.getMask() ||
      !isa<FloatType, IntegerType, IndexType>(vector.getElementType()))
    return {};
  if (vector.getRank() == 0)
    return memref;
  if (vector.getRank() != 1 || vector.getNumElements() > maxElements)
    return {};
  if (!transfer.getPermutationMap().isMinorIdentity() || !transfer.isDimInBounds(0))
    return {};
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) || strides.empty() || strides.back() == 1)
    return {};
  return memref;
}

/// The indices of element `i`: the transfer's indices with `i` added to the innermost one.
static SmallVector<Value> elementIndices(OpBuilder &b, Location loc, ValueRange indices, int64_t i) {
  SmallVector<Value> result(indices.begin(), indices.end());
  if (i != 0)
    result.back() = arith::AddIOp::create(b, loc, result.back(), arith::ConstantIndexOp::create(b, loc, i));
  return result;
}

namespace {
struct UnrollStridedTransfersPass : kforge::impl::KforgeUnrollStridedTransfersBase<UnrollStridedTransfersPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<vector::TransferReadOp> reads;
    SmallVector<vector::TransferWriteOp> writes;
    getOperation().walk([&](Operation *op) {
      if (auto read = dyn_cast<vector::TransferReadOp>(op); read && rewritable(read, maxElements))
        reads.push_back(read);
      if (auto write = dyn_cast<vector::TransferWriteOp>(op); write && rewritable(write, maxElements))
        writes.push_back(write);
    });
    for (vector::TransferReadOp read : reads) {
      OpBuilder b(read);
      Location loc = read.getLoc();
      SmallVector<Value> elements;
      for (int64_t i = 0, n = read.getVectorType().getNumElements(); i < n; ++i)
        elements.push_back(
            memref::LoadOp::create(b, loc, read.getBase(), elementIndices(b, loc, read.getIndices(), i)));
      read.replaceAllUsesWith(vector::FromElementsOp::create(b, loc, read.getVectorType(), elements).getResult());
      read.erase();
    }
    for (vector::TransferWriteOp write : writes) {
      OpBuilder b(write);
      Location loc = write.getLoc();
      for (int64_t i = 0, n = write.getVectorType().getNumElements(); i < n; ++i) {
        Value element = write.getVectorType().getRank() == 0
                            ? vector::ExtractOp::create(b, loc, write.getVector(), ArrayRef<int64_t>{}).getResult()
                            : vector::ExtractOp::create(b, loc, write.getVector(), i).getResult();
        memref::StoreOp::create(b, loc, element, write.getBase(), elementIndices(b, loc, write.getIndices(), i));
      }
      write.erase();
    }
  }
};
} // namespace
