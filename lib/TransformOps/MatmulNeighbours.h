//===- MatmulNeighbours.h - a bufferized matmul's fill and epilogue -*- C++ -*-===//
//
// Shared by the transform ops that rewrite a bufferized linalg.matmul tile into explicit GPU code (tensor-core
// mma.sync, staged SIMT): the fill that initialises its C, the elementwise epilogue that can take C's values
// from registers, and that epilogue's body applied to one element.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H
#define KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>

namespace kforge {

/// The innermost stride of a memref, if static.
std::optional<int64_t> innermostStride(mlir::MemRefType type);

/// What surrounds a bufferized matmul writing C.
struct MatmulNeighbours {
  mlir::linalg::FillOp fill;         ///< Initialises C just before the matmul, or null.
  mlir::linalg::GenericOp epilogue;  ///< Can take C's values from registers, or null.
  mlir::memref::AllocOp cBuffer;     ///< C's buffer, erased with the epilogue, or null.
};

/// The fill right before the matmul that writes C (its only output); then, the epilogue: the next op with
/// effects after the matmul, an all-parallel rank-2 linalg.generic with one output (identity map) reading C
/// through the identity map and not its output's old values, no linalg.index; C a memref.alloc used only by
/// the fill, the matmul and it.
MatmulNeighbours findMatmulNeighbours(mlir::linalg::MatmulOp matmul);

/// Whether an op after the matmul in its block (other than a dealloc or the epilogue) uses C: each thread
/// writes only its own elements of C, so such an op would read the others' without a barrier.
bool cUsedAfter(mlir::linalg::MatmulOp matmul, mlir::Operation *epilogue);

/// The epilogue's body for one element of C (`value`, at C[row, col]): its other inputs read through their
/// indexing maps (scalars as they are), the body cloned at the builder's position; returns the yielded value.
mlir::Value epilogueElement(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::GenericOp epilogue, mlir::Value c,
                            mlir::Value value, mlir::Value row, mlir::Value col);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H
