//===- RowMoments.cpp - match a row's sum and centred sum of squares ------===//

#include "kforge/Transforms/RowMoments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace {
/// The op a generic's body yields, if the body is that op and the yield.
Operation *soleYielded(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return nullptr;
  return yield.getOperand(0).getDefiningOp();
}

/// A one-input float row sum: its last loop a reduction, the others parallel, its body `in + acc`, its init a
/// fill with zero.
bool isRowSum(linalg::GenericOp op) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op.getNumLoops() < 2)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::reduction ||
      llvm::any_of(ArrayRef(iterators).drop_back(), [](auto it) { return it != utils::IteratorType::parallel; }))
    return false;
  auto add = dyn_cast_or_null<arith::AddFOp>(soleYielded(op));
  Block &body = op.getRegion().front();
  if (!add || add->getBlock() != &body || &body.front() != add.getOperation())
    return false;
  Value in = body.getArgument(0), acc = body.getArgument(1);
  if (!((add.getLhs() == in && add.getRhs() == acc) || (add.getLhs() == acc && add.getRhs() == in)))
    return false;
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// The single user of `value` that is a linalg.generic, if `value` has exactly one such user among its users
/// (other users, e.g. later row ops, are allowed).
linalg::GenericOp genericUser(Value value, function_ref<bool(linalg::GenericOp)> wanted) {
  linalg::GenericOp found;
  for (Operation *user : value.getUsers()) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || !wanted(generic))
      continue;
    if (found && found != generic)
      return {};
    found = generic;
  }
  return found;
}

bool allParallel(linalg::GenericOp op) {
  return llvm::all_of(op.getIteratorTypesArray(), [](auto it) { return it == utils::IteratorType::parallel; });
}
} // namespace

std::optional<kforge::RowMoments> kforge::matchRowMoments(linalg::LinalgOp sumOp) {
  auto sum = dyn_cast<linalg::GenericOp>(sumOp.getOperation());
  if (!isRowSum(sum) || !isa<FloatType>(getElementTypeOrSelf(sum.getResult(0).getType())))
    return std::nullopt;
  int64_t count = sum.getStaticLoopRanges().back();
  if (ShapedType::isDynamic(count) || count < 2)
    return std::nullopt;
  Value x = sum.getDpsInputs()[0], total = sum.getResult(0);

  // c = x - S / N: inputs x (as the sum reads it) and S, the body divf(S, N) then subf(x, that).
  auto isCentre = [&](linalg::GenericOp op) {
    if (!allParallel(op) || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || op.getNumLoops() != sum.getNumLoops())
      return false;
    OpOperand *xOperand = op.getDpsInputOperand(0), *sOperand = op.getDpsInputOperand(1);
    if (xOperand->get() != x || sOperand->get() != total ||
        op.getMatchingIndexingMap(xOperand) != sum.getMatchingIndexingMap(sum.getDpsInputOperand(0)) ||
        op.getMatchingIndexingMap(sOperand) != sum.getMatchingIndexingMap(sum.getDpsInitOperand(0)))
      return false;
    Block &body = op.getRegion().front();
    auto sub = dyn_cast_or_null<arith::SubFOp>(soleYielded(op));
    if (!sub || sub.getLhs() != body.getArgument(0))
      return false;
    // The mean: S / N, or S * (1 / N) (the reciprocal as rounded to the element type).
    Value s = body.getArgument(1);
    FloatAttr n;
    if (auto div = sub.getRhs().getDefiningOp<arith::DivFOp>())
      return div->getBlock() == &body && div.getLhs() == s && matchPattern(div.getRhs(), m_Constant(&n)) &&
             n.getValueAsDouble() == static_cast<double>(count);
    if (auto mul = sub.getRhs().getDefiningOp<arith::MulFOp>()) {
      Value other = mul.getLhs() == s ? mul.getRhs() : mul.getRhs() == s ? mul.getLhs() : Value();
      return mul->getBlock() == &body && other && matchPattern(other, m_Constant(&n)) &&
             std::abs(n.getValueAsDouble() * static_cast<double>(count) - 1.0) < 1e-6;
    }
    return false;
  };
  linalg::GenericOp centre = genericUser(total, isCentre);
  if (!centre)
    return std::nullopt;

  // sum(c * c) in one reduction (its body in * in + acc), reading c as the row sum reads x.
  auto isFusedSumOfSquares = [&](linalg::GenericOp op) {
    if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op.getDpsInputs()[0] != centre.getResult(0) ||
        op.getNumLoops() != sum.getNumLoops() || op.getIndexingMapsArray() != sum.getIndexingMapsArray() ||
        op.getIteratorTypesArray() != sum.getIteratorTypesArray())
      return false;
    auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return false;
    Block &body = op.getRegion().front();
    auto add = dyn_cast_or_null<arith::AddFOp>(soleYielded(op));
    if (!add)
      return false;
    Value acc = body.getArgument(1);
    Value other = add.getLhs() == acc ? add.getRhs() : add.getRhs() == acc ? add.getLhs() : Value();
    auto mul = other ? other.getDefiningOp<arith::MulFOp>() : arith::MulFOp();
    return mul && mul.getLhs() == body.getArgument(0) && mul.getRhs() == body.getArgument(0);
  };
  if (linalg::GenericOp fused = genericUser(centre.getResult(0), isFusedSumOfSquares))
    return RowMoments{sum, centre, {}, fused, count};

  // c * c, read with the identity map, and the only use of the squares a row sum.
  auto isSquare = [&](linalg::GenericOp op) {
    if (!allParallel(op) || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
        op.getDpsInputs()[0] != centre.getResult(0) ||
        op.getMatchingIndexingMap(op.getDpsInputOperand(0)) != centre.getMatchingIndexingMap(centre.getDpsInitOperand(0)))
      return false;
    Block &body = op.getRegion().front();
    auto mul = dyn_cast_or_null<arith::MulFOp>(soleYielded(op));
    return mul && mul.getLhs() == body.getArgument(0) && mul.getRhs() == body.getArgument(0);
  };
  linalg::GenericOp square = genericUser(centre.getResult(0), isSquare);
  if (!square || !square.getResult(0).hasOneUse())
    return std::nullopt;
  auto sumSquares = dyn_cast<linalg::GenericOp>(*square.getResult(0).getUsers().begin());
  if (!isRowSum(sumSquares) || sumSquares.getNumLoops() != sum.getNumLoops() ||
      sumSquares.getMatchingIndexingMap(sumSquares.getDpsInputOperand(0)) !=
          sum.getMatchingIndexingMap(sum.getDpsInputOperand(0)) ||
      sumSquares.getMatchingIndexingMap(sumSquares.getDpsInitOperand(0)) !=
          sum.getMatchingIndexingMap(sum.getDpsInitOperand(0)))
    return std::nullopt;
  return RowMoments{sum, centre, square, sumSquares, count};
}
