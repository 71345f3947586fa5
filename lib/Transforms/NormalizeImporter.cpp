//===- NormalizeImporter.cpp - importer (torch-mlir) IR into kforge's payload forms ===//
//
// See the pass description in Passes.td. Upstream patterns do most of the work (generalization, constant
// operand inlining, dead operand/result erasure, elementwise fusion, canonicalization); kforge adds what
// upstream lacks: transposes folded into contraction maps, keepdim unit dimensions dropped, integer powers.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

/// Named ops other than fills, contractions and convolutions become linalg.generic: the form kforge's
/// fusion and schedules match (a schedule fuses fill / matmul / batch_matmul / generic producers only).
struct GeneralizeNamedOps : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    // A copy stays one: as an identity generic, canonicalization would fold it to its input, and a payload
    // that only copies would return its argument.
    if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(op.getOperation()) || !op.hasPureTensorSemantics())
      return failure();
    if (linalg::isaContractionOpInterface(op) || linalg::isaConvolutionOpInterface(op))
      return failure();
    // A transpose read by a contraction is folded into it instead (the first phase); one left here has
    // other users.
    return linalg::generalizeNamedOp(rewriter, op);
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
    auto generic = linalg::GenericOp::create(rewriter, loc, ValueRange(inits).getTypes(), inputs, inits, maps,
                                             op.getIteratorTypesArray());
    generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(), generic.getRegion().begin());
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
    if (op.hasPureTensorSemantics() && !llvm::any_of(op->getResults(), isReturned) &&
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

struct NormalizeImporterPass : kforge::impl::KforgeNormalizeImporterBase<NormalizeImporterPass> {
  /// The rewrites that run to a fixed point: upstream's and kforge's patterns plus canonicalization.
  FrozenRewritePatternSet patterns;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    set.add<GeneralizeNamedOps, DropConstantUnitDims, IntegralPowF, NormalizeFPowI>(context);
    linalg::populateInlineConstantOperandsPatterns(set);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(set);
    // A producer is fused only into its single user, so nothing is computed twice.
    linalg::populateElementwiseOpsFusionPatterns(set, [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && llvm::all_of(producer->getUsers(), [&](Operation *user) { return user == fused->getOwner(); });
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
  }
};
} // namespace

LogicalResult kforge::normalizeImporterPayload(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createKforgeNormalizeImporter());
  return pm.run(module);
}
