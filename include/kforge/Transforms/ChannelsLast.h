//===- ChannelsLast.h - a convolution's channels made innermost -*- C++ -*-===//
//
// PyTorch's convolutions are NCHW with FCHW filters: the channels, the implicit GEMM's K, are the outer
// dimension of both, so a tile of K is copied element by element (on tensor cores that bounds the kernel:
// session 57 measured NCHW bf16 at 0.47-0.61x cuDNN against 0.88x for NHWC). As cuDNN does, the tensor can be
// copied once with its channels innermost (NHWC, FHWC: PyTorch's channels_last) by a transpose kernel of its
// own, and the convolution read from the copy, whose K tiles are then 16-byte copies.
//
// The channel loop is a reduction loop that both multiplicands index a whole dimension by (a convolution's
// input channels: not the window's loops, which the input reads as h + kh). A multiplicand's tensor is
// transposed when that dimension is not its innermost: collapsed to [outer, C, inner] (or [C, inner]),
// transposed to [outer, inner, C] by a linalg.transpose, and expanded back, the dimension moved last; the
// convolution's reads of it (its indexing map, or the tensor.extract of a padded input) are permuted alike.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_CHANNELSLAST_H
#define KFORGE_TRANSFORMS_CHANNELSLAST_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace kforge {

/// One multiplicand whose tensor a channels-last rewrite transposes.
struct ChannelsLastOperand {
  /// Which multiplicand of the body's `out + x * y`: 0 for x, 1 for y.
  unsigned multiplicand = 0;
  /// The transpose's result: [outer, inner, C], or [inner, C] when the channels are the outermost dimension.
  llvm::SmallVector<int64_t> transposedShape;
};

/// The multiplicands of `op` (an implicit GEMM: a body `out + x * y`) whose tensors would be transposed, in
/// multiplicand order (whyNotChannelsLast says why the others are not); failure with `why` when there are none.
mlir::FailureOr<llvm::SmallVector<ChannelsLastOperand>> planChannelsLast(mlir::linalg::LinalgOp op, std::string &why);

/// Why multiplicand `multiplicand` (0: x, 1: y) of `op` is not copied channels-last, or "" when it is: no
/// channel loop, its channels innermost already, or its tensor computed in the payload (only a function
/// argument is copied: the op computing it would be left outside the kernels).
std::string whyNotChannelsLast(mlir::linalg::LinalgOp op, unsigned multiplicand);

/// Transposes multiplicand `multiplicand`'s tensor of `op` (a generic) to channels-last and permutes the op's
/// reads of it, in place. Returns the linalg.transpose (inserted before `op`); failure with `why`, the IR
/// untouched, when that multiplicand is not to be transposed (whyNotChannelsLast).
mlir::FailureOr<mlir::linalg::TransposeOp> moveChannelsInnermost(mlir::RewriterBase &rewriter,
                                                                 mlir::linalg::GenericOp op, unsigned multiplicand,
                                                                 std::string &why);

} // namespace kforge

#endif // KFORGE_TRANSFORMS_CHANNELSLAST_H
