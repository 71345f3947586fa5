//===- ImplicitGemm.h - a contraction's loops as a GEMM's M, N and K -*- C++ -*-===//
//
// A linalg op whose body is `out + x * y` is a GEMM whatever its indexing: a matmul, and a convolution read as
// its implicit GEMM (the rows of im2col are never built: each element of the A or B tile is computed from its
// loop positions). The loops x reads but y does not are the GEMM's M, those only y reads its N, the reduction
// loops its K. Named convolutions (NCHW/FCHW, NHWC/HWCF, strided, dilated) and the generic a padded one
// becomes in kforge-normalize-importer (a guarded tensor.extract of the unpadded input) fit alike.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_IMPLICITGEMM_H
#define KFORGE_TRANSFORMS_IMPLICITGEMM_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace kforge {

/// What a loop is to the GEMM: a row (read by A's side only), a column (B's side only), the reduction, or a
/// loop both sides (or neither) read: a batch, which a block takes one position of at a time.
enum class GemmRole : char { M = 'm', N = 'n', K = 'k', Batch = 'b' };

struct ImplicitGemm {
  /// Each loop's role, in loop order. Oriented so that the output's innermost dimension is a column (N) loop
  /// where it can be: stores then run along a row of C.
  llvm::SmallVector<GemmRole> roles;
  /// The multiplicands in the body: `a` computed from M and K loops, `b` from N and K loops.
  mlir::Value a, b;
  /// The loops (of A's side and of B's) along which the element read varies fastest in memory: the loop its
  /// innermost index follows; -1 when unknown. A tile copy walks that loop with consecutive threads.
  int64_t aFastLoop = -1, bFastLoop = -1;
  /// Whether each multiplicand is an element read (an input through its indexing map, a tensor.extract or a
  /// memref.load) or a select of one and 0.0 (a padded read): a tile copy can then go straight to shared
  /// memory (cp.async, zero-filled where the select picks 0).
  bool aIsRead = false, bIsRead = false;
  std::string rolesString() const {
    std::string s;
    for (GemmRole role : roles)
      s += static_cast<char>(role);
    return s;
  }
  llvm::SmallVector<int64_t> loopsOf(GemmRole role) const {
    llvm::SmallVector<int64_t> loops;
    for (auto [i, r] : llvm::enumerate(roles))
      if (r == role)
        loops.push_back(static_cast<int64_t>(i));
    return loops;
  }
};

/// `op` as an implicit GEMM, or failure with `why` set: one output, read only as the accumulator of a body
/// `out + x * y` (either order) of floats, x and y computed only by pure ops, element reads (tensor.extract,
/// memref.load) and the inputs, the output's map a permutation of the parallel loops, and at least one M, N
/// and K loop.
mlir::FailureOr<ImplicitGemm> analyzeImplicitGemm(mlir::linalg::LinalgOp op, std::string &why);

/// The product of `op`'s body `out + x * y` (the sum in either order; `out`, its one output's value, read only
/// there): its lhs is x, its rhs y. Null when the body is not of that form.
mlir::arith::MulFOp bodyProduct(mlir::linalg::LinalgOp op);

/// The element read under `value` in `op`'s body (an input's block argument, a tensor.extract or a memref.load),
/// looking through a padding's select(c, read, 0.0); null when it is neither.
mlir::Value maskedElementRead(mlir::linalg::LinalgOp op, mlir::Value value);

/// `v` with an `arith.extf` from a 16-bit float removed (an importer's bf16 convolution extends its operands to
/// f32 in the body to accumulate in f32).
mlir::Value withoutExtension(mlir::Value v);

/// The element read a multiplicand of `op` makes (its extension from 16 bits removed; a read or select(c, read,
/// 0.0)) when its layout lets a tile copy take `width` consecutive elements at once along its contiguous loop
/// `fast`: the read indexes its innermost dimension by `fast`'s position itself, c does not depend on `fast`, and
/// `fast`'s static extent is whole groups of `width`. Null otherwise. (Alignment is the rewrite's to check.)
mlir::Value vectorCopyRead(mlir::linalg::LinalgOp op, mlir::Value multiplicand, int64_t fast, int64_t width);

/// Whether both multiplicands' tiles can be copied `width` elements at a time (vectorCopyRead), along one K loop
/// where both are contiguous along K.
bool copiesInVectors(mlir::linalg::LinalgOp op, const ImplicitGemm &gemm, int64_t width);

} // namespace kforge

#endif // KFORGE_TRANSFORMS_IMPLICITGEMM_H
