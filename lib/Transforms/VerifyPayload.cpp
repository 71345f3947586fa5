//===- VerifyPayload.cpp - is the payload fit for the chosen target? -----===//
//
// Both checks run after bufferization, where a schedule that left work on the
// host (GPU path) or mapped it to the GPU (CPU path) is still easy to point at.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/KernelAssembly.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEVERIFYGPUPAYLOAD
#define GEN_PASS_DEF_KFORGEVERIFYCPUPAYLOAD
#define GEN_PASS_DEF_KFORGEVERIFYLOWEREDTOLLVM
#define GEN_PASS_DEF_KFORGEVERIFYNOFOREIGNCODE
#define GEN_PASS_DEF_KFORGEVERIFYARTIFACTCALLS
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

//===----------------------------------------------------------------------===//
// Foreign code: what neither a payload nor a schedule may bring in
//===----------------------------------------------------------------------===//

/// The callee of a direct call, when it is a function the module declares without defining it.
static Operation *externalCallee(CallOpInterface call) {
  auto symbol = llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
  if (!symbol)
    return nullptr;
  Operation *callee = SymbolTable::lookupNearestSymbolFrom(call, symbol);
  if (!callee)
    return nullptr;
  if (auto func = dyn_cast<FunctionOpInterface>(callee); func && func.isExternal())
    return callee;
  return nullptr;
}

/// kforge's runtime: what kforge's own transform ops call from host code (e.g. kforge_tensor_map_2d for TMA).
/// Such a name resolves only against libkforge_mgpu.so, so a payload can reach nothing else through it.
static bool isKforgeRuntime(StringRef name) { return name.starts_with("mgpu") || name.starts_with("kforge"); }

/// Errors on an op that runs code kforge did not compile: assembly, calls of declared-only or computed targets.
/// The forms kforge's own transform ops emit are allowed: the inline assembly strings of KernelAssembly.h (an
/// empty one, a compiler memory barrier that executes nothing, and a predicated mbarrier arrive) and calls into
/// kforge's runtime.
static LogicalResult checkNotForeign(Operation *op) {
  if (auto assembly = dyn_cast<LLVM::InlineAsmOp>(op)) {
    if (kforge::isKforgeAssembly(assembly.getAsmString()))
      return success();
    return op->emitError() << "inline assembly is not allowed in a payload or schedule";
  }
  if (isa<LLVM::CallIntrinsicOp>(op))
    return op->emitError() << "'llvm.call_intrinsic' is not allowed in a payload or schedule";
  if (op->hasAttr(LLVM::LLVMDialect::getModuleLevelAsmAttrName()))
    return op->emitError() << "module-level assembly ('" << LLVM::LLVMDialect::getModuleLevelAsmAttrName()
                           << "') is not allowed in a payload or schedule";
  auto call = dyn_cast<CallOpInterface>(op);
  if (!call)
    return success();
  if (!isa<SymbolRefAttr>(call.getCallableForCallee()))
    return op->emitError() << "indirect calls are not allowed in a payload or schedule";
  if (Operation *callee = externalCallee(call); callee && !isKforgeRuntime(SymbolTable::getSymbolName(callee)))
    return op->emitError() << "a call to '" << SymbolTable::getSymbolName(callee).getValue()
                           << "', which the module declares but does not define, is not allowed in a payload or "
                              "schedule: kernels may call only code kforge compiles";
  return success();
}

/// What lowered host code may call besides the module's own functions: kforge's runtime, the C allocator and
/// memory functions the memref lowering uses, the libm functions math-to-libm emits, and what cf.assert
/// lowers to (`puts` of its message, then `abort`): an importer's bounds checks (torch-mlir's nll_loss checks
/// its class indices) stop the call as PyTorch's checks do, instead of reading out of bounds.
static bool isAllowedHostCallee(StringRef name) {
  if (isKforgeRuntime(name))
    return true;
  static const llvm::StringSet<> allowed = [] {
    llvm::StringSet<> names{"malloc", "free", "aligned_alloc", "memcpy", "memmove", "memset", "puts", "abort"};
    for (StringRef base : {"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "cos", "cosh",
                           "erf", "erfc", "exp", "exp2", "expm1", "fabs", "floor", "fma", "log", "log10", "log1p",
                           "log2", "pow", "rint", "round", "roundeven", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"}) {
      names.insert(base);
      names.insert((base + "f").str());
    }
    return names;
  }();
  return allowed.contains(name);
}

/// Errors on lowered host code that reaches outside kforge's artifact: assembly, indirect calls, or calls of
/// external functions that are not on the list above.
static LogicalResult checkHostOp(Operation *op) {
  if (isa<LLVM::InlineAsmOp, LLVM::CallIntrinsicOp>(op) ||
      op->hasAttr(LLVM::LLVMDialect::getModuleLevelAsmAttrName()))
    return checkNotForeign(op);
  auto call = dyn_cast<LLVM::CallOp>(op);
  if (!call)
    return success();
  if (!call.getCallee())
    return op->emitError() << "host code makes an indirect call, which kforge's lowering never emits";
  if (Operation *callee = externalCallee(call); callee && !isAllowedHostCallee(*call.getCallee()))
    return op->emitError() << "host code calls '" << *call.getCallee()
                           << "', which is neither kforge's runtime nor the C library functions its lowering uses";
  return success();
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

struct VerifyArtifactCallsPass : kforge::impl::KforgeVerifyArtifactCallsBase<VerifyArtifactCallsPass> {
  void runOnOperation() override {
    bool failedCheck = false;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::BinaryOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip(); // device code, checked before lowering
      if (failed(checkHostOp(op)))
        failedCheck = true;
      return WalkResult::advance();
    });
    if (failedCheck)
      signalPassFailure();
  }
};

struct VerifyNoForeignCodePass : kforge::impl::KforgeVerifyNoForeignCodeBase<VerifyNoForeignCodePass> {
  void runOnOperation() override {
    bool failedCheck = false;
    getOperation().walk([&](Operation *op) {
      if (failed(checkNotForeign(op)))
        failedCheck = true;
    });
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
