//===- InvariantInputLoads.cpp - loads from read-only kernel buffers ------===//
//
// See the pass description in Passes.td: in a kernel that asked for read-only inputs, the loads from each
// pointer argument that the kernel only ever loads from are marked invariant, which NVPTX emits as ld.global.nc.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEINVARIANTINPUTLOADS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

static constexpr llvm::StringLiteral kReadOnlyInputs = "kforge.read_only_inputs";

/// The loads through `pointer` and the pointers derived from it by address arithmetic (getelementptr on it,
/// address-space casts), when those loads are all that is done with them; failure when any other use could
/// write through it or lets it escape (a store to or of it, a call, an integer cast, a branch argument...).
static FailureOr<SmallVector<LLVM::LoadOp>> onlyLoadedFrom(Value pointer) {
  SmallVector<LLVM::LoadOp> loads;
  SmallVector<Value> derived{pointer};
  while (!derived.empty()) {
    Value value = derived.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto load = dyn_cast<LLVM::LoadOp>(user)) {
        if (load.getVolatile_() || load.getOrdering() != LLVM::AtomicOrdering::not_atomic)
          return failure(); // ordered or volatile: the program asked for this very access
        loads.push_back(load);
        continue;
      }
      if (auto gep = dyn_cast<LLVM::GEPOp>(user); gep && gep.getBase() == value) {
        derived.push_back(gep.getResult());
        continue;
      }
      if (isa<LLVM::AddrSpaceCastOp>(user)) {
        derived.push_back(user->getResult(0));
        continue;
      }
      return failure();
    }
  }
  return loads;
}

namespace {
struct InvariantInputLoadsPass : kforge::impl::KforgeInvariantInputLoadsBase<InvariantInputLoadsPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (!func->hasAttr(kReadOnlyInputs))
        return;
      func->removeAttr(kReadOnlyInputs); // a request, not an attribute of the LLVM function
      if (func.isExternal())
        return;
      for (BlockArgument argument : func.getArguments()) {
        if (!isa<LLVM::LLVMPointerType>(argument.getType()))
          continue;
        FailureOr<SmallVector<LLVM::LoadOp>> loads = onlyLoadedFrom(argument);
        if (failed(loads))
          continue;
        for (LLVM::LoadOp load : *loads)
          load.setInvariant(true);
      }
    });
  }
};
} // namespace
