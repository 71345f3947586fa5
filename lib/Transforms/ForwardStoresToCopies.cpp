//===- ForwardStoresToCopies.cpp - a vector stored to scratch, then copied -===//
//
// See the pass description in Passes.td: a kernel's scratch buffer written whole by one vector store and
// then copied to its destination becomes one vector write to the destination, so the vector stays in
// registers instead of going through per-thread (local) memory.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEFORWARDSTORESTOCOPIES
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// The store that writes all of `scratch` when its only other users are `copy` (after the store, in its
/// block) and deallocations: a vector.store of as many elements as the buffer has, at index 0.
static vector::StoreOp wholeBufferStore(Value scratch, memref::CopyOp copy) {
  auto type = cast<MemRefType>(scratch.getType());
  vector::StoreOp store;
  for (Operation *user : scratch.getUsers()) {
    if (user == copy.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    auto candidate = dyn_cast<vector::StoreOp>(user);
    if (!candidate || store || candidate.getBase() != scratch)
      return {};
    store = candidate;
  }
  if (!store || store->getBlock() != copy->getBlock() || !store->isBeforeInBlock(copy))
    return {};
  VectorType vector = store.getVectorType();
  if (vector.getRank() != 1 || vector.getNumElements() != type.getNumElements() ||
      !llvm::all_of(store.getIndices(), [](Value i) { return matchPattern(i, m_Zero()); }))
    return {};
  return store;
}

namespace {
struct ForwardStoresToCopiesPass : kforge::impl::KforgeForwardStoresToCopiesBase<ForwardStoresToCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (kforge::isInsideGpuKernel(copy))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      Value scratch = copy.getSource();
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      auto type = dyn_cast<MemRefType>(scratch.getType());
      Operation *alloc = scratch.getDefiningOp();
      if (!alloc || !isa<memref::AllocOp, memref::AllocaOp>(alloc) || !type || !type.hasStaticShape() ||
          !target || target.getShape() != type.getShape() || !type.getLayout().isIdentity())
        continue;
      // The destination's innermost dimension takes the vector (its other dimensions are 1, as the
      // buffer's, for a 1-D vector to cover it).
      if (llvm::any_of(type.getShape().drop_back(), [](int64_t d) { return d != 1; }))
        continue;
      vector::StoreOp store = wholeBufferStore(scratch, copy);
      if (!store)
        continue;
      OpBuilder b(copy);
      Value zero = arith::ConstantIndexOp::create(b, copy.getLoc(), 0);
      SmallVector<Value> indices(target.getRank(), zero);
      vector::TransferWriteOp::create(b, copy.getLoc(), store.getValueToStore(), copy.getTarget(), indices,
                                      SmallVector<bool>{true});
      SmallVector<Operation *> dead(scratch.getUsers().begin(), scratch.getUsers().end());
      for (Operation *op : dead)
        op->erase();
      alloc->erase();
    }
  }
};
} // namespace
