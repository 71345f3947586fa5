//===- TensorMap.cpp - TMA tensor maps of a kernel's global operands ---------===//

#include "TensorMap.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

/// Why a memref defined outside `launch` cannot be a TMA tensor (a row-major memref with a static shape, rows of
/// whole 16-byte units), or "".
static std::string tensorProblem(Value global, gpu::LaunchOp launch) {
  if (launch.getBody().isAncestor(global.getParentRegion()))
    return "a subview of a memref defined outside the gpu.launch (the host builds its tensor map)";
  auto type = cast<MemRefType>(global.getType());
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return "a subview of a row-major memref with a static shape";
  if ((type.getDimSize(type.getRank() - 1) * type.getElementTypeBitWidth() / 8) % 16)
    return "a subview of a memref whose rows are a multiple of 16 bytes (TMA's global strides)";
  return "";
}

FailureOr<kforge::GlobalTile> kforge::globalTileOf(Value tile, gpu::LaunchOp launch, std::string &why) {
  auto subview = tile.getDefiningOp<memref::SubViewOp>();
  // A whole 2-D memref from outside the launch (a block tile that takes every row and column: a 1x1
  // convolution's filter, shared by the batch) is its own box at (0, 0).
  if (auto type = dyn_cast<MemRefType>(tile.getType()); !subview && type && type.getRank() == 2) {
    why = tensorProblem(tile, launch);
    if (!why.empty())
      return failure();
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value zero = arith::ConstantIndexOp::create(b, launch.getLoc(), 0);
    return GlobalTile{tile, zero, zero};
  }
  int64_t sourceRank = subview ? subview.getSourceType().getRank() : 0;
  // A 2-D tile of a 2-D memref, or of a 3-D one with the leading dim dropped (a batch_matmul's block: one batch),
  // which TMA sees as a 2-D tensor of batch x rows rows.
  bool batched = sourceRank == 3 && subview.getStaticSizes()[0] == 1;
  if (!subview || (sourceRank != 2 && !batched) || subview.getType().getRank() != 2 || !subview.hasUnitStride()) {
    why = "a unit-stride 2-D memref.subview (of a 2-D memref, or of one batch of a 3-D one), or a whole 2-D memref";
    return failure();
  }
  Value global = subview.getSource();
  why = tensorProblem(global, launch);
  if (!why.empty())
    return failure();
  auto type = cast<MemRefType>(global.getType());
  OpBuilder b(subview);
  Location loc = subview.getLoc();
  auto offset = [&](int64_t dim) {
    return getValueOrCreateConstantIndexOp(b, loc, subview.getMixedOffsets()[dim]);
  };
  if (!batched)
    return GlobalTile{global, offset(0), offset(1)};
  // Row b * rows + r of the batch-major rows.
  AffineExpr batch = b.getAffineDimExpr(0), row = b.getAffineDimExpr(1);
  Value flatRow = affine::AffineApplyOp::create(
      b, loc, AffineMap::get(2, 0, batch * type.getDimSize(1) + row), ValueRange{offset(0), offset(1)});
  return GlobalTile{global, flatRow, offset(2)};
}

/// `func.func private @kforge_tensor_map_2d(i64 x 7) -> i64` in the module around `from`.
static func::FuncOp tensorMapFunction(OpBuilder &b, Operation *from) {
  Operation *module = SymbolTable::getNearestSymbolTable(from->getParentOp());
  while (module->getParentOp() && !isa<ModuleOp>(module))
    module = SymbolTable::getNearestSymbolTable(module->getParentOp());
  if (auto existing = dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupSymbolIn(module, kforge::kTensorMapFunction)))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&module->getRegion(0).front());
  Type i64 = b.getI64Type();
  auto type = b.getFunctionType(SmallVector<Type>(7, i64), {i64});
  auto function = func::FuncOp::create(b, from->getLoc(), kforge::kTensorMapFunction, type);
  function.setPrivate();
  return function;
}

Value kforge::createTensorMap2d(OpBuilder &b, Location loc, gpu::LaunchOp launch, Value global, int64_t boxRows,
                                int64_t boxCols) {
  func::FuncOp function = tensorMapFunction(b, launch);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(launch);
  auto type = cast<MemRefType>(global.getType());
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  // All leading dims are rows (a 3-D memref's batches one after another).
  int64_t cols = type.getShape().back(), rows = type.getNumElements() / cols;
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value { return arith::ConstantIntOp::create(b, loc, i64, v); };
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, global);
  Value address = arith::IndexCastOp::create(b, loc, i64, pointer);
  // address, rows, columns, bytes per row, box rows, box columns, bytes per element
  SmallVector<Value> args = {address,
                             constant(rows),
                             constant(cols),
                             constant(cols * elementBytes),
                             constant(boxRows),
                             constant(boxCols),
                             constant(elementBytes)};
  return func::CallOp::create(b, loc, function, args).getResult(0);
}
