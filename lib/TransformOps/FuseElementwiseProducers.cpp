//===- FuseElementwiseProducers.cpp - transform.kforge.fuse_elementwise_producers ===//
//
// Elementwise producers recomputed in each of their consumers, by upstream's elementwise fusion, instead of
// being stored. See the op's description in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "Rewrites.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

/// The next use of an elementwise producer inside `scope` by a consumer there that upstream can fuse. A walk
/// visits producers before their consumers in a block, so a chain a -> b -> c fuses a into b first.
static OpOperand *nextFusable(Operation *scope) {
  OpOperand *found = nullptr;
  scope->walk([&](linalg::GenericOp producer) {
    if (producer == scope || producer.getNumReductionLoops() != 0 || producer->getNumResults() != 1 ||
        !producer.hasPureTensorSemantics())
      return WalkResult::advance();
    for (OpOperand &use : producer->getResult(0).getUses()) {
      auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (consumer && scope->isProperAncestor(consumer) && linalg::areElementwiseOpsFusable(&use)) {
        found = &use;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return found;
}

LogicalResult kforge::fuseElementwiseProducers(RewriterBase &rewriter, Operation *scope, std::string &why) {
  // One fusion at a time, then look again: each fusion erases its consumer (which may itself be a producer)
  // and may leave its producer unused.
  // Bounded: every fusion removes one use of an elementwise producer from a consumer; the bound only guards
  // against a fusion that would not (upstream refusing after matching).
  for (int fusions = 0; OpOperand *use = nextFusable(scope); ++fusions) {
    if (fusions > 1000)
      return reject(why, "elementwise fusion did not finish after 1000 fusions");
    Operation *producer = use->get().getDefiningOp();
    auto consumer = cast<linalg::GenericOp>(use->getOwner());
    rewriter.setInsertionPoint(consumer); // where the fused op goes (a pattern's rewriter would be there)
    FailureOr<linalg::ElementwiseOpFusionResult> fusion = linalg::fuseElementwiseOps(rewriter, use);
    if (failed(fusion))
      return reject(why, "upstream elementwise fusion failed on a pair it reported fusable");
    // Only the consumer's results are replaced: the producer's other users keep the producer.
    for (auto [original, replacement] : fusion->replacements)
      if (original.getDefiningOp() != producer)
        rewriter.replaceAllUsesWith(original, replacement);
    rewriter.eraseOp(consumer);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
  }
  // A fused op keeps the producer's result as an output while the producer had other users: drop the
  // outputs nobody reads.
  RewritePatternSet patterns(rewriter.getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  if (failed(applyPatternsGreedily(scope, std::move(patterns))))
    return reject(why, "erasing the fused ops' unused results did not converge");
  return success();
}
