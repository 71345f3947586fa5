//===- GatherOperands.h - element reads inside linalg bodies, as operands --*- C++ -*-===//
//
// Part of kforge-normalize-importer (NormalizeImporter.cpp), private to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMS_GATHEROPERANDS_H
#define KFORGE_LIB_TRANSFORMS_GATHEROPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kforge {

/// Adds the patterns for a `tensor.extract` (torch-mlir's gathers: a loss that picks each row's value at its
/// class index) from a computed tensor (see GatherOperands.cpp):
/// - an element read from an elementwise op's result is that op's body computed on the elements of its
///   operands at the same place, so the big elementwise intermediate (log-softmax over every class) is not
///   needed at all;
/// - an element read inside a linalg.generic at the generic's own loop indices (or constants) becomes an
///   operand of the generic, read through the corresponding indexing map, so that tiling and fusion see it;
/// - a constant integer operand that is an index table (each element a function of its own coordinate along
///   one dimension: (i floordiv q) mod m, or one value) is computed from the loop instead of read.
void populateGatherOperandsPatterns(mlir::RewritePatternSet &patterns);

/// Adds the pattern that makes a body's read of a whole rank-0 tensor computed elsewhere (`tensor.extract %t[]`,
/// not a constant) an input read through `(loops) -> ()`. Not with upstream's scalar-operand inlining, which
/// undoes it: kforge-normalize-importer's last step.
void populateScalarOperandsPatterns(mlir::RewritePatternSet &patterns);

/// A generic with `op`'s body (moved, not copied) and discardable attributes over new operands, maps and
/// loops; `op` is left bodiless for the caller to replace. Shared by kforge-normalize-importer's rewrites.
mlir::linalg::GenericOp rebuildGeneric(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op,
                                       mlir::ValueRange inputs, mlir::ValueRange inits,
                                       llvm::ArrayRef<mlir::AffineMap> maps,
                                       llvm::ArrayRef<mlir::utils::IteratorType> iterators);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMS_GATHEROPERANDS_H
