//===- HostAllocsToDevice.cpp - host temporaries become device memory ----===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEHOSTALLOCSTODEVICE
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// True when `value` or a view of it leaves its block through a terminator (returned or yielded).
static bool escapesBlock(Value value) {
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      if (user->hasTrait<OpTrait::IsTerminator>())
        return true;
      if (isa<ViewLikeOpInterface, memref::CastOp>(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

namespace {
struct HostAllocsToDevicePass : kforge::impl::KforgeHostAllocsToDeviceBase<HostAllocsToDevicePass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      func.walk([&](memref::AllocOp alloc) {
        if (!kforge::isInsideGpuKernel(alloc))
          allocs.push_back(alloc);
      });

    bool failedCheck = false;
    for (memref::AllocOp alloc : allocs) {
      if (escapesBlock(alloc.getResult())) {
        alloc.emitError() << "allocation escapes its function, so its device memory could never be freed: make "
                             "the payload destination-passing (pass the output as an argument)";
        failedCheck = true;
        continue;
      }
      OpBuilder builder(alloc);
      auto deviceAlloc = gpu::AllocOp::create(builder, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
                                              ValueRange{}, alloc.getDynamicSizes(), alloc.getSymbolOperands(),
                                              /*hostShared=*/false);
      bool freed = false;
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
        auto dealloc = dyn_cast<memref::DeallocOp>(user);
        if (!dealloc)
          continue;
        builder.setInsertionPoint(dealloc);
        gpu::DeallocOp::create(builder, dealloc.getLoc(), /*asyncToken=*/Type(), ValueRange{},
                               deviceAlloc.getMemref());
        dealloc.erase();
        freed = true;
      }
      if (!freed) {
        builder.setInsertionPoint(alloc->getBlock()->getTerminator());
        gpu::DeallocOp::create(builder, alloc.getLoc(), /*asyncToken=*/Type(), ValueRange{},
                               deviceAlloc.getMemref());
      }
      alloc.replaceAllUsesWith(deviceAlloc.getMemref());
      alloc.erase();
    }
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
