//===- ProveVectorAlignment.cpp - proven alignment on vector loads/stores ===//
//
// See the pass description in Passes.td. Alignment is tracked as the exponent of the largest power of two
// known to divide a value (an element offset, or a byte address), capped at kCap.
//
//===----------------------------------------------------------------------===//

#include "kforge/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kforge {
#define GEN_PASS_DEF_KFORGEPROVEVECTORALIGNMENT
#include "kforge/Transforms/Passes.h.inc"
} // namespace kforge

using namespace mlir;

namespace {
constexpr int kCap = 30; ///< 2^30: "divisible by anything we care about"

int twos(int64_t value) { return value == 0 ? kCap : std::min<int>(kCap, llvm::countr_zero(uint64_t(value))); }
int add(int a, int b) { return std::min(kCap, a + b); }

/// Powers of two dividing index values, memoised.
class Divisibility {
public:
  int of(Value value) {
    if (auto it = known.find(value); it != known.end())
      return it->second;
    known[value] = 0; // a cycle (not expected in SSA outside loops) proves nothing
    int result = compute(value);
    known[value] = result;
    return result;
  }

private:
  int compute(Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()); loop && arg == loop.getInductionVar())
        return std::min(of(loop.getLowerBound()), of(loop.getStep()));
      return 0;
    }
    Operation *op = value.getDefiningOp();
    APInt constant;
    if (matchPattern(value, m_ConstantInt(&constant)))
      return twos(constant.getSExtValue());
    if (isa<arith::AddIOp, arith::SubIOp>(op))
      return std::min(of(op->getOperand(0)), of(op->getOperand(1)));
    if (isa<arith::MulIOp>(op))
      return add(of(op->getOperand(0)), of(op->getOperand(1)));
    if (auto shift = dyn_cast<arith::ShLIOp>(op); shift && matchPattern(shift.getRhs(), m_ConstantInt(&constant)))
      return add(of(shift.getLhs()), static_cast<int>(constant.getZExtValue()));
    if (auto select = dyn_cast<arith::SelectOp>(op))
      return std::min(of(select.getTrueValue()), of(select.getFalseValue()));
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp>(op))
      return of(op->getOperand(0));
    // An index seen as i64 (or back) by a structural type conversion: the same integer.
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
        cast && cast.getNumOperands() == 1 && cast.getInputs()[0].getType().isIntOrIndex() &&
        value.getType().isIntOrIndex())
      return of(cast.getInputs()[0]);
    if (auto apply = dyn_cast<affine::AffineApplyOp>(op))
      return ofExpr(apply.getAffineMap().getResult(0), apply.getMapOperands(), apply.getAffineMap().getNumDims());
    return 0;
  }

  int ofExpr(AffineExpr expr, ValueRange operands, unsigned numDims) {
    if (auto c = dyn_cast<AffineConstantExpr>(expr))
      return twos(c.getValue());
    if (auto d = dyn_cast<AffineDimExpr>(expr))
      return of(operands[d.getPosition()]);
    if (auto s = dyn_cast<AffineSymbolExpr>(expr))
      return of(operands[numDims + s.getPosition()]);
    auto binary = cast<AffineBinaryOpExpr>(expr);
    int lhs = ofExpr(binary.getLHS(), operands, numDims), rhs = ofExpr(binary.getRHS(), operands, numDims);
    switch (expr.getKind()) {
    case AffineExprKind::Add:
      return std::min(lhs, rhs);
    case AffineExprKind::Mul:
      return add(lhs, rhs);
    default:
      return 0; // mod, floordiv, ceildiv
    }
  }

  DenseMap<Value, int> known;
};

/// The power of two dividing the byte address of `memref`'s element [0, ..., 0]: its allocation's known
/// alignment plus its layout offset (through subviews). -1 when the base is not known.
int baseAlignment(Value memref, Divisibility &div, int elementTwos) {
  if (auto subview = memref.getDefiningOp<memref::SubViewOp>()) {
    int source = baseAlignment(subview.getSource(), div, elementTwos);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (source < 0 || failed(subview.getSourceType().getStridesAndOffset(strides, offset)))
      return -1;
    for (auto [o, stride] : llvm::zip(subview.getMixedOffsets(), strides)) {
      if (ShapedType::isDynamic(stride))
        return -1;
      int offsetTwos = isa<Attribute>(o) ? twos(*getConstantIntValue(o)) : div.of(cast<Value>(o));
      source = std::min(source, add(add(offsetTwos, twos(stride)), elementTwos));
    }
    return source;
  }
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset))
    return -1;
  auto alignOf = [](Attribute attr) { return dyn_cast_or_null<IntegerAttr>(attr); };
  IntegerAttr align;
  StringRef name = LLVM::LLVMDialect::getAlignAttrName();
  if (auto arg = dyn_cast<BlockArgument>(memref)) {
    auto func = dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getBody().front())
      return -1;
    unsigned index = arg.getArgNumber();
    unsigned inputs = func.getNumArguments(), workgroup = func.getNumWorkgroupAttributions();
    if (index < inputs)
      align = alignOf(func.getArgAttr(index, name));
    else if (index < inputs + workgroup)
      align = alignOf(func.getWorkgroupAttributionAttr(index - inputs, name));
    else
      align = alignOf(func.getPrivateAttributionAttr(index - inputs - workgroup, name));
  } else if (auto get = memref.getDefiningOp<memref::GetGlobalOp>()) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
    if (global && global.getAlignment())
      return std::min(twos(int64_t(*global.getAlignment())), add(twos(offset), elementTwos));
    return -1;
  }
  if (!align || align.getInt() <= 0)
    return -1;
  return std::min(twos(align.getInt()), add(twos(offset), elementTwos));
}

/// The proven alignment in bytes of a vector.load / vector.store, or 0 when nothing beyond the element's.
int64_t provenAlignment(Value memref, ValueRange indices, Divisibility &div, int64_t maxAlignment) {
  auto type = cast<MemRefType>(memref.getType());
  unsigned elementBits = type.getElementTypeBitWidth();
  if (elementBits % 8)
    return 0;
  int elementTwos = twos(elementBits / 8);
  int address = baseAlignment(memref, div, elementTwos);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (address < 0 || failed(type.getStridesAndOffset(strides, offset)))
    return 0;
  for (auto [index, stride] : llvm::zip(indices, strides)) {
    if (ShapedType::isDynamic(stride))
      return 0;
    address = std::min(address, add(add(div.of(index), twos(stride)), elementTwos));
  }
  int64_t bytes = int64_t(1) << std::min(address, 20);
  return std::min(bytes, maxAlignment);
}

struct ProveVectorAlignmentPass : kforge::impl::KforgeProveVectorAlignmentBase<ProveVectorAlignmentPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(kforge::checkAlignmentOption(getOperation(), "max-alignment", maxAlignment)))
      return signalPassFailure();
    // 1-D transfers that are plain loads and stores become vector.load / vector.store, which carry alignment.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    Divisibility div;
    Builder b(&getContext());
    auto record = [&](Operation *op, Value memref, ValueRange indices, std::optional<uint64_t> current) {
      int64_t proven = provenAlignment(memref, indices, div, maxAlignment);
      int64_t element = cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
      if (proven > element && (!current || int64_t(*current) < proven))
        op->setAttr("alignment", b.getI64IntegerAttr(proven));
    };
    getOperation().walk([&](Operation *op) {
      if (auto load = dyn_cast<vector::LoadOp>(op))
        record(op, load.getBase(), load.getIndices(), load.getAlignment());
      else if (auto store = dyn_cast<vector::StoreOp>(op))
        record(op, store.getBase(), store.getIndices(), store.getAlignment());
    });
  }
};
} // namespace
