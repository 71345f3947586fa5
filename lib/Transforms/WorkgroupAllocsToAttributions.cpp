//===- WorkgroupAllocsToAttributions.cpp - host smem allocs into kernels --===//

#include "kforge/Transforms/Passes.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEWORKGROUPALLOCSTOATTRIBUTIONS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct WorkgroupAllocsToAttributionsPass
    : kforge::impl::KforgeWorkgroupAllocsToAttributionsBase<WorkgroupAllocsToAttributionsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> allocs;
    getOperation().walk([&](Operation *op) {
      if (!isa<memref::AllocOp, memref::AllocaOp>(op) || kforge::isInsideGpuKernel(op))
        return;
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(type))
        allocs.push_back(op);
    });

    bool failedCheck = false;
    for (Operation *alloc : allocs) {
      Value buffer = alloc->getResult(0);
      auto type = cast<MemRefType>(buffer.getType());
      if (!type.hasStaticShape()) {
        alloc->emitError() << "shared-memory allocation must have a static shape";
        failedCheck = true;
        continue;
      }
      gpu::LaunchOp launch;
      bool singleLaunch = true;
      for (Operation *user : buffer.getUsers()) {
        if (isa<memref::DeallocOp>(user))
          continue;
        auto userLaunch = user->getParentOfType<gpu::LaunchOp>();
        if (!userLaunch || (launch && userLaunch != launch)) {
          singleLaunch = false;
          break;
        }
        launch = userLaunch;
      }
      if (!singleLaunch) {
        alloc->emitError() << "shared-memory allocation is used outside a single gpu.launch; shared memory "
                              "exists only within one kernel";
        failedCheck = true;
        continue;
      }
      for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      if (!launch) { // Unused: nothing to move.
        alloc->erase();
        continue;
      }
      BlockArgument attribution = launch.addWorkgroupAttribution(type, alloc->getLoc());
      buffer.replaceAllUsesWith(attribution);
      alloc->erase();
    }
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
