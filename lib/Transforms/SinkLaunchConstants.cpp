//===- SinkLaunchConstants.cpp - constants (and casts of them) into launches ===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGESINKLAUNCHCONSTANTS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// Upstream's default set, plus poison, LLVM constants, casts of values that are themselves sunk, and
/// references to constant globals: a `memref.get_global` left on the host hands the kernel a host address
/// (an illegal address on the device: a rank-0 `arith.constant dense<...> : tensor<f32>` operand), while
/// inside the launch outlining copies the global into the GPU module.
static bool worthSinking(Operation *op) {
  if (isa<arith::ConstantOp, ub::PoisonOp, LLVM::ConstantOp, memref::DimOp, arith::SelectOp, arith::CmpIOp>(op))
    return true;
  if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(op)) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, getGlobal.getNameAttr());
    return global && global.getConstant();
  }
  if (!isa<UnrealizedConversionCastOp>(op))
    return false;
  return llvm::all_of(op->getOperands(), [](Value operand) {
    Operation *def = operand.getDefiningOp();
    return def && worthSinking(def);
  });
}

namespace {
struct SinkLaunchConstantsPass : kforge::impl::KforgeSinkLaunchConstantsBase<SinkLaunchConstantsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](gpu::LaunchOp launch) {
      return failed(sinkOperationsIntoLaunchOp(launch, worthSinking)) ? WalkResult::interrupt()
                                                                       : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
