//===- KernelAllocsToAlloca.cpp - no device malloc inside kernels --------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEKERNELALLOCSTOALLOCA
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
/// Constant bounds (both closed) of an index value, each known or not.
struct IndexRange {
  std::optional<int64_t> lo, hi;
};
} // namespace

static IndexRange rangeOf(Value value, int depth);

/// The range of one affine term over its operands' ranges, by interval arithmetic.
static IndexRange termRange(AffineExpr term, ValueRange operands, unsigned numDims, int depth) {
  if (auto constant = dyn_cast<AffineConstantExpr>(term))
    return {constant.getValue(), constant.getValue()};
  if (auto dim = dyn_cast<AffineDimExpr>(term))
    return rangeOf(operands[dim.getPosition()], depth + 1);
  if (auto symbol = dyn_cast<AffineSymbolExpr>(term))
    return rangeOf(operands[numDims + symbol.getPosition()], depth + 1);
  auto binary = cast<AffineBinaryOpExpr>(term);
  IndexRange lhs = termRange(binary.getLHS(), operands, numDims, depth);
  IndexRange rhs = termRange(binary.getRHS(), operands, numDims, depth);
  auto both = [](std::optional<int64_t> x, std::optional<int64_t> y, auto f) -> std::optional<int64_t> {
    if (x && y)
      return f(*x, *y);
    return std::nullopt;
  };
  auto plus = [](int64_t x, int64_t y) { return x + y; };
  switch (term.getKind()) {
  case AffineExprKind::Add:
    return {both(lhs.lo, rhs.lo, plus), both(lhs.hi, rhs.hi, plus)};
  case AffineExprKind::Mul: {
    if (!lhs.lo || !lhs.hi || !rhs.lo || !rhs.hi)
      return {};
    int64_t corners[] = {*lhs.lo * *rhs.lo, *lhs.lo * *rhs.hi, *lhs.hi * *rhs.lo, *lhs.hi * *rhs.hi};
    return {*llvm::min_element(corners), *llvm::max_element(corners)};
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    // Monotone (non-decreasing) in the dividend for a positive constant divisor.
    auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (!divisor || divisor.getValue() <= 0)
      return {};
    int64_t c = divisor.getValue();
    bool floor = term.getKind() == AffineExprKind::FloorDiv;
    auto div = [&](std::optional<int64_t> x) -> std::optional<int64_t> {
      if (!x)
        return std::nullopt;
      return floor ? llvm::divideFloorSigned(*x, c) : llvm::divideCeilSigned(*x, c);
    };
    return {div(lhs.lo), div(lhs.hi)};
  }
  case AffineExprKind::Mod: {
    auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (!divisor || divisor.getValue() <= 0)
      return {};
    return {0, divisor.getValue() - 1};
  }
  default:
    return {};
  }
}

/// Constant bounds of an index value. ValueBounds takes a value's whole definition at once and fails on any
/// non-linear term in it; here affine.min, affine.max and affine.apply are also taken term by term, by interval
/// arithmetic: the bound of a min needs only one of its terms. The thread share of a partial block tile is such a
/// value: max(min(n - t * ceil(n / T), ceil(n / T)), 0) with n <= the block tile, whose first term (a product of
/// two values) no linear constraint expresses, while its second is bounded by ceil(tile / T).
static IndexRange rangeOf(Value value, int depth) {
  auto bound = [&](presburger::BoundType type) -> std::optional<int64_t> {
    FailureOr<int64_t> b = ValueBoundsConstraintSet::computeConstantBound(
        type, ValueBoundsConstraintSet::Variable(value), /*stopCondition=*/nullptr, /*closedUB=*/true);
    return succeeded(b) ? std::optional<int64_t>(*b) : std::nullopt;
  };
  IndexRange range{bound(presburger::BoundType::LB), bound(presburger::BoundType::UB)};
  if ((range.lo && range.hi) || depth > 8)
    return range;
  Operation *def = value.getDefiningOp();
  if (!isa_and_present<affine::AffineMinOp, affine::AffineMaxOp, affine::AffineApplyOp>(def))
    return range;
  AffineMap map = isa<affine::AffineMinOp>(def)   ? cast<affine::AffineMinOp>(def).getMap()
                  : isa<affine::AffineMaxOp>(def) ? cast<affine::AffineMaxOp>(def).getMap()
                                                  : cast<affine::AffineApplyOp>(def).getMap();
  SmallVector<IndexRange> terms;
  for (AffineExpr term : map.getResults())
    terms.push_back(termRange(term, def->getOperands(), map.getNumDims(), depth));
  // A min is at most any term's upper bound and at least the least lower bound (if every term has one); a max
  // (and an apply, a max of one term) the other way round.
  bool isMin = isa<affine::AffineMinOp>(def);
  std::optional<int64_t> lo, hi;
  bool allLo = true, allHi = true;
  for (const IndexRange &t : terms) {
    allLo &= t.lo.has_value();
    allHi &= t.hi.has_value();
    if (t.lo)
      lo = !lo ? *t.lo : isMin ? std::min(*lo, *t.lo) : std::max(*lo, *t.lo);
    if (t.hi)
      hi = !hi ? *t.hi : isMin ? std::min(*hi, *t.hi) : std::max(*hi, *t.hi);
  }
  if (isMin ? !allLo : !allHi)
    (isMin ? lo : hi) = std::nullopt;
  if (!range.lo)
    range.lo = lo;
  if (!range.hi)
    range.hi = hi;
  return range;
}

/// A dynamically sized kernel buffer whose sizes have constant upper bounds (a lane's slice of a row the lanes do
/// not divide: ceil((N - lane) / lanes) columns, at most ceil(N / lanes)) as a buffer of the bounds, viewed at the
/// dynamic sizes: a thread's private array of static size instead of a device malloc. Null when a size is
/// unbounded.
static memref::AllocOp boundedAlloc(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity())
    return nullptr;
  SmallVector<int64_t> bounds(type.getShape());
  SmallVector<OpFoldResult> sizes;
  unsigned dynamic = 0;
  for (int64_t &extent : bounds) {
    if (!ShapedType::isDynamic(extent)) {
      sizes.push_back(IntegerAttr::get(IndexType::get(alloc.getContext()), extent));
      continue;
    }
    Value size = alloc.getDynamicSizes()[dynamic++];
    std::optional<int64_t> bound = rangeOf(size, 0).hi;
    if (!bound || *bound < 0 || *bound > (int64_t(1) << 20))
      return nullptr;
    extent = std::max<int64_t>(*bound, 1);
    sizes.push_back(size);
  }
  OpBuilder builder(alloc);
  auto bounded = memref::AllocOp::create(builder, alloc.getLoc(), MemRefType::get(bounds, type.getElementType()),
                                         ValueRange{}, alloc.getAlignmentAttr());
  SmallVector<OpFoldResult> zeros(type.getRank(), builder.getIndexAttr(0)),
      ones(type.getRank(), builder.getIndexAttr(1));
  auto view = memref::SubViewOp::create(builder, alloc.getLoc(), bounded, zeros, sizes, ones);
  // The view's layout is strided (the bounds' strides); users that need the identity layout get a cast.
  Value replacement = view.getResult();
  if (view.getType() != type)
    replacement = memref::CastOp::create(builder, alloc.getLoc(), type, replacement).getResult();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      OpBuilder at(dealloc);
      memref::DeallocOp::create(at, dealloc.getLoc(), bounded);
      dealloc->erase();
    }
  alloc.replaceAllUsesWith(replacement);
  alloc.erase();
  return bounded;
}

namespace {
struct KernelAllocsToAllocaPass : kforge::impl::KforgeKernelAllocsToAllocaBase<KernelAllocsToAllocaPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (kforge::isInsideGpuKernel(alloc))
        allocs.push_back(alloc);
    });
    bool failedCheck = false;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      // Shared-memory (workgroup) buffers are handled by the GPU lowering itself.
      if (type.getMemorySpace() && !isa<IntegerAttr>(type.getMemorySpace()))
        continue;
      if (auto space = dyn_cast_if_present<IntegerAttr>(type.getMemorySpace()); space && space.getInt() != 0)
        continue;
      if (!type.hasStaticShape())
        if (memref::AllocOp bounded = boundedAlloc(alloc)) {
          alloc = bounded;
          type = alloc.getType();
        }
      if (!type.hasStaticShape()) {
        alloc.emitError() << "dynamically shaped allocation inside a GPU kernel would become a device malloc: "
                             "give the tile a static size";
        failedCheck = true;
        continue;
      }
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      OpBuilder builder(alloc);
      auto alloca = memref::AllocaOp::create(builder, alloc.getLoc(), type, alloc.getDynamicSizes(),
                                             alloc.getSymbolOperands(), alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
    if (failedCheck)
      signalPassFailure();
  }
};
} // namespace
