//===- CopiesToLinalg.cpp - memref.copy -> linalg.copy --------------------===//

#include "kforge/Transforms/Passes.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGECOPIESTOLINALG
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct CopiesToLinalgPass : kforge::impl::KforgeCopiesToLinalgBase<CopiesToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!onlyInKernels || kforge::isInsideGpuKernel(copy))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      // linalg.copy needs ranked operands; unranked copies stay (and fail loudly later).
      if (!isa<MemRefType>(copy.getSource().getType()) || !isa<MemRefType>(copy.getTarget().getType()))
        continue;
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
