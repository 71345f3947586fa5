//===- CollapseDimensions.cpp - loops every op walks together, as one loop ===//
//
// See CollapseDimensions.h. Upstream's linalg::collapseOpIterationDims rewrites one op at a time, with reshapes
// around it; which loops merge is decided here for the whole function at once, so that the reshape after a
// producer and the one before its consumer cancel.
//
//===----------------------------------------------------------------------===//

#include "CollapseDimensions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

/// Dimensions of a GPU grid: an op with more loops cannot have them all as blocks.
static constexpr unsigned kGridDimensions = 3;

/// The position of loop `d` among `map`'s results, or -1.
static int64_t resultPosition(AffineMap map, unsigned d) {
  for (auto [i, e] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(e); dim && dim.getPosition() == d)
      return static_cast<int64_t>(i);
  return -1;
}

/// The cuts an op's own form forces (cut[i]: loops i and i + 1 stay apart): between loops of different
/// kinds, between loops that some operand does not index as adjacent dimensions in order (a broadcast
/// along one of them, a transpose), and around a loop whose index the body reads (argmin's position along its
/// reduced loop: the other loops may still merge). Every cut where a map is not a projected permutation.
static SmallVector<bool> ownCuts(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  SmallVector<bool> cut(loops > 0 ? loops - 1 : 0, true);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap m) { return m.isProjectedPermutation(); }))
    return cut;
  llvm::SmallDenseSet<unsigned> indexRead;
  op.getBody()->walk([&](linalg::IndexOp index) { indexRead.insert(index.getDim()); });
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < loops; ++i)
    cut[i] = iterators[i] != iterators[i + 1] || indexRead.contains(i) || indexRead.contains(i + 1) ||
             llvm::any_of(maps, [&](AffineMap m) {
               int64_t first = resultPosition(m, i), second = resultPosition(m, i + 1);
               bool neither = first < 0 && second < 0, adjacent = first >= 0 && second == first + 1;
               return !neither && !adjacent;
             });
  return cut;
}

/// Reshapes between two ops: all but a collapse of a function argument and an expansion the function returns.
static int64_t internalReshapes(func::FuncOp function) {
  int64_t count = 0;
  function.walk([&](Operation *op) {
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      count += !isa<BlockArgument>(collapse.getSrc());
    else if (isa<tensor::ExpandShapeOp>(op))
      count += !llvm::all_of(op->getUsers(), [](Operation *user) { return isa<func::ReturnOp>(user); });
  });
  return count;
}

bool kforge::collapseDimensionGroups(func::FuncOp function, const FrozenRewritePatternSet &patterns) {
  SmallVector<linalg::GenericOp> generics;
  bool needed = false;
  function.walk([&](linalg::GenericOp op) {
    if (op->getParentOp() != function || !op.hasPureTensorSemantics())
      return;
    generics.push_back(op);
    // More loops than a grid has, several reduced loops, or a reduction with several parallel loops (a max over
    // the last dimension of a 3-D tensor: rows of B*N, the row kernels' form).
    needed |= op.getNumLoops() > kGridDimensions || op.getNumReductionLoops() > 1 ||
              (op.getNumReductionLoops() > 0 && op.getNumParallelLoops() > 1);
  });
  if (!needed)
    return false;

  // The decision, to a fixed point: an op's loops stay apart where a tensor it reads or writes keeps the
  // dimensions they index apart, and a tensor's dimensions where some op touching it keeps their loops apart.
  // Cuts are only added, so it ends.
  llvm::MapVector<Operation *, SmallVector<bool>> loopCuts;
  for (linalg::GenericOp op : generics)
    loopCuts[op] = ownCuts(op);
  // A tensor that anything but these generics, a fill, an empty tensor, the function's entry or its return
  // makes or reads keeps every dimension apart (a matmul's operand, another reshape's source). A reshape of
  // an argument counts as the entry, and one whose only users are returns as the return (torch-mlir's
  // instance norm views its NCHW input as (N*C, H, W) and back): a collapse of it composes with the reshape
  // into one (and the check on internal reshapes below undoes the collapse where it does not).
  auto isFunctionArgument = [&](Value value) {
    auto argument = dyn_cast<BlockArgument>(value);
    return argument && argument.getOwner()->getParentOp() == function;
  };
  auto freeToCollapse = [&](Value value) {
    Operation *def = value.getDefiningOp();
    bool madeFreely =
        def ? (isa<tensor::EmptyOp, linalg::FillOp>(def) || loopCuts.contains(def) ||
               (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) && isFunctionArgument(def->getOperand(0))))
            : isFunctionArgument(value);
    return madeFreely && llvm::all_of(value.getUsers(), [&](Operation *user) {
             bool returned = isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user) &&
                             llvm::all_of(user->getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); });
             return loopCuts.contains(user) || returned || isa<func::ReturnOp, linalg::FillOp>(user);
           });
  };
  DenseMap<Value, SmallVector<bool>> dimCuts;
  auto cutsOf = [&](Value value, int64_t rank) -> SmallVector<bool> & {
    auto [it, inserted] = dimCuts.try_emplace(value);
    if (inserted)
      it->second.assign(rank - 1, !freeToCollapse(value));
    return it->second;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (linalg::GenericOp op : generics) {
      SmallVector<bool> &cut = loopCuts[op];
      SmallVector<std::pair<Value, AffineMap>> touched;
      for (OpOperand &operand : op->getOpOperands())
        touched.push_back({operand.get(), op.getMatchingIndexingMap(&operand)});
      for (OpResult result : op->getResults())
        touched.push_back({result, op.getIndexingMapMatchingResult(result)});
      for (auto [value, map] : touched) {
        auto type = dyn_cast<RankedTensorType>(value.getType());
        if (!type || type.getRank() < 2 || !map.isProjectedPermutation())
          continue;
        SmallVector<bool> &dims = cutsOf(value, type.getRank());
        for (unsigned j = 0; j + 1 < map.getNumResults(); ++j) {
          unsigned first = map.getDimPosition(j), second = map.getDimPosition(j + 1);
          bool apart = second != first + 1 || cut[first];
          if (apart && !dims[j])
            dims[j] = changed = true;
          if (dims[j] && second == first + 1 && !cut[first])
            cut[first] = changed = true;
        }
      }
    }
  }

  SmallVector<std::pair<linalg::GenericOp, SmallVector<ReassociationIndices>>> collapses;
  for (linalg::GenericOp op : generics) {
    SmallVector<ReassociationIndices> groups;
    const SmallVector<bool> &cut = loopCuts[op];
    for (unsigned i = 0; i < op.getNumLoops(); ++i) {
      if (i == 0 || cut[i - 1])
        groups.emplace_back();
      groups.back().push_back(i);
    }
    if (groups.size() < op.getNumLoops())
      collapses.push_back({op, groups});
  }
  if (collapses.empty())
    return false;

  int64_t reshapesBefore = internalReshapes(function);
  OwningOpRef<func::FuncOp> original = function.clone();
  auto restore = [&] {
    function.getBody().takeBody(original->getBody());
    return false;
  };
  IRRewriter rewriter(function.getContext());
  for (auto &[op, groups] : collapses) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(cast<linalg::LinalgOp>(op.getOperation()), groups, rewriter);
    if (failed(collapsed))
      return restore();
    rewriter.replaceOp(op, collapsed->results);
  }
  if (failed(applyPatternsGreedily(function, patterns)) || internalReshapes(function) > reshapesBefore)
    return restore();
  return true;
}
