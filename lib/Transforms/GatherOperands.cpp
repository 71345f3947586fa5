//===- GatherOperands.cpp - element reads inside linalg bodies, as operands ----===//
//
// torch-mlir writes a gather (nll_loss picking each row's log-probability at its class index) as a
// `tensor.extract` inside a linalg body, reading a tensor that is not an operand. Tiling and fusion walk
// operands only: the reduction that holds such a read could not be fused ("could not find next producer to
// fuse") or partitioned. The two rewrites here leave only reads of function arguments at data-dependent
// places in a body, and every other value an operand.
//
//===----------------------------------------------------------------------===//

#include "GatherOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// True when `map` reads an operand through a projection of the loops, possibly with constant results
/// ((d0, d1) -> (d0), (d0, d1) -> (d1, d0), (d0, d1) -> (d0, 0)): each result is one loop or a constant.
static bool isProjectionWithConstants(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) { return isa<AffineDimExpr, AffineConstantExpr>(e); });
}

/// The index of element `expr` of a map evaluated at `indices` (one per loop): a loop's index, or a constant.
static Value indexAt(OpBuilder &b, Location loc, AffineExpr expr, ValueRange indices) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return indices[dim.getPosition()];
  return arith::ConstantIndexOp::create(b, loc, cast<AffineConstantExpr>(expr).getValue());
}

/// extract(elementwise(x, y, ...), idx) -> body(extract(x, map_x(idx)), extract(y, map_y(idx)), ...): the
/// element computed where it is read. The producer must be all-parallel with an identity output map (so
/// loop k is the extract's index k), read its operands through projections, and not read its init.
struct ExtractThroughElementwise : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract, PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(extract.getTensor());
    auto producer = result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (!producer || !producer.hasPureTensorSemantics() || producer.getNumParallelLoops() != producer.getNumLoops())
      return rewriter.notifyMatchFailure(extract, "not an elementwise generic's result");
    // A rank-0 value is computed once and read by every element (a norm's square root): it stays.
    if (producer.getNumLoops() == 0)
      return rewriter.notifyMatchFailure(extract, "a scalar, computed once");
    OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
    if (!producer.getMatchingIndexingMap(init).isIdentity())
      return rewriter.notifyMatchFailure(extract, "the result is not written in loop order");
    Block &body = producer.getRegion().front();
    for (OpOperand &output : producer.getDpsInitsMutable())
      if (!producer.getMatchingBlockArgument(&output).use_empty())
        return rewriter.notifyMatchFailure(extract, "the body reads its init");
    for (OpOperand *input : producer.getDpsInputOperands())
      if (!isProjectionWithConstants(producer.getMatchingIndexingMap(input)) ||
          !isa<RankedTensorType>(input->get().getType()))
        return rewriter.notifyMatchFailure(extract, "an operand is read through a non-projection");
    for (Operation &op : body.without_terminator())
      if (!isPure(&op) && !isa<linalg::IndexOp>(op))
        return rewriter.notifyMatchFailure(extract, "the body has side effects");

    Location loc = extract.getLoc();
    ValueRange indices = extract.getIndices();
    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      AffineMap map = producer.getMatchingIndexingMap(input);
      SmallVector<Value> at;
      for (AffineExpr e : map.getResults())
        at.push_back(indexAt(rewriter, loc, e, indices));
      mapping.map(producer.getMatchingBlockArgument(input),
                  tensor::ExtractOp::create(rewriter, loc, input->get(), at).getResult());
    }
    for (Operation &op : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(index.getResult(), indices[index.getDim()]);
        continue;
      }
      rewriter.clone(op, mapping);
    }
    Value yielded = body.getTerminator()->getOperand(result.getResultNumber());
    rewriter.replaceOp(extract, mapping.lookupOrDefault(yielded));
    return success();
  }
};

/// Inside a generic's body, extract(T, [linalg.index i, c, ...]) of a T defined outside the generic, every
/// index a loop of the generic or a constant and at least one a loop: T becomes an input read through
/// (loops) -> (d_i, c, ...).
struct ExtractAtLoopIndicesToOperand : OpRewritePattern<linalg::GenericOp> {
  /// With `scalars`, a rank-0 tensor computed elsewhere (not a constant) becomes an input too, read through
  /// (loops) -> (): the normalization's last step, after upstream's scalar-operand inlining has run.
  ExtractAtLoopIndicesToOperand(MLIRContext *context, bool scalars = false)
      : OpRewritePattern(context), scalars(scalars) {}
  bool scalars;

  /// The map reading `extract`'s element at its indices, when each is a loop of `op` or a constant, and every
  /// place it reads is inside the tensor (a loop as long as the tensor's dimension, a constant below it): an
  /// operand is read at every point of the loops, where the extract may have been guarded.
  std::optional<AffineMap> readMap(linalg::GenericOp op, tensor::ExtractOp extract) const {
    SmallVector<AffineExpr> results;
    MLIRContext *context = op.getContext();
    SmallVector<int64_t> loops = op.getStaticLoopRanges();
    ArrayRef<int64_t> shape = extract.getTensor().getType().getShape();
    for (auto [position, index] : llvm::enumerate(extract.getIndices())) {
      int64_t size = shape[position];
      if (auto loop = index.getDefiningOp<linalg::IndexOp>(); loop && loop->getParentOp() == op.getOperation()) {
        if (ShapedType::isDynamic(size) || loops[loop.getDim()] != size)
          return std::nullopt;
        results.push_back(getAffineDimExpr(loop.getDim(), context));
        continue;
      }
      APInt constant;
      if (matchPattern(index, m_ConstantInt(&constant)) && !ShapedType::isDynamic(size) &&
          constant.getSExtValue() >= 0 && constant.getSExtValue() < size) {
        results.push_back(getAffineConstantExpr(constant.getSExtValue(), context));
        continue;
      }
      return std::nullopt;
    }
    // Reads at constant places only stay: upstream's scalar-operand inlining makes operands of that kind
    // extracts again. Except, in the last step, a whole rank-0 tensor that is not a constant (a norm that
    // divides every element): MLIR 22's vectorizer fails on the extract ("Attempted to vectorize, but
    // failed") and broadcasts the operand.
    bool wholeScalar = scalars && extract.getIndices().empty() && !matchPattern(extract.getTensor(), m_Constant());
    if (!wholeScalar && llvm::none_of(results, [](AffineExpr e) { return isa<AffineDimExpr>(e); }))
      return std::nullopt;
    return AffineMap::get(op.getNumLoops(), 0, results, context);
  }

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<std::pair<tensor::ExtractOp, AffineMap>> reads;
    op.getRegion().walk([&](tensor::ExtractOp extract) {
      Value tensor = extract.getTensor();
      // Values of the body itself, and the read's own place in the tensor, stay as they are.
      if (op.getRegion().isAncestor(tensor.getParentRegion()))
        return;
      if (std::optional<AffineMap> map = readMap(op, extract))
        reads.push_back({extract, *map});
    });
    if (reads.empty())
      return rewriter.notifyMatchFailure(op, "no element read at the loops' own indices");

    SmallVector<Value> inputs = op.getDpsInputs();
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands())
      maps.push_back(op.getMatchingIndexingMap(input));
    for (auto &[extract, map] : reads) {
      inputs.push_back(extract.getTensor());
      maps.push_back(map);
    }
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
    linalg::GenericOp generic =
        kforge::rebuildGeneric(rewriter, op, inputs, op.getDpsInits(), maps, op.getIteratorTypesArray());
    Block &body = generic.getRegion().front();
    unsigned at = op.getNumDpsInputs();
    for (auto &[extract, map] : reads) {
      BlockArgument element = body.insertArgument(at++, extract.getType(), extract.getLoc());
      rewriter.replaceOp(extract, element);
    }
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// The values of an integer constant, as int64 (a dense or a resource blob, as torch-mlir writes them).
static std::optional<std::vector<int64_t>> integerValues(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto type = constant ? dyn_cast<RankedTensorType>(constant.getType()) : nullptr;
  if (!type || !type.hasStaticShape() || !type.getElementType().isSignlessInteger())
    return std::nullopt;
  Attribute attr = constant.getValue();
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    std::vector<int64_t> values;
    values.reserve(type.getNumElements());
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(v.getSExtValue());
    return values;
  }
  if (auto blob = dyn_cast<DenseI64ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<int64_t>> data = blob.tryGetAsArrayRef();
        data && data->size() == size_t(type.getNumElements()))
      return std::vector<int64_t>(data->begin(), data->end());
  if (auto blob = dyn_cast<DenseI32ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<int32_t>> data = blob.tryGetAsArrayRef();
        data && data->size() == size_t(type.getNumElements()))
      return std::vector<int64_t>(data->begin(), data->end());
  return std::nullopt;
}

/// An index table: every element is (i_d floordiv q) mod m of its own coordinate i_d along one dimension d
/// (m 0: no mod), or one value everywhere. What torch.export's decompositions leave as constants (a group norm's batch,
/// group and channel-in-group of every element, one table of N x C each).
struct IndexFormula {
  unsigned dim = 0;
  int64_t q = 1, m = 0;
  std::optional<int64_t> constant; ///< Every element this value (a table of zeros, written as a blob).
};

static std::optional<IndexFormula> indexFormula(ArrayRef<int64_t> shape, const std::vector<int64_t> &values) {
  int64_t total = static_cast<int64_t>(values.size());
  if (total > 0 && llvm::all_of(values, [&](int64_t v) { return v == values[0]; }))
    return IndexFormula{0, 1, 0, values[0]};
  for (unsigned d = 0; d < shape.size(); ++d) {
    int64_t stride = 1;
    for (unsigned e = d + 1; e < shape.size(); ++e)
      stride *= shape[e];
    // f(x): the value at coordinate x along d, every other coordinate 0.
    auto f = [&](int64_t x) { return values[x * stride]; };
    if (f(0) != 0)
      continue;
    int64_t q = 1;
    while (q < shape[d] && f(q) == 0)
      ++q;
    if (q == shape[d] || f(q) != 1)
      continue; // all zero (a splat, left to the constant folders), or not a step of one
    int64_t top = 0;
    for (int64_t x = 0; x < shape[d]; ++x)
      top = std::max(top, f(x));
    IndexFormula formula{d, q, (top + 1) * q < shape[d] ? top + 1 : 0};
    auto expected = [&](int64_t x) { return formula.m ? (x / q) % formula.m : x / q; };
    bool matches = true;
    for (int64_t at = 0; at < total && matches; ++at)
      matches = values[at] == expected((at / stride) % shape[d]);
    if (matches)
      return formula;
  }
  return std::nullopt;
}

/// A constant integer operand that is an index table (IndexFormula) is computed in the body from the loop
/// that reads its dimension: no table in memory (at KernelBench's size, 8 tables of 8192 x 4096 int64 made the
/// group norm's payload 4.3 GB, and a kernel would read them all).
struct ComputeIndexTables : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
        continue;
      std::optional<std::vector<int64_t>> values = integerValues(input->get());
      if (!values)
        continue;
      auto type = cast<RankedTensorType>(input->get().getType());
      std::optional<IndexFormula> formula = indexFormula(type.getShape(), *values);
      if (!formula)
        continue;
      // The same generic without the operand; its block argument computed from the loop instead.
      unsigned position = input->getOperandNumber();
      SmallVector<Value> inputs;
      SmallVector<AffineMap> maps;
      for (OpOperand *other : op.getDpsInputOperands())
        if (other != input) {
          inputs.push_back(other->get());
          maps.push_back(op.getMatchingIndexingMap(other));
        }
      for (OpOperand &init : op.getDpsInitsMutable())
        maps.push_back(op.getMatchingIndexingMap(&init));
      linalg::GenericOp generic =
          kforge::rebuildGeneric(rewriter, op, inputs, op.getDpsInits(), maps, op.getIteratorTypesArray());
      Block &body = generic.getRegion().front();
      BlockArgument table = body.getArgument(position);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&body);
      Location loc = op.getLoc();
      Value element;
      if (formula->constant) {
        element =
            arith::ConstantOp::create(rewriter, loc, rewriter.getIntegerAttr(table.getType(), *formula->constant));
      } else {
        Value index = linalg::IndexOp::create(rewriter, loc, map.getDimPosition(formula->dim));
        if (formula->q > 1)
          index =
              arith::DivUIOp::create(rewriter, loc, index, arith::ConstantIndexOp::create(rewriter, loc, formula->q));
        if (formula->m > 0)
          index =
              arith::RemUIOp::create(rewriter, loc, index, arith::ConstantIndexOp::create(rewriter, loc, formula->m));
        element = arith::IndexCastOp::create(rewriter, loc, table.getType(), index);
      }
      rewriter.replaceAllUsesWith(table, element);
      body.eraseArgument(position);
      rewriter.replaceOp(op, generic.getResults());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no constant index table");
  }
};

/// The operands of `op` whose elements the condition of `check` (in op's body) is computed from: the values
/// behind the block arguments in its backward slice, in operand order. Empty when the slice leaves the body or
/// reads an init.
static SmallVector<Value> checkedOperands(linalg::GenericOp op, cf::AssertOp check) {
  SmallVector<Value> operands;
  llvm::SmallDenseSet<unsigned> positions;
  SmallVector<Value> work{check.getArg()};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(v)) {
      if (argument.getOwner() != op.getBody() || argument.getArgNumber() >= op.getNumDpsInputs())
        return {};
      positions.insert(argument.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != op.getBody())
      continue; // a constant from outside
    if (seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
    if (positions.contains(i))
      operands.push_back(op.getDpsInputOperand(i)->get());
  return operands;
}

/// True when `check` (an assert in `op`'s body) is made again by another linalg.generic of the same block:
/// an assert with the same message, computed from the same operands, each of whose elements that op reads
/// (through a projected permutation that keeps every dimension of the operand).
static bool repeatedElsewhere(linalg::GenericOp op, cf::AssertOp check) {
  SmallVector<Value> operands = checkedOperands(op, check);
  if (operands.empty())
    return false;
  for (Operation *user : operands.front().getUsers()) {
    auto other = dyn_cast<linalg::GenericOp>(user);
    if (!other || other == op || other->getBlock() != op->getBlock())
      continue;
    bool readsWhole = llvm::all_of(operands, [&](Value v) {
      return llvm::any_of(other.getDpsInputOperands(), [&](OpOperand *input) {
        AffineMap map = other.getMatchingIndexingMap(input);
        return input->get() == v && map.isProjectedPermutation() && map.getNumResults() > 0;
      });
    });
    if (!readsWhole)
      continue;
    bool same = false;
    other.getBody()->walk([&](cf::AssertOp again) {
      same = same || (again.getMsg() == check.getMsg() && checkedOperands(other, again) == operands);
    });
    if (same)
      return true;
  }
  return false;
}

/// A linalg.generic without results whose body only checks (asserts on values computed from its operands):
/// torch-mlir writes a gather's index bounds checks so, once before the op that reads through the indices
/// and again inside that op. The standalone copy computes nothing and no dispatch can hold an op without
/// results (kforge-partition refused cross entropy for it), so it is erased where another op of the block
/// makes every one of its checks again: the same message, on the same operands, each element read.
struct EraseRepeatedChecks : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 0 || op.getNumDpsInits() != 0 || !op.hasPureTensorSemantics())
      return failure();
    SmallVector<cf::AssertOp> checks;
    for (Operation &inner : op.getBody()->without_terminator()) {
      if (auto check = dyn_cast<cf::AssertOp>(inner))
        checks.push_back(check);
      else if (!isPure(&inner))
        return failure();
    }
    if (checks.empty() || !llvm::all_of(checks, [&](cf::AssertOp c) { return repeatedElsewhere(op, c); }))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kforge::populateScalarOperandsPatterns(RewritePatternSet &patterns) {
  patterns.add<ExtractAtLoopIndicesToOperand>(patterns.getContext(), /*scalars=*/true);
}

void kforge::populateGatherOperandsPatterns(RewritePatternSet &patterns) {
  patterns.add<ExtractThroughElementwise, ExtractAtLoopIndicesToOperand, ComputeIndexTables, EraseRepeatedChecks>(
      patterns.getContext());
}

linalg::GenericOp kforge::rebuildGeneric(RewriterBase &rewriter, linalg::GenericOp op, ValueRange inputs,
                                         ValueRange inits, ArrayRef<AffineMap> maps,
                                         ArrayRef<utils::IteratorType> iterators) {
  auto generic = linalg::GenericOp::create(rewriter, op.getLoc(), inits.getTypes(), inputs, inits, maps, iterators);
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(), generic.getRegion().begin());
  return generic;
}
