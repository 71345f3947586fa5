//===- Utils.cpp - helpers shared by kforge passes ------------------------===//

#include "kforge/Transforms/Passes.h"

using namespace mlir;

bool kforge::isInsideGpuKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() || op->getParentOfType<gpu::GPUFuncOp>() ||
         op->getParentOfType<gpu::GPUModuleOp>();
}
