//===- KernelAllocsToAlloca.cpp - no device malloc inside kernels --------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEKERNELALLOCSTOALLOCA
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// A dynamically sized kernel buffer whose sizes have constant upper bounds (a lane's slice of a row the lanes do
/// not divide: ceil((N - lane) / lanes) columns, at most ceil(N / lanes)) as a buffer of the bounds, viewed at the
/// dynamic sizes: a thread's private array of static size instead of a device malloc. Null when a size is
/// unbounded.
static memref::AllocOp boundedAlloc(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity())
    return nullptr;
  SmallVector<int64_t> bounds(type.getShape());
  SmallVector<OpFoldResult> sizes;
  unsigned dynamic = 0;
  for (int64_t &extent : bounds) {
    if (!ShapedType::isDynamic(extent)) {
      sizes.push_back(IntegerAttr::get(IndexType::get(alloc.getContext()), extent));
      continue;
    }
    Value size = alloc.getDynamicSizes()[dynamic++];
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(size), /*stopCondition=*/nullptr,
        /*closedUB=*/true);
    if (failed(bound) || *bound < 0 || *bound > (int64_t(1) << 20))
      return nullptr;
    extent = std::max<int64_t>(*bound, 1);
    sizes.push_back(size);
  }
  OpBuilder builder(alloc);
  auto bounded = memref::AllocOp::create(builder, alloc.getLoc(), MemRefType::get(bounds, type.getElementType()),
                                         ValueRange{}, alloc.getAlignmentAttr());
  SmallVector<OpFoldResult> zeros(type.getRank(), builder.getIndexAttr(0)),
      ones(type.getRank(), builder.getIndexAttr(1));
  auto view = memref::SubViewOp::create(builder, alloc.getLoc(), bounded, zeros, sizes, ones);
  // The view's layout is strided (the bounds' strides); users that need the identity layout get a cast.
  Value replacement = view.getResult();
  if (view.getType() != type)
    replacement = memref::CastOp::create(builder, alloc.getLoc(), type, replacement).getResult();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      OpBuilder at(dealloc);
      memref::DeallocOp::create(at, dealloc.getLoc(), bounded);
      dealloc->erase();
    }
  alloc.replaceAllUsesWith(replacement);
  alloc.erase();
  return bounded;
}

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
      if (!type.hasStaticShape())
        if (memref::AllocOp bounded = boundedAlloc(alloc)) {
          alloc = bounded;
          type = alloc.getType();
        }
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
