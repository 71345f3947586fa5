//===- AlignSharedMemory.cpp - aligned shared-memory buffers --------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEALIGNSHAREDMEMORY
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// Workgroup memory either as #gpu.address_space<workgroup> or as NVVM's numeric address space 3.
static bool isSharedMemory(MemRefType type) {
  if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(type))
    return true;
  auto space = dyn_cast_if_present<IntegerAttr>(type.getMemorySpace());
  return space && space.getInt() == static_cast<int64_t>(NVVM::NVVMMemorySpace::Shared);
}

namespace {
struct AlignSharedMemoryPass : kforge::impl::KforgeAlignSharedMemoryBase<AlignSharedMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(kforge::checkAlignmentOption(getOperation(), "alignment", alignment)))
      return signalPassFailure();
    Builder builder(&getContext());
    StringRef alignName = LLVM::LLVMDialect::getAlignAttrName();
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i) {
        auto current = dyn_cast_or_null<IntegerAttr>(func.getWorkgroupAttributionAttr(i, alignName));
        if (!current || current.getInt() < alignment)
          func.setWorkgroupAttributionAttr(i, builder.getStringAttr(alignName), builder.getI64IntegerAttr(alignment));
      }
    });
    getOperation().walk([&](memref::GlobalOp global) {
      if (!isSharedMemory(global.getType()))
        return;
      std::optional<uint64_t> current = global.getAlignment();
      if (!current || *current < static_cast<uint64_t>(alignment))
        global.setAlignmentAttr(builder.getI64IntegerAttr(alignment));
    });
  }
};
} // namespace
