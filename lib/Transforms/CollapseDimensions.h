//===- CollapseDimensions.h - loops every op walks together, as one loop --*- C++ -*-===//
//
// Part of kforge-normalize-importer (NormalizeImporter.cpp), private to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMS_COLLAPSEDIMENSIONS_H
#define KFORGE_LIB_TRANSFORMS_COLLAPSEDIMENSIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace kforge {

/// Where a function of linalg.generic ops has an op with more loops than a GPU grid has dimensions (3), one
/// that reduces over more than one loop (a layer norm over C x H x W, a loss over a 4-D tensor), or a
/// reduction with several parallel loops (a max over the last dimension of a 3-D tensor), merges
/// the loops that every op walks together into one: adjacent loops of one kind that each op's operands index
/// as adjacent dimensions, in order, with every tensor cut the same way by every op that reads or writes it.
/// The function's arguments are collapsed on entry and its results expanded on return, so its signature
/// stays. A LayerNorm over three dimensions becomes a row reduction over rows of C*H*W, an RMS norm over
/// the channels of NCHW a reduction over C of (N, C, H*W), a 4-D elementwise op 1-D. `patterns` (the
/// normalization's own) fold the reshapes between ops; when any is left inside the function (a tensor that
/// a named op or another reshape also reads), the function is left as it was. True when it changed.
bool collapseDimensionGroups(mlir::func::FuncOp function, const mlir::FrozenRewritePatternSet &patterns);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMS_COLLAPSEDIMENSIONS_H
