//===- TensorMap.h - TMA tensor maps of a kernel's global operands -*- C++ -*-===//
//
// Hopper's tensor memory accelerator (TMA) copies a box of a global tensor into shared memory, described by a
// CUtensorMap that the host builds (cuTensorMapEncodeTiled) before the launch. These helpers find the global
// memref a kernel's tile is cut from and emit, before the gpu.launch, the call that builds its tensor map:
// kforge's runtime (runtime/mgpu_runtime.c, kforge_tensor_map_2d) encodes it, keeps it in device memory
// (cached by its parameters, so a kernel called again with the same buffers pays no copy) and returns its
// device address, which the kernel takes as an i64.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_TENSORMAP_H
#define KFORGE_LIB_TRANSFORMOPS_TENSORMAP_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace kforge {

/// A tile of a global memref as TMA sees it: the memref (row-major, static shape, defined outside the launch;
/// 2-D, or 3-D seen as 2-D with its batches' rows one after another) and the tile's first row and column in that
/// 2-D view (values inside the launch).
struct GlobalTile {
  mlir::Value global;
  mlir::Value row, col;
};

/// `tile` as a unit-stride memref.subview of a memref defined outside `launch` (or such a 2-D memref whole), or
/// failure with `why` set.
mlir::FailureOr<GlobalTile> globalTileOf(mlir::Value tile, mlir::gpu::LaunchOp launch, std::string &why);

/// The runtime function that builds a tensor map (declared in the module on first use).
constexpr const char *kTensorMapFunction = "kforge_tensor_map_2d";

/// Emits, right before `launch`, the call that builds a tensor map of `global` (a row-major memref with a
/// static shape, its leading dims flattened into rows) for boxes of boxRows x boxCols elements landing 128-byte
/// swizzled in shared memory; returns its device address (i64), for the kernel to use.
mlir::Value createTensorMap2d(mlir::OpBuilder &b, mlir::Location loc, mlir::gpu::LaunchOp launch, mlir::Value global,
                              int64_t boxRows, int64_t boxCols);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_TENSORMAP_H
