//===- LoopOrderAndPadding.h - importer loop orders and paddings, normalized --*- C++ -*-===//
//
// Part of kforge-normalize-importer (NormalizeImporter.cpp), private to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMS_LOOPORDERANDPADDING_H
#define KFORGE_LIB_TRANSFORMS_LOOPORDERANDPADDING_H

#include "mlir/IR/PatternMatch.h"

namespace kforge {

/// Adds the patterns that put a generic's reduction loops after its parallel ones, and that compute a constant
/// padding (`tensor.pad`) or a source spread over a constant fill (`tensor.insert_slice`) as a linalg.generic
/// (see LoopOrderAndPadding.cpp).
void populateLoopOrderAndPaddingPatterns(mlir::RewritePatternSet &patterns);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMS_LOOPORDERANDPADDING_H
