//===- ChannelsLast.cpp - a convolution's channels made innermost ---------===//

#include "kforge/Transforms/ChannelsLast.h"
#include "kforge/Transforms/ImplicitGemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

namespace {

/// How a multiplicand reads its tensor: through an input's indexing map, or by a tensor.extract in the body
/// (a padded input fused into the convolution: the extract under a select of the padding).
struct TensorRead {
  OpOperand *input = nullptr;
  mutable tensor::ExtractOp extract; ///< (mutable: the op's accessors are not const)
  Value tensor() const { return input ? input->get() : extract.getTensor(); }
};

} // namespace

/// The tensor read under a multiplicand (its extension from 16 bits and a padding select(c, read, 0.0) looked
/// through), when it reads a statically shaped tensor of rank 2 or more.
static std::optional<TensorRead> tensorRead(linalg::LinalgOp op, Value multiplicand) {
  Value value = kforge::maskedElementRead(op, kforge::withoutExtension(multiplicand));
  if (!value)
    return std::nullopt;
  TensorRead read;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    read.input = op.getMatchingOpOperand(arg);
  } else if (auto extract = value.getDefiningOp<tensor::ExtractOp>()) {
    if (extract->getBlock() != op.getBlock() || op->isAncestor(extract.getTensor().getParentBlock()->getParentOp()))
      return std::nullopt;
    read.extract = extract;
  } else {
    return std::nullopt;
  }
  auto type = dyn_cast<RankedTensorType>(read.tensor().getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2)
    return std::nullopt;
  return read;
}

/// For each dimension of the read tensor, the loop whose position alone indexes it (-1 for any other index:
/// a window's h + kh, a clamp, a constant).
static SmallVector<int64_t> loopPerDimension(linalg::LinalgOp op, const TensorRead &read) {
  SmallVector<int64_t> loops;
  if (read.input) {
    for (AffineExpr result : op.getMatchingIndexingMap(read.input).getResults())
      loops.push_back(isa<AffineDimExpr>(result) ? static_cast<int64_t>(cast<AffineDimExpr>(result).getPosition())
                                                 : int64_t(-1));
    return loops;
  }
  for (Value index : read.extract.getIndices()) {
    auto position = index.getDefiningOp<linalg::IndexOp>();
    loops.push_back(position && position->getBlock() == op.getBlock() ? static_cast<int64_t>(position.getDim()) : -1);
  }
  return loops;
}

namespace {
/// What planChannelsLast finds: both reads, the channel loop and each read's channel dimension.
struct Plan {
  TensorRead reads[2];
  int64_t channelLoop = -1;
  int64_t channelDim[2] = {-1, -1};
};
} // namespace

static FailureOr<Plan> plan(linalg::LinalgOp op, std::string &why) {
  arith::MulFOp product = kforge::bodyProduct(op);
  if (!product) {
    why = "the body is not out + x * y";
    return failure();
  }
  Plan plan;
  Value values[2] = {product.getLhs(), product.getRhs()};
  SmallVector<int64_t> loops[2];
  for (int i = 0; i < 2; ++i) {
    std::optional<TensorRead> read = tensorRead(op, values[i]);
    if (!read) {
      why = "a multiplicand is not an element read of a statically shaped tensor of rank 2 or more";
      return failure();
    }
    plan.reads[i] = *read;
    loops[i] = loopPerDimension(op, *read);
  }
  // The channel loop: a reduction loop indexing a whole dimension of both tensors, the longest.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (int64_t loop : loops[0]) {
    if (loop < 0 || iterators[loop] != utils::IteratorType::reduction || !llvm::is_contained(loops[1], loop) ||
        ShapedType::isDynamic(ranges[loop]))
      continue;
    if (plan.channelLoop < 0 || ranges[loop] > ranges[plan.channelLoop])
      plan.channelLoop = loop;
  }
  if (plan.channelLoop < 0) {
    why = "no reduction loop indexes a whole dimension of both multiplicands (no channel loop)";
    return failure();
  }
  for (int i = 0; i < 2; ++i)
    plan.channelDim[i] = llvm::find(loops[i], plan.channelLoop) - loops[i].begin();
  return plan;
}

/// The transpose's result shape for a tensor of `shape` with its channels at `dim`: [outer, inner, C], or
/// [inner, C] when dim is 0.
static SmallVector<int64_t> transposedShape(ArrayRef<int64_t> shape, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (d < dim)
      outer *= shape[d];
    else if (d > dim)
      inner *= shape[d];
  if (dim == 0)
    return {inner, shape[dim]};
  return {outer, inner, shape[dim]};
}

/// Why multiplicand `i`'s tensor is not copied, or "" when it is: its channels are innermost already, or it is
/// computed in the payload (only a function argument is copied: the op computing it would be left between the
/// copy and the kernels, outside every one of them).
static std::string notCopied(const Plan &plan, unsigned i) {
  Value tensor = plan.reads[i].tensor();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(tensor.getType()).getShape();
  if (llvm::all_of(shape.drop_front(plan.channelDim[i] + 1), [](int64_t extent) { return extent == 1; }))
    return "has its channels innermost already";
  if (shape[plan.channelDim[i]] == 1)
    return "has one channel (its layout is channels-last already)";
  auto argument = dyn_cast<BlockArgument>(tensor);
  if (!argument || !isa_and_nonnull<FunctionOpInterface>(argument.getOwner()->getParentOp()))
    return "is computed in the payload, not a function argument (its producer would be left outside the kernels)";
  return "";
}

FailureOr<SmallVector<kforge::ChannelsLastOperand>> kforge::planChannelsLast(linalg::LinalgOp op, std::string &why) {
  FailureOr<Plan> found = plan(op, why);
  if (failed(found))
    return failure();
  SmallVector<ChannelsLastOperand> operands;
  for (unsigned i = 0; i < 2; ++i) {
    auto type = cast<RankedTensorType>(found->reads[i].tensor().getType());
    if (!notCopied(*found, i).empty())
      continue;
    operands.push_back({i, transposedShape(type.getShape(), found->channelDim[i])});
  }
  if (operands.empty()) {
    why = "multiplicand 0 " + notCopied(*found, 0) + "; multiplicand 1 " + notCopied(*found, 1);
    return failure();
  }
  return operands;
}

std::string kforge::whyNotChannelsLast(linalg::LinalgOp op, unsigned multiplicand) {
  std::string why;
  FailureOr<Plan> found = plan(op, why);
  if (failed(found))
    return why;
  if (multiplicand > 1)
    return "the multiplicand is 0 (x of out + x * y) or 1 (y)";
  if (std::string reason = notCopied(*found, multiplicand); !reason.empty())
    return "multiplicand " + std::to_string(multiplicand) + " " + reason;
  return "";
}

FailureOr<linalg::TransposeOp> kforge::moveChannelsInnermost(RewriterBase &rewriter, linalg::GenericOp op,
                                                             unsigned multiplicand, std::string &why) {
  why = whyNotChannelsLast(op, multiplicand);
  if (!why.empty())
    return failure();
  FailureOr<Plan> found = plan(op, why);
  const TensorRead &read = found->reads[multiplicand];
  Value source = read.tensor();
  auto type = cast<RankedTensorType>(source.getType());
  int64_t rank = type.getRank(), dim = found->channelDim[multiplicand];
  // The dimensions in their new order: all but the channels', then the channels'.
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      order.push_back(d);
  order.push_back(dim);
  SmallVector<int64_t> newShape;
  for (int64_t d : order)
    newShape.push_back(type.getDimSize(d));

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto group = [](int64_t from, int64_t to) {
    ReassociationIndices indices;
    for (int64_t d = from; d < to; ++d)
      indices.push_back(d);
    return indices;
  };
  // [outer, C, inner] -> [outer, inner, C] (without `outer` when the channels are outermost).
  SmallVector<ReassociationIndices> collapse, expand;
  if (dim > 0)
    collapse.push_back(group(0, dim));
  collapse.push_back({dim});
  collapse.push_back(group(dim + 1, rank));
  Value collapsed = tensor::CollapseShapeOp::create(rewriter, loc, source, collapse);
  SmallVector<int64_t> shape = transposedShape(type.getShape(), dim);
  SmallVector<int64_t> permutation = dim > 0 ? SmallVector<int64_t>{0, 2, 1} : SmallVector<int64_t>{1, 0};
  Value init = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  auto transpose = linalg::TransposeOp::create(rewriter, loc, collapsed, init, permutation);
  if (dim > 0)
    expand.push_back(group(0, dim));
  expand.push_back(group(dim, rank - 1));
  expand.push_back({rank - 1});
  Value channelsLast = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(newShape, type.getElementType()), transpose->getResult(0), expand);

  if (read.input) {
    AffineMap map = op.getMatchingIndexingMap(read.input);
    SmallVector<AffineExpr> results;
    for (int64_t d : order)
      results.push_back(map.getResult(d));
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[read.input->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, op.getContext());
    rewriter.modifyOpInPlace(op, [&] {
      read.input->set(channelsLast);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
  } else {
    SmallVector<Value> indices;
    for (int64_t d : order)
      indices.push_back(read.extract.getIndices()[d]);
    rewriter.setInsertionPoint(read.extract);
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(read.extract, channelsLast, indices);
  }
  return transpose;
}
