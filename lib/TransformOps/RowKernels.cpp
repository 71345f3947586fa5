//===- RowKernels.cpp - what the row-kernel transform ops share -----------===//
//
// A row kernel's launch (one row per block, read at [block_id x, 0]): the views, writes and block index that
// prefetch_rows_to_l2 and pipeline_rows look for.
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

/// The memref a view is taken of (through subviews, casts and reshapes).
Value kforge::viewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      value = view.getViewSource();
    else
      break;
  }
  return value;
}

/// The memrefs the launch writes (roots of every value with a write effect in its body).
DenseSet<Value> kforge::writtenRoots(gpu::LaunchOp launch) {
  DenseSet<Value> written;
  launch.getBody().walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Unknown effects: every memref operand may be written.
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        for (Value operand : op->getOperands())
          if (isa<MemRefType>(operand.getType()))
            written.insert(kforge::viewRoot(operand));
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list)
      if (isa<MemoryEffects::Write>(effect.getEffect()) && effect.getValue())
        written.insert(kforge::viewRoot(effect.getValue()));
  });
  return written;
}

/// Whether `value` is the launch's block index along x.
bool kforge::isBlockIdX(Value value, gpu::LaunchOp launch) {
  if (auto id = value.getDefiningOp<gpu::BlockIdOp>())
    return id.getDimension() == gpu::Dimension::x;
  return value == launch.getBlockIds().x;
}


bool kforge::isBlockRow(memref::SubViewOp view, gpu::LaunchOp launch, const DenseSet<Value> &written) {
  Value source = view.getSource();
  auto type = dyn_cast<MemRefType>(source.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      launch->isAncestor(source.getParentBlock()->getParentOp()) || written.contains(viewRoot(source)))
    return false;
  SmallVector<OpFoldResult> offsets = view.getMixedOffsets(), sizes = view.getMixedSizes();
  auto offset0 = dyn_cast<Value>(offsets[0]);
  return offset0 && isBlockIdX(offset0, launch) && isConstantIntValue(offsets[1], 0) &&
         isConstantIntValue(sizes[0], 1) && isConstantIntValue(sizes[1], type.getDimSize(1)) && view.hasUnitStride();
}
