//===- InitAll.h - register everything kforge tools need --------*- C++ -*-===//

#ifndef KFORGE_INITALL_H
#define KFORGE_INITALL_H

#include "kforge/Pipelines/Pipelines.h"
#include "kforge/TransformOps/KforgeTransformOps.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace kforge {

/// Every upstream dialect and extension, the LLVM IR translations gpu-module-to-binary needs, and kforge's own.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerKforgeTransformExtension(registry);
}

/// Every upstream pass plus kforge's passes and pipelines.
inline void registerAllPasses() {
  mlir::registerAllPasses();
  registerKforgePasses();
  registerPipelines();
}

} // namespace kforge

#endif // KFORGE_INITALL_H
