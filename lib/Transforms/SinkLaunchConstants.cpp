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
#include "mlir/Transforms/RegionUtils.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGESINKLAUNCHCONSTANTS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// Upstream's default set, plus poison, LLVM constants (and undef, poison and zero: the canonicalizer hoists a
/// wgmma tile's `llvm.mlir.undef` accumulator struct to the function, and left there it became a 512-byte kernel
/// argument of every wgmma kernel), casts of values that are themselves sunk, and
/// references to constant globals: a `memref.get_global` left on the host hands the kernel a host address
/// (an illegal address on the device: a rank-0 `arith.constant dense<...> : tensor<f32>` operand), while
/// inside the launch outlining copies the global into the GPU module.
static bool worthSinking(Operation *op) {
  if (isa<arith::ConstantOp, ub::PoisonOp, LLVM::ConstantOp, LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp, memref::DimOp,
          arith::SelectOp, arith::CmpIOp>(op))
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

/// A memref's descriptor that convert-nvgpu-to-nvvm built where the memref is defined (on the host, for a
/// function argument): outlined, the kernel would take the whole descriptor by value, and LLVM could not know
/// its pointer is global, so every cp.async from it would convert its address (a `cvta` per copy). Cloned into
/// the launch, the kernel takes the memref itself, whose pointer the NVPTX backend knows is global.
/// (upstream's sinking does not take these: their operand, a function argument, has no defining op.)
static void sinkMemrefDescriptors(gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(body, captured);
  OpBuilder builder(&body.front(), body.front().begin());
  for (Value value : captured) {
    auto cast = value.getDefiningOp<UnrealizedConversionCastOp>();
    if (!cast || cast->getNumOperands() != 1 || cast->getNumResults() != 1 ||
        !isa<MemRefType>(cast->getOperand(0).getType()))
      continue;
    Operation *inside = builder.clone(*cast);
    replaceAllUsesInRegionWith(value, inside->getResult(0), body);
  }
}

namespace {
struct SinkLaunchConstantsPass : kforge::impl::KforgeSinkLaunchConstantsBase<SinkLaunchConstantsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](gpu::LaunchOp launch) {
      sinkMemrefDescriptors(launch);
      return failed(sinkOperationsIntoLaunchOp(launch, worthSinking)) ? WalkResult::interrupt()
                                                                       : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
