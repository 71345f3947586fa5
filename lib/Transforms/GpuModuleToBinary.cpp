//===- GpuModuleToBinary.cpp - gpu-module-to-binary with kforge's LLVM IR rewrites -===//
//
// Upstream's gpu-module-to-binary, with a callback on the optimised LLVM IR of each device module: the only
// place where a rewrite sees the loads LLVM has optimised yet can still change what code generation emits.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/L2LoadPolicy.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

namespace kforge {
#define GEN_PASS_DEF_KFORGEGPUMODULETOBINARY
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct GpuModuleToBinaryPass : kforge::impl::KforgeGpuModuleToBinaryBase<GpuModuleToBinaryPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<gpu::CompilationTarget> target =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(compilationTarget)
            .Cases({"offloading", "llvm"}, gpu::CompilationTarget::Offload)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Cases({"fatbinary", "fatbin"}, gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!target) {
      getOperation().emitError() << "kforge-gpu-module-to-binary: unknown format '" << compilationTarget
                                 << "' (expected isa, bin or fatbin)";
      return signalPassFailure();
    }
    std::optional<SymbolTable> parentTable;
    auto lazyTable = [&]() -> SymbolTable * {
      if (!parentTable)
        parentTable.emplace(getOperation());
      return &*parentTable;
    };
    auto optimized = [](llvm::Module &module) { kforge::applyL2LoadPolicies(module); };
    gpu::TargetOptions options(toolkitPath, /*librariesToLink=*/{}, /*cmdOptions=*/{}, /*elfSection=*/{}, *target,
                               lazyTable, /*initialLlvmIRCallback=*/{}, /*linkedLlvmIRCallback=*/{}, optimized);
    if (failed(gpu::transformGpuModulesToBinaries(getOperation(), nullptr, options)))
      signalPassFailure();
  }
};
} // namespace
