//===- WindowOps.h - convolutions and poolings, named or gathered -*- C++ -*-===//
//
// A window op reduces, for each output point, over a window of its input that slides with the point: linalg's
// convolutions and poolings, and the generic a convolution becomes once its padded input is fused into it
// (kforge-normalize-importer), which reads the input through tensor.extract at an index that adds a
// reduction loop (the window's offset) to a parallel one (the output point).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_WINDOWOPS_H
#define KFORGE_TRANSFORMS_WINDOWOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kforge {

/// Whether `op` is a window op: a convolution or pooling (linalg's ConvolutionOpInterface), or a generic with
/// reduction loops whose body gathers (tensor.extract) at an index computed from both a parallel loop's and a
/// reduction loop's position.
bool isWindowOp(mlir::linalg::LinalgOp op);

} // namespace kforge

#endif // KFORGE_TRANSFORMS_WINDOWOPS_H
