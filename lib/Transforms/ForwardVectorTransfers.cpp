//===- ForwardVectorTransfers.cpp - accumulators start in registers -------===//
//
// See the pass description in Passes.td: upstream's transfer flow optimisation (write-to-read forwarding,
// dead write elimination) on kernels, so a tile's fill of its output is no longer a pass over memory.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEFORWARDVECTORTRANSFERS
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
struct ForwardVectorTransfersPass : kforge::impl::KforgeForwardVectorTransfersBase<ForwardVectorTransfersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      // Accumulators a loop reads and writes back at the same place every iteration are carried in registers
      // across it. The transform's finish hoists them on the host function already, unless the buffer also
      // has views there (split's row kernel reads the matmul's result through subviews): in the kernel it is
      // an argument with none.
      linalg::hoistRedundantVectorTransfers(func);
      vector::transferOpflowOpt(rewriter, func);
    });
  }
};
} // namespace
