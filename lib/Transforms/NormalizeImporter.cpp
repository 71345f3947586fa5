//===- NormalizeImporter.cpp - importer (torch-mlir) IR into kforge's payload forms ===//
//
// See the pass description in Passes.td. Upstream patterns do most of the work (generalization, constant
// operand inlining, dead operand/result erasure, elementwise fusion, canonicalization); kforge adds what
// upstream lacks: transposes folded into contraction maps, keepdim unit dimensions dropped, integer powers,
// loops that every op walks together collapsed into one (CollapseDimensions.cpp).
//
//===----------------------------------------------------------------------===//

#include "CollapseDimensions.h"
#include "GatherOperands.h"
#include "LoopOrderAndPadding.h"
#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
#include <type_traits>

namespace kforge {
#define GEN_PASS_DEF_KFORGENORMALIZEIMPORTER
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

/// Largest |exponent| of a constant power written as multiplications (x^16: 5 multiplications).
static constexpr int64_t kMaxMultipliedExponent = 16;

namespace {
/// transpose(W) read by a contraction: the contraction reads W through the permuted map instead.
template <typename ContractionOp>
struct FoldTransposeIntoContraction : OpRewritePattern<ContractionOp> {
  using OpRewritePattern<ContractionOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ContractionOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto transpose = input->get().template getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      // out[i_0, ..., i_n] = in[...] with in's dimension permutation[k] indexed by i_k.
      AffineMap map = maps[input->getOperandNumber()];
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [k, dim] : llvm::enumerate(transpose.getPermutation()))
        results[dim] = map.getResult(k);
      maps[input->getOperandNumber()] = AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      rewriter.modifyOpInPlace(op, [&] { input->set(transpose.getInput()); });
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps)); });
    return success();
  }
};

/// Whether `narrow` is a float type narrower than `wide` (bf16 / f16 beside f32).
static bool isNarrowerFloat(Type narrow, Type wide) {
  auto n = dyn_cast<FloatType>(narrow), w = dyn_cast<FloatType>(wide);
  return n && w && n.getWidth() < w.getWidth();
}

/// An elementwise op that only converts its one input's element type (torch-mlir's `extf` to f64 before a
/// norm's statistics): cheaper to recompute in each consumer than to store, where stored it is a tensor of
/// twice the input's bytes that every consumer reads again.
static bool isElementConversion(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 || generic->getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  Block &body = generic.getRegion().front();
  Operation *yield = body.getTerminator();
  if (body.getOperations().size() != 2)
    return false;
  Operation &cast = body.front();
  return isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp, arith::ExtSIOp, arith::ExtUIOp>(cast) &&
         cast.getOperand(0) == body.getArgument(0) && yield->getOperand(0) == cast.getResult(0);
}

/// Where a contraction's input can be read in a narrower float type than the extended one it is given:
/// the narrow tensor and the map to read it through. Importers upcast bf16 / f16 operands before a
/// contraction (torch-mlir: `extf` of the input and of the transposed weight, then an f32 matmul); the
/// contraction's own body extends its inputs to the accumulator's type, so reading the narrow values is the
/// same computation, and it is the form the tensor-core schedules take.
struct NarrowSource {
  Value value;
  AffineMap map;
  /// The producer yields `extf(v)` for this result: it is to be narrowed to yield `v` (every user of the
  /// result is a contraction, which extends it itself).
  linalg::GenericOp narrowedProducer;
  unsigned narrowedResult = 0;
};

/// The extension `arith.extf` that `value`'s producer yields for it, when it is the last op on that result's
/// way out (the producer's own body extends a narrow value as its last step), or null.
static arith::ExtFOp yieldedExtension(linalg::GenericOp producer, unsigned result) {
  auto yield = cast<linalg::YieldOp>(producer.getBody()->getTerminator());
  return yield.getOperand(result).getDefiningOp<arith::ExtFOp>();
}

/// `value` read through `map` by a contraction, looked at through the copies that only permute or extend it
/// (a linalg.transpose, or a generic that yields its one input, or that input's extf, through permutation
/// maps): the tensor they copy and the map to read it through directly.
static std::pair<Value, AffineMap> throughCopies(Value value, AffineMap map) {
  while (true) {
    if (auto transpose = value.getDefiningOp<linalg::TransposeOp>()) {
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [k, dim] : llvm::enumerate(transpose.getPermutation()))
        results[dim] = map.getResult(k);
      value = transpose.getInput();
      map = AffineMap::get(map.getNumDims(), 0, results, map.getContext());
      continue;
    }
    auto copy = value.getDefiningOp<linalg::GenericOp>();
    if (!copy || !copy.hasPureTensorSemantics() || copy.getNumDpsInputs() != 1 || copy.getNumResults() != 1 ||
        copy.getNumParallelLoops() != copy.getNumLoops())
      break;
    Value yielded = cast<linalg::YieldOp>(copy.getBody()->getTerminator()).getOperand(0);
    if (auto extension = yielded.getDefiningOp<arith::ExtFOp>())
      yielded = extension.getIn();
    AffineMap inMap = copy.getMatchingIndexingMap(copy.getDpsInputOperand(0));
    AffineMap outMap = copy.getMatchingIndexingMap(copy.getDpsInitOperand(0));
    if (yielded != copy.getBody()->getArgument(0) || !inMap.isPermutation() || !outMap.isPermutation())
      break;
    value = copy.getDpsInputOperand(0)->get();
    map = inMap.compose(inversePermutation(outMap)).compose(map);
  }
  return {value, map};
}

/// Whether a contraction may read an input through `after` instead of `before`: the same loops (a permutation
/// of them), and a batch matmul's batch loop first (a view that moves it, attention's head transpose, is no
/// batch_matmul operand).
template <typename ContractionOp> static bool isContractionMap(AffineMap before, AffineMap after) {
  return after.isProjectedPermutation() && after.getNumResults() == before.getNumResults() &&
         std::is_permutation(after.getResults().begin(), after.getResults().end(), before.getResults().begin()) &&
         (!std::is_same_v<ContractionOp, linalg::BatchMatmulOp> || after.getResult(0) == before.getResult(0));
}

/// The input's narrow source: through the copies that permute or extend it when the contraction can read
/// their source directly; else its producer narrowed in place, when that producer ends by extending a
/// narrow value, the contraction is the result's only user (another user would be handed the narrow tensor
/// too) and the init is never read; else the input as it is.
template <typename ContractionOp> static NarrowSource narrowSource(Value input, AffineMap map) {
  auto [value, composed] = throughCopies(input, map);
  if (value != input && isContractionMap<ContractionOp>(map, composed))
    return NarrowSource{value, composed, {}, 0};
  auto producer = input.getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer.hasPureTensorSemantics() || !input.hasOneUse())
    return NarrowSource{input, map, {}, 0};
  unsigned result = cast<OpResult>(input).getResultNumber();
  OpOperand *init = producer.getDpsInitOperand(result);
  if (!yieldedExtension(producer, result) || producer.payloadUsesValueFromOperand(init) ||
      !producer.getMatchingIndexingMap(init).isPermutation())
    return NarrowSource{input, map, {}, 0};
  return NarrowSource{input, map, producer, result};
}

/// Narrows `producer`'s result `result` to yield the value it extended (its init becomes an empty tensor of
/// the narrow type; the init is never read: narrowSource checked).
static Value narrowProducer(PatternRewriter &rewriter, linalg::GenericOp producer, unsigned result) {
  arith::ExtFOp extension = yieldedExtension(producer, result);
  Type narrow = extension.getIn().getType();
  OpOperand *init = producer.getDpsInitOperand(result);
  auto initType = cast<RankedTensorType>(init->get().getType());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(producer);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, producer.getLoc(), init->get());
  Value empty = tensor::EmptyOp::create(rewriter, producer.getLoc(), sizes, narrow);
  auto yield = cast<linalg::YieldOp>(producer.getBody()->getTerminator());
  rewriter.modifyOpInPlace(producer, [&] {
    init->set(empty);
    producer.getMatchingBlockArgument(init).setType(narrow);
    producer->getResult(result).setType(initType.clone(narrow));
    yield->setOperand(result, extension.getIn());
  });
  return producer->getResult(result);
}

/// A contraction whose inputs all come extended from one narrower float type (bf16 x bf16 -> f32 written as
/// extf then an f32 matmul) reads the narrow inputs instead: a mixed-precision contraction (bf16 inputs, f32
/// accumulation), exactly the same values, and the form mma / wgmma take.
template <typename ContractionOp> struct FoldExtensionsIntoContraction : OpRewritePattern<ContractionOp> {
  using OpRewritePattern<ContractionOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ContractionOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1)
      return failure();
    Type accumulator = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<NarrowSource> sources;
    Type common;
    bool changes = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      NarrowSource source = narrowSource<ContractionOp>(input->get(), maps[input->getOperandNumber()]);
      Type type = source.narrowedProducer
                      ? yieldedExtension(source.narrowedProducer, source.narrowedResult).getIn().getType()
                      : getElementTypeOrSelf(source.value.getType());
      if (common && type != common)
        return failure(); // bf16 x f32, or bf16 x f16: left as the importer wrote it
      common = type;
      changes |= source.value != input->get() || source.narrowedProducer;
      sources.push_back(source);
    }
    // The inputs in the accumulator's type (a copy or transpose folded into a map), or all extended from
    // one narrower float type.
    if (!changes || (common != accumulator && !isNarrowerFloat(common, accumulator)))
      return failure();
    SmallVector<Value> inputs;
    for (auto [i, source] : llvm::enumerate(sources)) {
      inputs.push_back(source.narrowedProducer
                           ? narrowProducer(rewriter, source.narrowedProducer, source.narrowedResult)
                           : source.value);
      maps[i] = source.map;
    }
    auto replacement = ContractionOp::create(rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits());
    replacement.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    rewriter.replaceOp(op, replacement->getResults());
    return success();
  }
};

/// A convolution whose window is one point and whose strides are 1 (a 1x1 convolution): a contraction over its
/// input channels. As a generic its unit window loops are dropped and its output pixels merged, so it becomes
/// the matmul (NHWC) or the batch matmul with the filter shared by every image (NCHW) it is, for the
/// contraction paths (stage, mma, wgmma); as a convolution it would run as a direct one.
static bool isPointwise(linalg::LinalgOp op) {
  FailureOr<linalg::ConvolutionDimensions> dims = linalg::inferConvolutionDims(op);
  if (failed(dims) || !dims->depth.empty())
    return false;
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  return llvm::all_of(dims->filterLoop, [&](unsigned loop) { return loops[loop] == 1; }) &&
         llvm::all_of(dims->strides, [](int64_t stride) { return stride == 1; });
}

/// Named ops other than fills, contractions and convolutions (but 1x1 ones) become linalg.generic: the form kforge's
/// fusion and schedules match (a schedule fuses fill / matmul / batch_matmul / generic producers only).
struct GeneralizeNamedOps : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    // A copy stays one: as an identity generic, canonicalization would fold it to its input, and a payload
    // that only copies would return its argument.
    if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(op.getOperation()) || !op.hasPureTensorSemantics())
      return failure();
    if (linalg::isaContractionOpInterface(op) || (linalg::isaConvolutionOpInterface(op) && !isPointwise(op)))
      return failure();
    // A transpose read by a contraction is folded into it instead (the first phase); one left here has
    // other users.
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// A generic that computes a matmul or batch_matmul (one M, N and K loop, at most one batch loop; its body a
/// multiply-add, possibly of operands extended inside it: mixed precision written out, bf16 x bf16 -> f32) as the
/// named op, whose schedules (stage, mma, wgmma) take it; as a generic it would be scheduled as a row reduction.
/// A read as M x K or K x M, B as K x N or N x K (the named op keeps the maps, as for a folded transpose). One
/// operand may lack the batch loop (a 1x1 convolution in NCHW: the filter, shared by every image; torch.matmul
/// of a batch by one matrix): the batch_matmul then reads it broadcast, as its indexing maps allow.
struct SpecializeContraction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
        !linalg::isaContractionOpInterface(op) || op.getNumReductionLoops() != 1)
      return failure();
    // The loops in the named ops' order ([b,] m, n, k): the result walks the parallel ones in order, and the
    // last loop is the reduction.
    MLIRContext *ctx = op.getContext();
    unsigned loops = op.getNumLoops();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if ((loops != 3 && loops != 4) ||
        maps[2] != AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(loops - 1) ||
        op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
      return failure();
    bool batch = loops == 4;
    unsigned b = 0, m = loops - 3, n = loops - 2, k = loops - 1;
    auto map = [&](unsigned row, unsigned col, bool withBatch) {
      SmallVector<AffineExpr> results;
      if (withBatch)
        results.push_back(getAffineDimExpr(b, ctx));
      results.push_back(getAffineDimExpr(row, ctx));
      results.push_back(getAffineDimExpr(col, ctx));
      return AffineMap::get(loops, 0, results, ctx);
    };
    // A is the input with the rows (M), B the one with the columns (N): operands in the other order are
    // swapped (the product commutes). Each in one of the layouts the named ops take; a batch operand may lack
    // the batch loop (read broadcast: a 1x1 convolution's filter in NCHW, torch.matmul of a batch by one
    // matrix), though not both.
    auto layout = [&](AffineMap operand, unsigned rows, unsigned cols) -> std::optional<bool> {
      for (bool withBatch : {true, false}) {
        if (withBatch && !batch)
          continue;
        if (operand == map(rows, cols, withBatch) || operand == map(cols, rows, withBatch))
          return withBatch;
      }
      return std::nullopt;
    };
    SmallVector<Value> inputs(op.getDpsInputs());
    std::optional<bool> aBatch = layout(maps[0], m, k), bBatch = layout(maps[1], k, n);
    if (!aBatch || !bBatch) {
      aBatch = layout(maps[1], m, k);
      bBatch = layout(maps[0], k, n);
      std::swap(inputs[0], inputs[1]);
      std::swap(maps[0], maps[1]);
    }
    if (!aBatch || !bBatch || (batch && !*aBatch && !*bBatch))
      return failure();
    // The body's only other ops extend the operands (a named matmul casts them to the result's type).
    for (Operation &inner : op.getBody()->without_terminator())
      if (!isa<arith::MulFOp, arith::AddFOp, arith::MulIOp, arith::AddIOp, arith::ExtFOp>(inner))
        return failure();
    SmallVector<Value> inits(op.getDpsInits());
    SmallVector<Type> types(op->getResultTypes());
    SmallVector<NamedAttribute> attributes = {
        rewriter.getNamedAttr("indexing_maps", rewriter.getAffineMapArrayAttr(maps))};
    Operation *named =
        batch ? linalg::BatchMatmulOp::create(rewriter, op.getLoc(), types, inputs, inits, attributes).getOperation()
              : linalg::MatmulOp::create(rewriter, op.getLoc(), types, inputs, inits, attributes).getOperation();
    rewriter.replaceOp(op, named->getResults());
    return success();
  }
};

/// A matmul with one column (torch's x @ v with v of K x 1) or one row (a Linear on a batch of one) as the
/// reduction it is: over A's rows (a matvec), or over B's columns read along K (a vector times B), the unit
/// dimension collapsed away on its operands and expanded back on its result. As a matmul it got no GPU
/// schedule (no block tile divides one column); as a row reduction the row kernels take it. The matmul's own
/// body (its casts, multiply and add) moves into the generic, so it computes the same values.
struct MatmulWithUnitDimension : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::MatmulOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1)
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType.hasStaticShape() || resultType.getRank() != 2)
      return failure();
    // The matmul's loops are (m, n, k); the unit one goes, the other parallel loop and k stay, in that order.
    unsigned unit = resultType.getDimSize(1) == 1 ? 1 : resultType.getDimSize(0) == 1 ? 0 : 2;
    if (unit == 2)
      return failure();
    MLIRContext *ctx = op.getContext();
    auto newDim = [&](unsigned old) { return getAffineDimExpr(old == 2 ? 1 : 0, ctx); };
    SmallVector<Value> operands;
    SmallVector<AffineMap> maps;
    for (auto [operand, map] : llvm::zip(op->getOperands(), op.getIndexingMapsArray())) {
      auto type = cast<RankedTensorType>(operand.getType());
      SmallVector<AffineExpr> results;
      SmallVector<int64_t> shape;
      for (auto [i, e] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (!dim || type.isDynamicDim(i))
          return failure();
        if (dim.getPosition() == unit)
          continue;
        results.push_back(newDim(dim.getPosition()));
        shape.push_back(type.getDimSize(i));
      }
      if (results.size() < map.getNumResults())
        operand =
            tensor::CollapseShapeOp::create(rewriter, op.getLoc(), RankedTensorType::get(shape, type.getElementType()),
                                            operand, SmallVector<ReassociationIndices>{{0, 1}});
      operands.push_back(operand);
      maps.push_back(AffineMap::get(2, 0, results, ctx));
    }
    Value init = operands.pop_back_val();
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{init.getType()}, operands, ValueRange{init}, maps,
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel, utils::IteratorType::reduction});
    rewriter.inlineRegionBefore(op->getRegion(0), generic.getRegion(), generic.getRegion().end());
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, resultType, generic.getResult(0),
                                                       SmallVector<ReassociationIndices>{{0, 1}});
    return success();
  }
};

/// True when the function returns `value` itself: kforge-tune's root is the op producing the first result,
/// so a returned result keeps its shape (no reshape between it and the return).
static bool isReturned(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) { return isa<func::ReturnOp>(user); });
}

/// Operand dimensions of size 1 read through the constant 0 (keepdim reductions and the broadcasts of
/// their results) are dropped: tiling needs the output read through a projected permutation.
struct DropConstantUnitDims : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The dimensions of `type` that `map` reads at constant 0 and that have size 1.
  static SmallVector<int64_t> droppable(RankedTensorType type, AffineMap map) {
    SmallVector<int64_t> dims;
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      if (constant && constant.getValue() == 0 && type.getDimSize(dim) == 1)
        dims.push_back(dim);
    }
    return dims;
  }

  /// Groups for a collapse_shape that drops `dropped` from a rank-`rank` shape: each dropped dimension
  /// joins the next kept one (trailing ones the last kept one); none kept: no groups (rank 0).
  static SmallVector<ReassociationIndices> reassociation(int64_t rank, ArrayRef<int64_t> dropped) {
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (int64_t dim = 0; dim < rank; ++dim) {
      pending.push_back(dim);
      if (llvm::is_contained(dropped, dim))
        continue;
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      groups.back().append(pending.begin(), pending.end());
    return groups;
  }

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Location loc = op.getLoc();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> operands(op->getOperands());
    SmallVector<std::optional<SmallVector<ReassociationIndices>>> collapsed(operands.size());
    bool changed = false;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      unsigned index = operand.getOperandNumber();
      if (!type || (op.isDpsInit(&operand) && isReturned(op.getTiedOpResult(&operand))))
        continue;
      SmallVector<int64_t> dropped = droppable(type, maps[index]);
      if (dropped.empty())
        continue;
      SmallVector<ReassociationIndices> groups = reassociation(type.getRank(), dropped);
      SmallVector<AffineExpr> kept;
      SmallVector<int64_t> shape;
      for (auto [dim, expr] : llvm::enumerate(maps[index].getResults())) {
        if (llvm::is_contained(dropped, static_cast<int64_t>(dim)))
          continue;
        kept.push_back(expr);
        shape.push_back(type.getDimSize(dim));
      }
      maps[index] = AffineMap::get(maps[index].getNumDims(), 0, kept, op.getContext());
      operands[index] = tensor::CollapseShapeOp::create(rewriter, loc, type.clone(shape), operand.get(), groups);
      collapsed[index] = groups;
      changed = true;
    }
    if (!changed)
      return failure();

    unsigned numInputs = op.getNumDpsInputs();
    ValueRange inputs = ValueRange(operands).take_front(numInputs);
    ValueRange inits = ValueRange(operands).drop_front(numInputs);
    linalg::GenericOp generic = kforge::rebuildGeneric(rewriter, op, inputs, inits, maps, op.getIteratorTypesArray());
    SmallVector<Value> results;
    for (auto [index, result] : llvm::enumerate(generic.getResults())) {
      std::optional<SmallVector<ReassociationIndices>> &groups = collapsed[numInputs + index];
      Type type = op.getResult(index).getType();
      results.push_back(groups ? Value(tensor::ExpandShapeOp::create(rewriter, loc, type, result, *groups))
                               : Value(result));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// x^n for a small constant integer n as multiplications (square-and-multiply), 1 / x^|n| for n < 0.
static Value multiplyPower(PatternRewriter &rewriter, Location loc, Value base, int64_t exponent) {
  Type type = base.getType();
  Value one = arith::ConstantOp::create(rewriter, loc, type, rewriter.getFloatAttr(type, 1.0));
  uint64_t n = exponent < 0 ? -static_cast<uint64_t>(exponent) : static_cast<uint64_t>(exponent);
  Value result, square = base;
  for (; n; n >>= 1) {
    if (n & 1)
      result = result ? arith::MulFOp::create(rewriter, loc, result, square).getResult() : square;
    if (n > 1)
      square = arith::MulFOp::create(rewriter, loc, square, square);
  }
  if (!result)
    return one;
  return exponent < 0 ? arith::DivFOp::create(rewriter, loc, one, result).getResult() : result;
}

/// math.powf(x, c) with c a small integer: multiplications (pow's own expansions, exp(c * log x), lose
/// the sign of negative bases: MinGPT's GELU computes x^3).
struct IntegralPowF : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::PowFOp op, PatternRewriter &rewriter) const override {
    FloatAttr exponent;
    if (!isa<FloatType>(op.getType()) || !matchPattern(op.getRhs(), m_Constant(&exponent)))
      return failure();
    double value = exponent.getValueAsDouble();
    if (value != std::trunc(value) || std::abs(value) > kMaxMultipliedExponent)
      return failure();
    rewriter.replaceOp(op, multiplyPower(rewriter, op.getLoc(), op.getLhs(), static_cast<int64_t>(value)));
    return success();
  }
};

/// math.fpowi: a small constant exponent as multiplications; any other exponent as an i32, the type
/// libdevice's __nv_powif takes (upstream's GPU lowering passes an i64 through a mismatched prototype).
struct NormalizeFPowI : OpRewritePattern<math::FPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FPowIOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType()))
      return failure();
    Location loc = op.getLoc();
    APInt exponent;
    if (matchPattern(op.getRhs(), m_ConstantInt(&exponent)) && exponent.getSignificantBits() <= 64 &&
        std::abs(exponent.getSExtValue()) <= kMaxMultipliedExponent) {
      rewriter.replaceOp(op, multiplyPower(rewriter, loc, op.getLhs(), exponent.getSExtValue()));
      return success();
    }
    auto type = dyn_cast<IntegerType>(op.getRhs().getType());
    if (!type || type.getWidth() <= 32)
      return failure();
    // Clamped to [-2^31, 2^31 - 2], then the parity put back: past 2^31 only the sign of the result and
    // whether it over- or underflows matter, and both keep.
    Value n = op.getRhs();
    auto constant = [&](int64_t value) { return arith::ConstantIntOp::create(rewriter, loc, type, value).getResult(); };
    Value clamped = arith::MaxSIOp::create(
        rewriter, loc, arith::MinSIOp::create(rewriter, loc, n, constant(INT32_MAX - 1)), constant(INT32_MIN));
    Value parity = arith::AndIOp::create(rewriter, loc, n, constant(1));
    Value narrow = arith::TruncIOp::create(rewriter, loc, rewriter.getI32Type(),
                                           arith::OrIOp::create(rewriter, loc, clamped, parity));
    rewriter.replaceOpWithNewOp<math::FPowIOp>(op, op.getLhs(), narrow);
    return success();
  }
};

/// Upstream's unit-dimension folding on each linalg.generic whose results the function does not return
/// (see isReturned): loops of size 1 and the operand dimensions they index go, reshapes take their place.
/// Not a greedy pattern: upstream's dropUnitDims may leave dead ops when it gives up.
static void dropUnitLoops(Operation *root) {
  SmallVector<linalg::GenericOp> generics;
  root->walk([&](linalg::GenericOp op) {
    // A returned result keeps its shape: only unit loops that none of its dimensions walks (a 1x1
    // convolution's window) are dropped from its op.
    auto keepsShape = [](Value result) {
      return !isReturned(result) || !llvm::is_contained(cast<ShapedType>(result.getType()).getShape(), 1);
    };
    if (op.hasPureTensorSemantics() && llvm::all_of(op->getResults(), keepsShape) &&
        llvm::is_contained(op.getStaticLoopRanges(), 1))
      generics.push_back(op);
  });
  linalg::ControlDropUnitDims options;
  options.rankReductionStrategy = linalg::ControlDropUnitDims::RankReductionStrategy::ReassociativeReshape;
  IRRewriter rewriter(root->getContext());
  for (linalg::GenericOp op : generics) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::DropUnitDimsResult> result = linalg::dropUnitDims(rewriter, op, options);
    if (succeeded(result))
      rewriter.replaceOp(op, result->replacements);
  }
}

/// A result returned through reshapes (`return expand_shape(generic(outs(empty)))`, or of a fill of the
/// empty tensor) is computed in place in
/// the returned buffer: the op's init becomes the returned shape's empty tensor reshaped back
/// (`collapse_shape(empty)`), so bufferization writes the result buffer through a view instead of copying a
/// temporary into it after the kernels (a copy on the host, which the GPU path refuses). Run once, after the
/// greedy rewrites: the tensor.empty folding among them would undo it.
static void computeReturnedReshapesInPlace(func::FuncOp function) {
  function.walk([](func::ReturnOp ret) {
    for (OpOperand &returned : ret->getOpOperands()) {
      SmallVector<Operation *> reshapes; // from the return inwards
      Value value = returned.get();
      while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(value.getDefiningOp())) {
        reshapes.push_back(value.getDefiningOp());
        value = value.getDefiningOp()->getOperand(0);
      }
      auto producer = value.getDefiningOp<DestinationStyleOpInterface>();
      auto returnedType = dyn_cast<RankedTensorType>(returned.get().getType());
      if (reshapes.empty() || !producer || !returnedType || !returnedType.hasStaticShape())
        continue;
      OpOperand *init = producer.getTiedOpOperand(cast<OpResult>(value));
      // A reduction's init is written whole first, into the empty tensor (a matvec's zeros by a fill, a
      // convolution's bias broadcast by a generic that never reads its own init): that op writes the view too.
      if (auto writer = init ? init->get().getDefiningOp<linalg::LinalgOp>() : nullptr;
          writer && writer->hasOneUse() && writer->getNumResults() == 1 &&
          writer.getNumLoops() == writer.getNumParallelLoops() &&
          !writer.payloadUsesValueFromOperand(writer.getDpsInitOperand(0)))
        init = writer.getDpsInitOperand(0);
      auto empty = init ? init->get().getDefiningOp<tensor::EmptyOp>() : nullptr;
      if (!empty || !empty->hasOneUse())
        continue;
      OpBuilder b(init->getOwner()); // the producer, or the op writing its init
      Value destination =
          tensor::EmptyOp::create(b, empty.getLoc(), returnedType.getShape(), returnedType.getElementType());
      for (Operation *reshape : reshapes) {
        auto sourceType = cast<RankedTensorType>(reshape->getOperand(0).getType());
        if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
          destination = tensor::CollapseShapeOp::create(b, reshape->getLoc(), sourceType, destination,
                                                        expand.getReassociationIndices());
        else
          destination = tensor::ExpandShapeOp::create(b, reshape->getLoc(), sourceType, destination,
                                                      cast<tensor::CollapseShapeOp>(reshape).getReassociationIndices());
      }
      init->set(destination);
      empty->erase();
    }
  });
}

/// Ops with rank-0 results (a loss's total reduction, the scalar arithmetic after it) get one leading parallel
/// loop of size 1 and tensor<1x...> results: kforge's schedules tile a root's leading parallel loop, and a
/// total reduction becomes a row reduction of one row, which the row kernels (and their splits) take. A
/// promoted op reads a promoted producer through that loop, as an operand, where it read it through a
/// rank-0 map or a `tensor.extract` in its body (upstream's canonicalization inlines rank-0 operands so);
/// other users read the rank-0 value through a `tensor.collapse_shape`. Run last: unit-loop dropping undoes
/// it, so a payload normalized twice is promoted again, the same way.
static void promoteRankZeroResults(func::FuncOp function) {
  auto rankZero = [](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.getRank() == 0;
  };
  SmallVector<linalg::GenericOp> ops;
  function.walk([&](linalg::GenericOp op) {
    if (op.hasPureTensorSemantics() && op->getNumResults() > 0 && llvm::all_of(op->getResults(), rankZero) &&
        op->getParentOp() == function)
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  DenseMap<Value, Value> promoted; // rank-0 result -> its tensor<1x...> replacement
  auto oneElement = [](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return RankedTensorType::get({1}, tensor.getElementType(), tensor.getEncoding());
  };
  IRRewriter rewriter(function.getContext());
  for (linalg::GenericOp op : ops) {
    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    unsigned loops = op.getNumLoops() + 1;
    AffineMap throughUnitLoop = AffineMap::get(loops, 0, {getAffineDimExpr(0, context)}, context);
    rewriter.setInsertionPoint(op);

    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (Value replacement = promoted.lookup(input->get())) {
        inputs.push_back(replacement);
        maps.push_back(throughUnitLoop);
      } else {
        inputs.push_back(input->get());
        maps.push_back(op.getMatchingIndexingMap(input).shiftDims(1));
      }
    }
    // Reads of promoted producers inside the body become operands read through the unit loop.
    SmallVector<tensor::ExtractOp> extracts;
    op.getBody()->walk([&](tensor::ExtractOp extract) {
      if (promoted.count(extract.getTensor()))
        extracts.push_back(extract);
    });
    for (tensor::ExtractOp extract : extracts) {
      inputs.push_back(promoted.lookup(extract.getTensor()));
      maps.push_back(throughUnitLoop);
    }
    SmallVector<Value> inits;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(tensor::ExpandShapeOp::create(rewriter, loc, oneElement(init.get().getType()), init.get(),
                                                    ArrayRef<ReassociationIndices>{}));
      maps.push_back(throughUnitLoop);
    }
    SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
    llvm::append_range(iterators, op.getIteratorTypesArray());
    linalg::GenericOp generic = kforge::rebuildGeneric(rewriter, op, inputs, inits, maps, iterators);
    Block *body = generic.getBody();
    unsigned position = op.getNumDpsInputs();
    for (tensor::ExtractOp extract : extracts) {
      BlockArgument value = body->insertArgument(position++, extract.getType(), extract.getLoc());
      rewriter.replaceAllUsesWith(extract.getResult(), value);
      rewriter.eraseOp(extract);
    }
    body->walk([&](linalg::IndexOp index) { index.setDim(index.getDim() + 1); });
    for (auto [result, replacement] : llvm::zip(op->getResults(), generic->getResults())) {
      Value collapsed = tensor::CollapseShapeOp::create(rewriter, loc, result.getType(), replacement,
                                                        ArrayRef<ReassociationIndices>{});
      promoted[collapsed] = replacement;
      rewriter.replaceAllUsesWith(result, collapsed);
    }
    rewriter.eraseOp(op);
  }
  // Collapses that only promoted ops read went with the operands they became.
  function.walk([&](tensor::CollapseShapeOp collapse) {
    if (collapse->use_empty())
      rewriter.eraseOp(collapse);
  });
}

struct NormalizeImporterPass : kforge::impl::KforgeNormalizeImporterBase<NormalizeImporterPass> {
  using KforgeNormalizeImporterBase::KforgeNormalizeImporterBase;
  /// The rewrites that run to a fixed point: upstream's and kforge's patterns plus canonicalization.
  FrozenRewritePatternSet patterns;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    kforge::populateLoopOrderAndPaddingPatterns(set);
    kforge::populateGatherOperandsPatterns(set);
    set.add<GeneralizeNamedOps, SpecializeContraction, MatmulWithUnitDimension, DropConstantUnitDims, IntegralPowF,
            NormalizeFPowI, FoldExtensionsIntoContraction<linalg::MatmulOp>,
            FoldExtensionsIntoContraction<linalg::BatchMatmulOp>>(context);
    linalg::populateInlineConstantOperandsPatterns(set);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(set);
    // A producer is fused only into its single user, so nothing is computed twice; a conversion of one input
    // (an extf to f64) into each of its users, which then read the narrow input instead of a wider copy.
    linalg::populateElementwiseOpsFusionPatterns(set, [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && (isElementConversion(producer) || llvm::all_of(producer->getUsers(), [&](Operation *user) {
                            return user == fused->getOwner();
                          }));
    });
    // An expand_shape read by an elementwise op (a Linear on a 3-D input: the 2-D matmul's result expanded,
    // then the activation in 3-D) moves after it: the op runs on the collapsed shape, fuses with the matmul's
    // epilogue, and the reshape ends at the function's result, where kforge-tune looks through it.
    // Only into a purely elementwise op (every operand read whole, through a permutation) of an expansion
    // that splits dimensions: an op that broadcasts a row statistic stays in the shape of the row ops it
    // belongs with (kforge-partition's row groups and the row kernels' schedules rely on it), and so does a
    // keepdim statistic's expansion to unit dimensions.
    linalg::populateFoldReshapeOpsByCollapsingPatterns(set, [](OpOperand *fused) {
      auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
      auto expand = fused->get().getDefiningOp<tensor::ExpandShapeOp>();
      return consumer && expand && consumer.getNumParallelLoops() == consumer.getNumLoops() &&
             llvm::all_of(consumer.getIndexingMapsArray(), [](AffineMap map) { return map.isPermutation(); }) &&
             llvm::none_of(expand.getResultType().getShape(), [](int64_t d) { return d == 1; });
    });
    tensor::populateFoldTensorEmptyPatterns(set);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(set);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(set, context);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // First the transposes into the contractions, before generalization would turn them into copies.
    RewritePatternSet transposes(context);
    transposes.add<FoldTransposeIntoContraction<linalg::MatmulOp>, FoldTransposeIntoContraction<linalg::BatchMatmulOp>>(
        context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(transposes))))
      return signalPassFailure();

    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      return signalPassFailure();
    dropUnitLoops(getOperation());
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      return signalPassFailure();
    // Loops every op walks together become one (a layer norm over three dimensions: a row reduction), where
    // some op has more loops than a grid has dimensions or reduces over several.
    getOperation().walk([&](func::FuncOp function) { kforge::collapseDimensionGroups(function, patterns); });
    getOperation().walk([](func::FuncOp function) { promoteRankZeroResults(function); });
    // The promoted ops' reshaped inits fold into fills and empty tensors of the new shape.
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      return signalPassFailure();
    if (resultsInPlace)
      getOperation().walk([](func::FuncOp function) { computeReturnedReshapesInPlace(function); });
    // Last, a whole rank-0 value read inside a body (a norm every element is divided by) as an operand, which
    // the vectorizer broadcasts; the patterns above would inline it again.
    RewritePatternSet scalars(context);
    kforge::populateScalarOperandsPatterns(scalars);
    if (failed(applyPatternsGreedily(getOperation(), std::move(scalars))))
      return signalPassFailure();
  }
};
} // namespace

LogicalResult kforge::normalizeImporterPayload(ModuleOp module) {
  PassManager pm(module.getContext());
  KforgeNormalizeImporterOptions options;
  options.resultsInPlace = true; // one kernel's payload, as kforge-compile and kforge-tune see it
  pm.addPass(createKforgeNormalizeImporter(options));
  return pm.run(module);
}
