//===- EmitCInterface.cpp - mark public functions for the C ABI -----------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEEMITCINTERFACE
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct EmitCInterfacePass : kforge::impl::KforgeEmitCInterfaceBase<EmitCInterfacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isPublic() && !func.isExternal())
        func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(&getContext()));
    }
  }
};
} // namespace
