//===- ImplicitGemm.cpp - a contraction's loops as a GEMM's M, N and K ----===//

#include "kforge/Transforms/ImplicitGemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using kforge::GemmRole;

namespace {
/// What a multiplicand is computed from: the loops it depends on and the element reads on its way.
struct Feeds {
  llvm::SmallBitVector loops;
  llvm::SmallVector<Value> reads; ///< Inputs (block arguments) and tensor.extract / memref.load results.
  llvm::DenseSet<Value> seen;
};
} // namespace

static void addDims(AffineExpr expr, llvm::SmallBitVector &loops) {
  expr.walk([&](AffineExpr sub) {
    if (auto dim = dyn_cast<AffineDimExpr>(sub))
      loops.set(dim.getPosition());
  });
}

/// Collects what `value` is computed from in `op`'s body; fails (with `why`) on the output's value, on an op
/// with regions or with effects other than an element read.
static LogicalResult collectFeeds(linalg::LinalgOp op, Value value, Feeds &feeds, std::string &why) {
  if (!feeds.seen.insert(value).second)
    return success();
  Block *body = op.getBlock();
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != body)
      return success();
    OpOperand *operand = op.getMatchingOpOperand(arg);
    if (op.isDpsInit(operand)) {
      why = "a multiplicand is computed from the output's value";
      return failure();
    }
    for (AffineExpr result : op.getMatchingIndexingMap(operand).getResults())
      addDims(result, feeds.loops);
    feeds.reads.push_back(value);
    return success();
  }
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != body)
    return success(); // defined outside the body: the same for every element
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    feeds.loops.set(index.getDim());
    return success();
  }
  bool read = isa<tensor::ExtractOp, memref::LoadOp>(def);
  if (def->getNumRegions() || !(read || isPure(def))) {
    why = "a multiplicand is computed by " + def->getName().getStringRef().str() +
          ", neither a pure op nor an element read";
    return failure();
  }
  if (read)
    feeds.reads.push_back(value);
  for (Value operand : def->getOperands())
    if (failed(collectFeeds(op, operand, feeds, why)))
      return failure();
  return success();
}

/// The loops the innermost index of `read` (an input's block argument, or an element read) follows.
static llvm::SmallBitVector innermostIndexLoops(linalg::LinalgOp op, Value read) {
  llvm::SmallBitVector loops(op.getNumLoops());
  if (auto arg = dyn_cast<BlockArgument>(read)) {
    AffineMap map = op.getMatchingIndexingMap(op.getMatchingOpOperand(arg));
    if (map.getNumResults() > 0)
      addDims(map.getResults().back(), loops);
    return loops;
  }
  Operation *def = read.getDefiningOp();
  ValueRange indices =
      isa<tensor::ExtractOp>(def) ? cast<tensor::ExtractOp>(def).getIndices() : cast<memref::LoadOp>(def).getIndices();
  if (indices.empty())
    return loops;
  Feeds feeds;
  feeds.loops.resize(op.getNumLoops());
  std::string ignored;
  (void)collectFeeds(op, indices.back(), feeds, ignored);
  return feeds.loops;
}

/// The loop a tile copy of a multiplicand should walk with consecutive threads: the innermost of its own
/// (M or N) loops that its single element read's innermost index follows, else the innermost K loop it
/// follows; -1 when the multiplicand reads more than one element or none.
static int64_t fastLoop(linalg::LinalgOp op, const Feeds &feeds, ArrayRef<GemmRole> roles, GemmRole own) {
  if (feeds.reads.size() != 1)
    return -1;
  llvm::SmallBitVector loops = innermostIndexLoops(op, feeds.reads.front());
  for (GemmRole wanted : {own, GemmRole::K})
    for (int64_t d = static_cast<int64_t>(roles.size()) - 1; d >= 0; --d)
      if (loops.test(d) && roles[d] == wanted)
        return d;
  return -1;
}

/// An element read: an input's block argument, a tensor.extract or a memref.load.
static bool isRead(linalg::LinalgOp op, Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == op.getBlock() && op.isDpsInput(op.getMatchingOpOperand(arg));
  return isa_and_nonnull<tensor::ExtractOp, memref::LoadOp>(value.getDefiningOp());
}

/// An element read, or `select(c, read, 0.0)`.
static bool isMaskedRead(linalg::LinalgOp op, Value value) {
  if (auto select = value.getDefiningOp<arith::SelectOp>()) {
    auto zero = select.getFalseValue().getDefiningOp<arith::ConstantOp>();
    auto attr = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    return attr && attr.getValue().isZero() && !attr.getValue().isNegative() && isRead(op, select.getTrueValue());
  }
  return isRead(op, value);
}

FailureOr<kforge::ImplicitGemm> kforge::analyzeImplicitGemm(linalg::LinalgOp op, std::string &why) {
  if (op.getNumDpsInits() != 1 || op->getNumRegions() != 1 || !op.getBlock()) {
    why = "expected one output and a body";
    return failure();
  }
  if (op.getNumReductionLoops() == 0) {
    why = "no reduction loop";
    return failure();
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() || outMap.getNumResults() != op.getNumParallelLoops()) {
    why = "the output is not indexed by the parallel loops, each once";
    return failure();
  }
  arith::MulFOp mul = bodyProduct(op);
  if (!mul) {
    why = "the body is not out + x * y";
    return failure();
  }
  Feeds x, y;
  x.loops.resize(op.getNumLoops());
  y.loops.resize(op.getNumLoops());
  if (failed(collectFeeds(op, mul.getLhs(), x, why)) || failed(collectFeeds(op, mul.getRhs(), y, why)))
    return failure();
  // Orientation: the output's innermost dimension a column loop (N, B's side) where one side alone reads it.
  unsigned innermost = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
  bool swap = x.loops.test(innermost) && !y.loops.test(innermost);
  const Feeds &aFeeds = swap ? y : x, &bFeeds = swap ? x : y;
  ImplicitGemm gemm;
  gemm.a = swap ? mul.getRhs() : mul.getLhs();
  gemm.b = swap ? mul.getLhs() : mul.getRhs();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    if (iterators[d] == utils::IteratorType::reduction) {
      gemm.roles.push_back(GemmRole::K);
      continue;
    }
    bool inA = aFeeds.loops.test(d), inB = bFeeds.loops.test(d);
    gemm.roles.push_back(inA && !inB ? GemmRole::M : inB && !inA ? GemmRole::N : GemmRole::Batch);
  }
  for (GemmRole role : {GemmRole::M, GemmRole::N})
    if (gemm.loopsOf(role).empty()) {
      why = std::string("no ") + (role == GemmRole::M ? "row (M)" : "column (N)") +
            " loop: every parallel loop is read by both multiplicands or by neither";
      return failure();
    }
  gemm.aIsRead = isMaskedRead(op, gemm.a);
  gemm.bIsRead = isMaskedRead(op, gemm.b);
  gemm.aFastLoop = fastLoop(op, aFeeds, gemm.roles, GemmRole::M);
  gemm.bFastLoop = fastLoop(op, bFeeds, gemm.roles, GemmRole::N);
  return gemm;
}

arith::MulFOp kforge::bodyProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || !op.getBlock())
    return {};
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto add = yield.getNumOperands() == 1 ? yield.getOperand(0).getDefiningOp<arith::AddFOp>() : arith::AddFOp();
  if (!add || !out.hasOneUse() || (add.getLhs() != out && add.getRhs() != out))
    return {};
  auto mul = (add.getLhs() == out ? add.getRhs() : add.getLhs()).getDefiningOp<arith::MulFOp>();
  return mul && mul->getBlock() == body ? mul : arith::MulFOp();
}

Value kforge::withoutExtension(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    if (ext.getIn().getType().getIntOrFloatBitWidth() == 16)
      return ext.getIn();
  return v;
}

/// The element read under `value` (select(c, read, 0.0) or a read): the read, and the select's condition (null
/// when unmasked); a null read when `value` is neither.
static std::pair<Value, Value> maskedRead(linalg::LinalgOp op, Value value) {
  Value condition;
  if (auto select = value.getDefiningOp<arith::SelectOp>()) {
    if (!matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
      return {};
    condition = select.getCondition();
    value = select.getTrueValue();
  }
  return isRead(op, value) ? std::pair<Value, Value>{value, condition} : std::pair<Value, Value>{};
}

Value kforge::maskedElementRead(linalg::LinalgOp op, Value value) { return maskedRead(op, value).first; }

/// Whether `value`, computed in the op's body, depends on loop `loop`'s position (a linalg.index of it, or an
/// input's element, which may).
static bool dependsOnLoop(linalg::LinalgOp op, Value value, int64_t loop) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == op.getBlock();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != op.getBlock())
    return false;
  if (auto position = dyn_cast<linalg::IndexOp>(def))
    return static_cast<int64_t>(position.getDim()) == loop;
  return llvm::any_of(def->getOperands(), [&](Value operand) { return dependsOnLoop(op, operand, loop); });
}

/// Whether the read `read` (an input, a tensor.extract or a memref.load in the op's body) indexes its innermost
/// dimension by loop `loop`'s position itself.
static bool innermostIsLoop(linalg::LinalgOp op, Value read, int64_t loop) {
  if (auto arg = dyn_cast<BlockArgument>(read)) {
    AffineMap map = op.getMatchingIndexingMap(op.getMatchingOpOperand(arg));
    return map.getNumResults() > 0 && map.getResults().back() == getAffineDimExpr(loop, op->getContext());
  }
  Operation *def = read.getDefiningOp();
  ValueRange indices =
      isa<tensor::ExtractOp>(def) ? cast<tensor::ExtractOp>(def).getIndices() : cast<memref::LoadOp>(def).getIndices();
  auto position = indices.empty() ? linalg::IndexOp() : indices.back().getDefiningOp<linalg::IndexOp>();
  return position && static_cast<int64_t>(position.getDim()) == loop;
}

Value kforge::vectorCopyRead(linalg::LinalgOp op, Value multiplicand, int64_t fast, int64_t width) {
  if (fast < 0)
    return Value();
  auto [read, condition] = maskedRead(op, withoutExtension(multiplicand));
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (!read || ShapedType::isDynamic(extents[fast]) || extents[fast] % width || !innermostIsLoop(op, read, fast) ||
      (condition && dependsOnLoop(op, condition, fast)))
    return Value();
  return read;
}

bool kforge::copiesInVectors(linalg::LinalgOp op, const ImplicitGemm &gemm, int64_t width) {
  if (!vectorCopyRead(op, gemm.a, gemm.aFastLoop, width) || !vectorCopyRead(op, gemm.b, gemm.bFastLoop, width))
    return false;
  // (K has one innermost loop: two multiplicands contiguous along K must be so along the same loop.)
  bool aAlongK = gemm.roles[gemm.aFastLoop] == GemmRole::K, bAlongK = gemm.roles[gemm.bFastLoop] == GemmRole::K;
  return !(aAlongK && bAlongK) || gemm.aFastLoop == gemm.bFastLoop;
}
