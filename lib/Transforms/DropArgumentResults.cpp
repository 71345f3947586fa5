//===- DropArgumentResults.cpp - results that alias an argument -----------===//

#include "kforge/Transforms/Passes.h"

#include "llvm/ADT/BitVector.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEDROPARGUMENTRESULTS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// The entry-block argument that `value` is, looking through memref.cast; null otherwise.
static BlockArgument getUnderlyingArgument(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return dyn_cast<BlockArgument>(value);
}

namespace {
struct DropArgumentResultsPass : kforge::impl::KforgeDropArgumentResultsBase<DropArgumentResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || func.getNumResults() == 0)
        continue;
      // Rewriting call sites is not needed by any payload kforge sees; leave called functions alone.
      if (!SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      dropResults(func);
    }
  }

  void dropResults(func::FuncOp func) {
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
    Block &entry = func.getBody().front();

    llvm::BitVector toErase(func.getNumResults());
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      if (!isa<BaseMemRefType>(func.getResultTypes()[i]))
        continue;
      BlockArgument common;
      bool same = true;
      for (func::ReturnOp ret : returns) {
        BlockArgument arg = getUnderlyingArgument(ret.getOperand(i));
        if (!arg || arg.getOwner() != &entry || (common && arg != common)) {
          same = false;
          break;
        }
        common = arg;
      }
      if (same && common)
        toErase.set(i);
    }
    if (toErase.none())
      return;

    for (func::ReturnOp ret : returns) {
      SmallVector<Value> kept;
      for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i)
        if (!toErase.test(i))
          kept.push_back(ret.getOperand(i));
      ret->setOperands(kept);
    }
    if (failed(func.eraseResults(toErase)))
      signalPassFailure();
  }
};
} // namespace
