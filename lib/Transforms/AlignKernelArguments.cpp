//===- AlignKernelArguments.cpp - kernel buffers are 16-byte aligned ------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEALIGNKERNELARGUMENTS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct AlignKernelArgumentsPass : kforge::impl::KforgeAlignKernelArgumentsBase<AlignKernelArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(kforge::checkAlignmentOption(getOperation(), "alignment", alignment)))
      return signalPassFailure();
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<MemRefType>(type) && !func.getArgAttr(i, LLVM::LLVMDialect::getAlignAttrName()))
          func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(alignment));
    });
  }
};
} // namespace
