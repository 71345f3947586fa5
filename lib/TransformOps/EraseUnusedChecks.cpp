//===- EraseUnusedChecks.cpp - transform.apply_patterns.kforge.erase_unused_checks ===//
//
// Dead linalg ops whose only side effect is an importer's bounds check erased, as canonicalization erases
// dead ops without side effects. See the op's description in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "kforge/TransformOps/KforgeTransformOps.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
/// A linalg op on tensors that nothing uses, whose body does nothing observable but cf.assert.
struct EraseUnusedCheck : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() == 0 || !op->use_empty())
      return rewriter.notifyMatchFailure(op, "not a linalg op on tensors whose results are unused");
    bool onlyChecks = true, anyCheck = false;
    op->walk([&](Operation *inner) {
      if (inner == op.getOperation())
        return WalkResult::advance();
      if (isa<cf::AssertOp>(inner)) {
        anyCheck = true;
        return WalkResult::advance();
      }
      // An op with regions is judged by the ops inside it, which the walk visits.
      if (inner->getNumRegions() == 0 && !isMemoryEffectFree(inner)) {
        onlyChecks = false;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    // Without an assert the op is pure and canonicalization erases it; with another effect it stays.
    if (!anyCheck || !onlyChecks)
      return rewriter.notifyMatchFailure(op, "its body has an effect other than cf.assert, or none");
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void mlir::transform::ApplyEraseUnusedChecksPatternsOp::populatePatterns(RewritePatternSet &patterns) {
  patterns.add<EraseUnusedCheck>(patterns.getContext());
}
