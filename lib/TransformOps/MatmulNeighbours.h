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
  mlir::linalg::FillOp fill; ///< Initialises C just before the matmul, or null.
  /// The epilogue, applied to C's values in registers in this order (empty: none): elementwise ops that
  /// update C in place, then possibly one that writes another buffer.
  llvm::SmallVector<mlir::linalg::GenericOp> epilogue;
  mlir::memref::AllocOp cBuffer; ///< C's buffer when the epilogue's result goes elsewhere: erased with it.
  /// Where the result goes: the last epilogue op's output, or C.
  mlir::Value result(mlir::Value c) const {
    return epilogue.empty() ? c : mlir::linalg::GenericOp(epilogue.back()).getDpsInits()[0];
  }
};

/// The fill right before the matmul that writes C (its only output); then the epilogue: the next ops with
/// effects after the matmul that are all-parallel rank-2 linalg.generics with one output (identity map),
/// reading C through the identity map and not their output's old values, without linalg.index; each either
/// writes C in place (the chain goes on) or writes another buffer (the chain ends there; C must then be a
/// memref.alloc used only by the fill, the matmul and the chain, and is erased).
MatmulNeighbours findMatmulNeighbours(mlir::linalg::MatmulOp matmul);

/// Whether an op after the matmul in its block (other than a dealloc or the epilogue) uses C: each thread
/// writes only its own elements of C, so such an op would read the others' without a barrier.
bool cUsedAfter(mlir::linalg::MatmulOp matmul, llvm::ArrayRef<mlir::linalg::GenericOp> epilogue);

/// The epilogue's ops for one element of C: `epilogueElement` for each in turn.
mlir::Value epilogueChainElement(mlir::OpBuilder &b, mlir::Location loc,
                                 llvm::ArrayRef<mlir::linalg::GenericOp> epilogue, mlir::Value c, mlir::Value value,
                                 mlir::Value row, mlir::Value col);

/// The epilogue's body for one element of C (`value`, at C[row, col]): its other inputs read through their
/// indexing maps (scalars as they are), the body cloned at the builder's position; returns the yielded value.
mlir::Value epilogueElement(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::GenericOp epilogue, mlir::Value c,
                            mlir::Value value, mlir::Value row, mlir::Value col);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_MATMULNEIGHBOURS_H
