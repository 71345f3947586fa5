//===- KernelAllocsToAlloca.cpp - no device malloc inside kernels --------===//

#include "kforge/Transforms/Passes.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEKERNELALLOCSTOALLOCA
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct KernelAllocsToAllocaPass : kforge::impl::KforgeKernelAllocsToAllocaBase<KernelAllocsToAllocaPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (kforge::isInsideGpuKernel(alloc))
        allocs.push_back(alloc);
    });
    bool failedCheck = false;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      // Shared-memory (workgroup) buffers are handled by the GPU lowering itself.
      if (type.getMemorySpace() && !isa<IntegerAttr>(type.getMemorySpace()))
        continue;
      if (auto space = dyn_cast_if_present<IntegerAttr>(type.getMemorySpace()); space && space.getInt() != 0)
        continue;
      if (!type.hasStaticShape()) {
        alloc.emitError() << "dynamically shaped allocation inside a GPU kernel would become a device malloc: "
                             "give the tile a static size";
        failedCheck = true;
        continue;
      }
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      OpBuilder builder(alloc);
      auto alloca = memref::AllocaOp::create(builder, alloc.getLoc(), type, alloc.getDynamicSizes(),
                                             alloc.getSymbolOperands(), alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
