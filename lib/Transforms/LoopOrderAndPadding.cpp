//===- LoopOrderAndPadding.cpp - importer loop orders and paddings, normalized ===//
//
// Part of kforge-normalize-importer: a generic's reduction loops after its parallel ones, a window op's
// parallel loops in its output's order, and constant paddings as generics that fuse into the convolutions
// reading them.
//
//===----------------------------------------------------------------------===//

#include "LoopOrderAndPadding.h"

#include "kforge/Transforms/WindowOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// A generic with a reduction loop before a parallel one (torch.sum / max / argmax over a middle dimension:
/// loops [b, reduced, n]) with its loops reordered, parallel ones first, the reductions last (their relative
/// orders kept). Only the loops' names change; kforge's schedules and facts take a root's leading parallel
/// loops as its output's and its trailing ones as the reduced, and the operands' maps say which of them is
/// contiguous in memory (a reduction over rows, not along them: payload facts' `reduction_innermost`).
struct ReductionLoopsLast : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order;
    for (auto [loop, iterator] : llvm::enumerate(iterators))
      if (iterator == utils::IteratorType::parallel)
        order.push_back(loop);
    unsigned parallel = order.size();
    for (auto [loop, iterator] : llvm::enumerate(iterators))
      if (iterator != utils::IteratorType::parallel)
        order.push_back(loop);
    if (!op.hasPureTensorSemantics() || parallel == iterators.size() ||
        llvm::all_of(llvm::seq<unsigned>(0, parallel), [&](unsigned i) { return order[i] == i; }))
      return failure();
    return linalg::interchangeGenericOp(rewriter, op, order);
  }
};

/// A window op (a convolution or pooling, named or gathered) whose parallel loops are not in its output's
/// order, with them reordered so that they are, as a generic: linalg's NCHW depthwise convolutions iterate (n,
/// oh, ow, c) but store (n, c, oh, ow). kforge's GPU tiles map a root's last tiled loop to the threads' x, so in
/// the op's own order consecutive threads took consecutive channels, H x W elements apart in the output and
/// the input (every store and load its own cache line); in the output's order they take consecutive columns.
/// Only a single-result op whose output reads every parallel loop once, each as its own dimension, and whose
/// reduction loops come last; the reduction loops keep their order.
struct WindowLoopsInOutputOrder : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 || op.getNumDpsInits() != 1 || !kforge::isWindowOp(op))
      return failure();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned parallel = op.getNumParallelLoops();
    if (llvm::any_of(llvm::seq<unsigned>(0, parallel),
                     [&](unsigned d) { return iterators[d] != utils::IteratorType::parallel; }))
      return failure(); // (ReductionLoopsLast puts a generic's reductions last first)
    AffineMap output = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (output.getNumResults() != parallel || !output.isProjectedPermutation())
      return failure();
    SmallVector<unsigned> order;
    for (AffineExpr result : output.getResults())
      order.push_back(cast<AffineDimExpr>(result).getPosition());
    if (llvm::is_sorted(order))
      return failure();
    for (unsigned d = parallel; d < iterators.size(); ++d)
      order.push_back(d);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized = linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return failure();
      generic = *generalized;
    }
    return linalg::interchangeGenericOp(rewriter, generic, order);
  }
};

/// A source placed into a constant-filled tensor (a convolution's zero padding as `tensor.pad`; a transposed
/// convolution's input spread over zeros as `tensor.insert_slice` into a fill, with strides) as a linalg.generic
/// computing each element: the source's element where one lands, the constant elsewhere. The source is read
/// with `tensor.extract` at an index clamped into it (the select keeps the constant where the element is not
/// the source's). As a generic it fuses into the tiles of the convolution that reads it, so the padded tensor
/// is never materialized; as a pad or an insert_slice it was left on the host and no GPU schedule compiled.
static Value placeIntoConstant(PatternRewriter &rewriter, Location loc, Value source, Value constant,
                               RankedTensorType resultType, ArrayRef<int64_t> offsets, ArrayRef<int64_t> strides) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  unsigned rank = resultType.getRank();
  Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());
  SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location at, ValueRange) {
        Value zero = arith::ConstantIndexOp::create(b, at, 0);
        Value inside = arith::ConstantOp::create(b, at, b.getBoolAttr(true));
        SmallVector<Value> indices;
        for (unsigned d = 0; d < rank; ++d) {
          Value position = linalg::IndexOp::create(b, at, d);
          int64_t extent = sourceType.getDimSize(d);
          // A dimension the source fills whole (no offset, no stride, the same extent): always inside.
          if (offsets[d] == 0 && strides[d] == 1 && extent == resultType.getDimSize(d)) {
            indices.push_back(position);
            continue;
          }
          Value relative = arith::SubIOp::create(b, at, position, arith::ConstantIndexOp::create(b, at, offsets[d]));
          Value index = relative;
          auto both = [&](Value condition) { inside = arith::AndIOp::create(b, at, inside, condition); };
          both(arith::CmpIOp::create(b, at, arith::CmpIPredicate::sge, relative, zero));
          if (strides[d] != 1) {
            Value stride = arith::ConstantIndexOp::create(b, at, strides[d]);
            both(arith::CmpIOp::create(b, at, arith::CmpIPredicate::eq, arith::RemSIOp::create(b, at, relative, stride),
                                       zero));
            index = arith::DivSIOp::create(b, at, relative, stride);
          }
          Value last = arith::ConstantIndexOp::create(b, at, extent - 1);
          both(arith::CmpIOp::create(b, at, arith::CmpIPredicate::sle, index, last));
          indices.push_back(arith::MinSIOp::create(b, at, arith::MaxSIOp::create(b, at, index, zero), last));
        }
        Value element = tensor::ExtractOp::create(b, at, source, indices);
        linalg::YieldOp::create(b, at, arith::SelectOp::create(b, at, inside, element, constant).getResult());
      });
  return generic.getResult(0);
}

/// tensor.pad with static amounts and a constant padding value: see placeIntoConstant.
struct PadAsGeneric : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp pad, PatternRewriter &rewriter) const override {
    Value constant = pad.getConstantPaddingValue();
    if (!constant || !pad.getResultType().hasStaticShape() || !pad.getSourceType().hasStaticShape() ||
        pad.getSourceType().getNumElements() == 0 || !matchPattern(constant, m_Constant()))
      return failure();
    SmallVector<int64_t> low(pad.getStaticLow());
    if (llvm::any_of(low, ShapedType::isDynamic) || llvm::any_of(low, [](int64_t v) { return v < 0; }))
      return failure();
    SmallVector<int64_t> strides(low.size(), 1);
    rewriter.replaceOp(
        pad, placeIntoConstant(rewriter, pad.getLoc(), pad.getSource(), constant, pad.getResultType(), low, strides));
    return success();
  }
};

/// tensor.insert_slice (static, not rank-reducing) into a fill of a constant, the fill's only use: see
/// placeIntoConstant.
struct InsertIntoFillAsGeneric : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert, PatternRewriter &rewriter) const override {
    auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
    RankedTensorType sourceType = insert.getSourceType(), resultType = insert.getResultType();
    if (!fill || !fill->hasOneUse() || !matchPattern(fill.value(), m_Constant()) ||
        sourceType.getRank() != resultType.getRank() || !sourceType.hasStaticShape() || !resultType.hasStaticShape() ||
        sourceType.getNumElements() == 0)
      return failure();
    SmallVector<int64_t> offsets(insert.getStaticOffsets()), strides(insert.getStaticStrides());
    if (llvm::any_of(offsets, ShapedType::isDynamic) || llvm::any_of(strides, ShapedType::isDynamic) ||
        llvm::any_of(strides, [](int64_t v) { return v <= 0; }))
      return failure();
    rewriter.replaceOp(insert, placeIntoConstant(rewriter, insert.getLoc(), insert.getSource(), fill.value(),
                                                 resultType, offsets, strides));
    return success();
  }
};

/// A generic that computes each element from a gather (placeIntoConstant's: no inputs, every loop parallel, a
/// tensor.extract in its body).
static bool isGather(Operation *op) {
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  return generic.getRegion().walk([](tensor::ExtractOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// A named convolution or pooling that reads a padded (or spread) input computed by a gather, as a generic, so
/// that the elementwise fusion patterns of kforge-normalize-importer fuse the gather into it: the convolution
/// then reads its unpadded input at a clamped index and selects the padding value where the window leaves it.
/// Fused into the convolution's tiles instead (transform.structured.fuse_into_containing_op), the gather
/// computed each thread's whole input window into a private array first: 73 KB of local memory per thread for
/// a 3x3 convolution over 64 channels of 4 images.
struct GeneralizeWindowOfGather : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp>(op.getOperation()) || !linalg::isaConvolutionOpInterface(op) ||
        !op.hasPureTensorSemantics())
      return failure();
    bool readsGather = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      return isGather(producer) && producer->hasOneUse();
    });
    if (!readsGather)
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

} // namespace

void kforge::populateLoopOrderAndPaddingPatterns(RewritePatternSet &patterns) {
  patterns.add<ReductionLoopsLast, WindowLoopsInOutputOrder, PadAsGeneric, InsertIntoFillAsGeneric,
               GeneralizeWindowOfGather>(patterns.getContext());
}
