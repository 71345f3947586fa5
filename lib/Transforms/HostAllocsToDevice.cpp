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

// gpu-to-llvm lowers only the asynchronous forms of gpu.alloc / gpu.dealloc (a synchronous one is left
// behind unconverted), so each is wrapped as: token = gpu.wait async; op async [token]; gpu.wait [done].

/// A device allocation equivalent to `alloc`, complete when this returns.
static Value createDeviceAlloc(OpBuilder &builder, memref::AllocOp alloc) {
  Location loc = alloc.getLoc();
  Type tokenType = builder.getType<gpu::AsyncTokenType>();
  Value start = gpu::WaitOp::create(builder, loc, tokenType, ValueRange{}).getAsyncToken();
  auto deviceAlloc = gpu::AllocOp::create(builder, loc, alloc.getType(), tokenType, ValueRange{start},
                                          alloc.getDynamicSizes(), alloc.getSymbolOperands(), /*hostShared=*/false);
  gpu::WaitOp::create(builder, loc, Type(), ValueRange{deviceAlloc.getAsyncToken()});
  return deviceAlloc.getMemref();
}

/// Frees `buffer` on the device, complete when this returns.
static void createDeviceFree(OpBuilder &builder, Location loc, Value buffer) {
  Type tokenType = builder.getType<gpu::AsyncTokenType>();
  Value start = gpu::WaitOp::create(builder, loc, tokenType, ValueRange{}).getAsyncToken();
  auto free = gpu::DeallocOp::create(builder, loc, tokenType, ValueRange{start}, buffer);
  gpu::WaitOp::create(builder, loc, Type(), ValueRange{free.getAsyncToken()});
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
      Value deviceBuffer = createDeviceAlloc(builder, alloc);
      bool freed = false;
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
        auto dealloc = dyn_cast<memref::DeallocOp>(user);
        if (!dealloc)
          continue;
        builder.setInsertionPoint(dealloc);
        createDeviceFree(builder, dealloc.getLoc(), deviceBuffer);
        dealloc.erase();
        freed = true;
      }
      if (!freed) {
        builder.setInsertionPoint(alloc->getBlock()->getTerminator());
        createDeviceFree(builder, alloc.getLoc(), deviceBuffer);
      }
      alloc.replaceAllUsesWith(deviceBuffer);
      alloc.erase();
    }
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
