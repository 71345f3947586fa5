//===- SimtTile.h - a block's SIMT GEMM tile: thread shares and K steps -*- C++ -*-===//
//
// Shared by the staged SIMT rewrites (SimtStaged.cpp: a matmul; ImplicitGemmSimt.cpp: a convolution's implicit
// GEMM): which 4-element vector of a tile copy a thread takes, and one step of K from K-major stages.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_SIMTTILE_H
#define KFORGE_LIB_TRANSFORMOPS_SIMTTILE_H

#include "mlir/IR/Builders.h"

#include <utility>

namespace kforge::simt {

/// f32 elements per 16-byte access: a copy's vector, a thread's group of rows or columns.
inline constexpr int64_t kVector = 4;

/// Row and column (in elements) of the vector `thread` + `first` of a rows x cols tile of 4-element vectors
/// (consecutive threads on consecutive vectors of a row). When `threads` do not divide the tile's vectors, the
/// last round's extra threads take the tile's last vector again (no branch: they load the same values and store
/// them to the same place as its own thread).
std::pair<mlir::Value, mlir::Value> vectorPosition(mlir::OpBuilder &b, mlir::Location loc, mlir::Value thread,
                                                   int64_t threads, int64_t first, int64_t rows, int64_t cols);

/// One K step from stage `stage` of two K-major stages (A^T: [stage][k][row], B: [stage][k][column]): the
/// thread's `tileM` rows and `tileN` columns at K index `kk` as 4-wide reads, one per group of 4 starting at
/// `row(i)` (`col(j)`) for i (j) a multiple of 4, then tileM x tileN fused multiply-adds into `acc` (row-major).
llvm::SmallVector<mlir::Value> multiplyStep(mlir::OpBuilder &b, mlir::Location loc, mlir::Value aShared,
                                            mlir::Value bShared, mlir::Value stage, int64_t kk, int64_t tileM,
                                            int64_t tileN, llvm::function_ref<mlir::Value(int64_t)> row,
                                            llvm::function_ref<mlir::Value(int64_t)> col,
                                            llvm::SmallVector<mlir::Value> acc);

} // namespace kforge::simt

#endif // KFORGE_LIB_TRANSFORMOPS_SIMTTILE_H
