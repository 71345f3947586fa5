//===- WindowOps.cpp - convolutions and poolings, named or gathered -------===//

#include "kforge/Transforms/WindowOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

/// The loops whose positions (linalg.index) `value` is computed from, inside `body`.
static void positionsFeeding(Value value, Region &body, llvm::SmallDenseSet<unsigned> &loops,
                             llvm::SmallPtrSetImpl<Operation *> &seen) {
  Operation *def = value.getDefiningOp();
  if (!def || !body.isAncestor(def->getParentRegion()) || !seen.insert(def).second)
    return;
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    loops.insert(index.getDim());
    return;
  }
  for (Value operand : def->getOperands())
    positionsFeeding(operand, body, loops, seen);
}

bool kforge::isWindowOp(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  if (linalg::isaConvolutionOpInterface(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  Region &body = generic.getRegion();
  bool window = false;
  body.walk([&](tensor::ExtractOp extract) {
    for (Value index : extract.getIndices()) {
      llvm::SmallDenseSet<unsigned> loops;
      llvm::SmallPtrSet<Operation *, 16> seen;
      positionsFeeding(index, body, loops, seen);
      bool parallel = llvm::any_of(loops, [&](unsigned d) { return iterators[d] == utils::IteratorType::parallel; });
      bool reduction = llvm::any_of(loops, [&](unsigned d) { return iterators[d] == utils::IteratorType::reduction; });
      if (parallel && reduction) {
        window = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return window;
}
