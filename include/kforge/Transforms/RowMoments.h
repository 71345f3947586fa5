//===- RowMoments.h - a row's sum and centred sum of squares ---*- C++ -*-===//
//
// Layernorm's statistics as linalg on tensors: the row sum S = sum(x), the centred values c = x - S / N, their
// squares and the centred sum of squares Q = sum(c * c). Q depends on S, so computed as written the two are
// two dependent reductions over the row; together they are the row's first two moments, which partial sums
// of disjoint parts of the row determine (Chan et al.'s pairwise update: for parts a and b of counts n_a and
// n_b, Q = Q_a + Q_b + (mean_b - mean_a)^2 n_a n_b / (n_a + n_b)), so one combining round gives both.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_ROWMOMENTS_H
#define KFORGE_TRANSFORMS_ROWMOMENTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace kforge {

struct RowMoments {
  mlir::linalg::GenericOp sum;        ///< S: sum(x) over the row's last loop, from a zero fill.
  mlir::linalg::GenericOp centre;     ///< c = x - S / N (or S * (1 / N)), elementwise (S broadcast along the row).
  mlir::linalg::GenericOp square;     ///< c * c, elementwise; null when the sum of squares squares c itself.
  mlir::linalg::GenericOp sumSquares; ///< Q: sum(c * c) over the row (of `square`, or c * c + acc), from a zero fill.
  int64_t count = 0;                  ///< N, the row's length (the reductions' last loop).
};

/// The moments chain that starts at `sum`, if `sum` is a row sum whose result is centred, squared and summed
/// as above (float, the same x read by the sum and the centring, N the constant the centring divides by, or
/// 1 / N the one it multiplies by).
std::optional<RowMoments> matchRowMoments(mlir::linalg::LinalgOp sum);

} // namespace kforge

#endif // KFORGE_TRANSFORMS_ROWMOMENTS_H
