//===- VerifyPayload.cpp - is the payload fit for the chosen target? -----===//
//
// Both checks run after bufferization, where a schedule that left work on the
// host (GPU path) or mapped it to the GPU (CPU path) is still easy to point at.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEVERIFYGPUPAYLOAD
#define GEN_PASS_DEF_KFORGEVERIFYCPUPAYLOAD
#define GEN_PASS_DEF_KFORGEVERIFYLOWEREDTOLLVM
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// True when `op` itself reads or writes the contents of a memref.
static bool accessesMemrefContents(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &instance) {
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(instance.getEffect()))
      return false;
    Value value = instance.getValue();
    return value && isa<BaseMemRefType>(value.getType());
  });
}

namespace {
struct VerifyGpuPayloadPass : kforge::impl::KforgeVerifyGpuPayloadBase<VerifyGpuPayloadPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failedCheck = false;
    bool hasKernel = false;
    bool hasFunctionBody = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      hasFunctionBody = true;
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<gpu::LaunchOp, gpu::LaunchFuncOp>(op))
          hasKernel = true;
        // Everything in the gpu dialect (launches, memcpy, memset) is device work.
        if (isa<gpu::GPUDialect>(op->getDialect()))
          return WalkResult::skip();
        if (accessesMemrefContents(op)) {
          op->emitError() << "'" << op->getName()
                          << "' reads or writes memory on the host, but on the GPU path every buffer is device "
                             "memory: map it to the GPU with a schedule (see recipes/) before lowering";
          failedCheck = true;
        }
        return WalkResult::advance();
      });
    }
    if (hasFunctionBody && !hasKernel && !failedCheck) {
      module.emitError() << "payload has no GPU kernel (no gpu.launch): apply a schedule that maps it to the GPU "
                            "(see recipes/) before lowering";
      failedCheck = true;
    }
    if (failedCheck)
      signalPassFailure();
  }
};

struct VerifyCpuPayloadPass : kforge::impl::KforgeVerifyCpuPayloadBase<VerifyCpuPayloadPass> {
  void runOnOperation() override {
    bool failedCheck = false;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<gpu::LaunchOp, gpu::LaunchFuncOp, gpu::GPUModuleOp, gpu::GPUFuncOp>(op))
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' is GPU code and cannot run on the CPU path: lower the schedule before its GPU "
                         "mapping steps, or use kforge-lower-to-nvvm";
      failedCheck = true;
      return WalkResult::skip();
    });
    if (failedCheck)
      signalPassFailure();
  }
};

struct VerifyLoweredToLLVMPass : kforge::impl::KforgeVerifyLoweredToLLVMBase<VerifyLoweredToLLVMPass> {
  void runOnOperation() override {
    bool failedCheck = false;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<ModuleOp, gpu::LaunchFuncOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<gpu::BinaryOp>(op))
        return WalkResult::skip();
      op->emitError() << "'" << op->getName() << "' was not lowered to the LLVM dialect";
      failedCheck = true;
      return WalkResult::skip();
    });
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
