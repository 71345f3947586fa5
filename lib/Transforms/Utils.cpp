//===- Utils.cpp - helpers shared by kforge passes ------------------------===//

#include "kforge/Transforms/Passes.h"

using namespace mlir;

bool kforge::isInsideGpuKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() || op->getParentOfType<gpu::GPUFuncOp>() ||
         op->getParentOfType<gpu::GPUModuleOp>();
}

LogicalResult kforge::checkAlignmentOption(Operation *op, StringRef option, int64_t value) {
  if (value > 0 && llvm::isPowerOf2_64(value))
    return success();
  return op->emitError() << option << " must be a positive power of two, not " << value;
}
