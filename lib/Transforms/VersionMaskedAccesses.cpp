//===- VersionMaskedAccesses.cpp - an unmasked path for all-on masks ------===//
//
// See the pass description in Passes.td: each masked 1-D vector access in a kernel runs unmasked when its
// mask is all on (the full tiles), masked otherwise (the partial tiles at a loop's end).
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEVERSIONMASKEDACCESSES
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {

/// Whether every lane of the 1-D `mask` is on.
Value allOn(OpBuilder &b, Location loc, Value mask) {
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::AND, mask).getResult();
}

/// `op` (a masked access whose mask is `mask`) under scf.if: `unmasked` builds the access without the mask in
/// the then-branch; the else-branch is `op` itself, moved.
void version(Operation *op, Value mask, llvm::function_ref<Value(OpBuilder &)> unmasked) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value all = allOn(b, loc, mask);
  TypeRange results = op->getResultTypes();
  auto ifOp = scf::IfOp::create(b, loc, results, all, /*withElseRegion=*/true);
  Block *thenBlock = ifOp.thenBlock(), *elseBlock = ifOp.elseBlock();
  auto terminated = [](Block *block) { return !block->empty() && block->back().hasTrait<OpTrait::IsTerminator>(); };
  if (results.empty()) {
    // The builder gave both blocks their (empty) yield.
    OpBuilder then = terminated(thenBlock) ? OpBuilder::atBlockTerminator(thenBlock) : OpBuilder::atBlockEnd(thenBlock);
    unmasked(then);
    if (!terminated(thenBlock))
      scf::YieldOp::create(then, loc);
    if (terminated(elseBlock))
      op->moveBefore(elseBlock->getTerminator());
    else {
      op->moveBefore(elseBlock, elseBlock->end());
      OpBuilder otherwise = OpBuilder::atBlockEnd(elseBlock);
      scf::YieldOp::create(otherwise, loc);
    }
    return;
  }
  OpBuilder then = OpBuilder::atBlockEnd(thenBlock);
  scf::YieldOp::create(then, loc, unmasked(then));
  op->getResult(0).replaceAllUsesWith(ifOp.getResult(0));
  op->moveBefore(elseBlock, elseBlock->end());
  OpBuilder otherwise = OpBuilder::atBlockEnd(elseBlock);
  scf::YieldOp::create(otherwise, loc, op->getResult(0));
}

bool oneDimensional(VectorType type) { return type.getRank() == 1 && !type.isScalable(); }

struct VersionMaskedAccessesPass : kforge::impl::KforgeVersionMaskedAccessesBase<VersionMaskedAccessesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> accesses;
    getOperation().walk([&](Operation *op) {
      if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
        if (read.getMask() && oneDimensional(read.getVectorType()) && isa<MemRefType>(read.getShapedType()))
          accesses.push_back(op);
      } else if (auto write = dyn_cast<vector::TransferWriteOp>(op)) {
        if (write.getMask() && oneDimensional(write.getVectorType()) && isa<MemRefType>(write.getShapedType()))
          accesses.push_back(op);
      } else if (auto load = dyn_cast<vector::MaskedLoadOp>(op)) {
        if (oneDimensional(load.getVectorType()))
          accesses.push_back(op);
      } else if (auto store = dyn_cast<vector::MaskedStoreOp>(op)) {
        if (oneDimensional(store.getVectorType()))
          accesses.push_back(op);
      }
    });
    for (Operation *op : accesses) {
      if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
        version(op, read.getMask(), [&](OpBuilder &b) -> Value {
          return vector::TransferReadOp::create(b, read.getLoc(), read.getVectorType(), read.getBase(),
                                                read.getIndices(), read.getPermutationMapAttr(), read.getPadding(),
                                                /*mask=*/Value(), read.getInBoundsAttr())
              .getResult();
        });
      } else if (auto write = dyn_cast<vector::TransferWriteOp>(op)) {
        version(op, write.getMask(), [&](OpBuilder &b) -> Value {
          vector::TransferWriteOp::create(b, write.getLoc(), write.getVector(), write.getBase(), write.getIndices(),
                                          write.getPermutationMapAttr(), /*mask=*/Value(), write.getInBoundsAttr());
          return Value();
        });
      } else if (auto load = dyn_cast<vector::MaskedLoadOp>(op)) {
        version(op, load.getMask(), [&](OpBuilder &b) -> Value {
          return vector::LoadOp::create(b, load.getLoc(), load.getVectorType(), load.getBase(), load.getIndices())
              .getResult();
        });
      } else if (auto store = dyn_cast<vector::MaskedStoreOp>(op)) {
        version(op, store.getMask(), [&](OpBuilder &b) -> Value {
          vector::StoreOp::create(b, store.getLoc(), store.getValueToStore(), store.getBase(), store.getIndices());
          return Value();
        });
      }
    }
  }
};

} // namespace
