//===- RowKernels.h - what the row-kernel transform ops share ---*- C++ -*-===//

#ifndef KFORGE_LIB_TRANSFORMOPS_ROWKERNELS_H
#define KFORGE_LIB_TRANSFORMOPS_ROWKERNELS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"

namespace kforge {
/// The memref a view is taken of (through subviews, casts and reshapes).
mlir::Value viewRoot(mlir::Value value);

/// The memrefs the launch writes (roots of every value with a write effect in its body).
llvm::DenseSet<mlir::Value> writtenRoots(mlir::gpu::LaunchOp launch);

/// Whether `value` is the launch's block index along x.
bool isBlockIdX(mlir::Value value, mlir::gpu::LaunchOp launch);

/// Whether `view` is row [block_id x] of a statically shaped 2-D memref from outside the launch that the launch
/// does not write (`written`: writtenRoots(launch)): offsets [block_id x, 0], sizes [1, N], unit strides.
bool isBlockRow(mlir::memref::SubViewOp view, mlir::gpu::LaunchOp launch, const llvm::DenseSet<mlir::Value> &written);
} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_ROWKERNELS_H
