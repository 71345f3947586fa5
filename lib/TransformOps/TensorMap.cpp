//===- TensorMap.cpp - TMA tensor maps of a kernel's global operands ---------===//

#include "TensorMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

FailureOr<kforge::GlobalTile> kforge::globalTileOf(Value tile, gpu::LaunchOp launch, std::string &why) {
  auto subview = tile.getDefiningOp<memref::SubViewOp>();
  if (!subview || subview.getSourceType().getRank() != 2 || subview.getType().getRank() != 2 ||
      !subview.hasUnitStride()) {
    why = "a unit-stride 2-D memref.subview";
    return failure();
  }
  Value global = subview.getSource();
  if (launch.getBody().isAncestor(global.getParentRegion())) {
    why = "a subview of a memref defined outside the gpu.launch (the host builds its tensor map)";
    return failure();
  }
  auto type = cast<MemRefType>(global.getType());
  if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
    why = "a subview of a row-major memref with a static shape";
    return failure();
  }
  int64_t rowBytes = type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
  if (rowBytes % 16) {
    why = "a subview of a memref whose rows are a multiple of 16 bytes (TMA's global strides)";
    return failure();
  }
  OpBuilder b(subview);
  auto offset = [&](int64_t dim) -> Value {
    OpFoldResult at = subview.getMixedOffsets()[dim];
    if (auto value = dyn_cast<Value>(at))
      return value;
    return arith::ConstantIndexOp::create(b, subview.getLoc(), cast<IntegerAttr>(cast<Attribute>(at)).getInt());
  };
  return GlobalTile{global, offset(0), offset(1)};
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
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value { return arith::ConstantIntOp::create(b, loc, i64, v); };
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, global);
  Value address = arith::IndexCastOp::create(b, loc, i64, pointer);
  // address, rows, columns, bytes per row, box rows, box columns, bytes per element
  SmallVector<Value> args = {address,
                             constant(type.getDimSize(0)),
                             constant(type.getDimSize(1)),
                             constant(type.getDimSize(1) * elementBytes),
                             constant(boxRows),
                             constant(boxCols),
                             constant(elementBytes)};
  return func::CallOp::create(b, loc, function, args).getResult(0);
}
