//===- ImplicitGemmAccess.h - a block's implicit GEMM, element by element -*- C++ -*-===//
//
// Shared by the rewrites of a block's contraction read as its implicit GEMM (kforge/Transforms/ImplicitGemm.h):
// ImplicitGemmSimt.cpp (fp32, SIMT) and ImplicitGemmMma.cpp (bf16/f16 on mma.sync). The plan of the GEMM's
// loops (M, N, K, serial), and the element access both emitters build on: a GEMM row, column and K index as
// loop positions, an operand's element at those positions (the op's body cloned), an output element's indices
// and whether it is stored. Private to lib/TransformOps.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_IMPLICITGEMMACCESS_H
#define KFORGE_LIB_TRANSFORMOPS_IMPLICITGEMMACCESS_H

#include "MatmulNeighbours.h"

#include "kforge/Transforms/ImplicitGemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace kforge {

/// The loops of a block's implicit GEMM and the tile the block computes.
struct ImplicitGemmPlan {
  mlir::linalg::LinalgOp op;
  ImplicitGemm gemm;
  /// The tile's loop sizes: static, or a partial tile's bound (its block tile), the size then in `sizes`.
  llvm::SmallVector<int64_t> extents;
  llvm::SmallVector<mlir::Value> sizes; ///< Per loop: a partial tile's dynamic size, else null.
  llvm::SmallVector<int64_t> mLoops, nLoops, kLoops, serialLoops;
  int64_t m = 1, n = 1, k = 1, serialPositions = 1;
  int64_t blockK = 0;
  /// The GEMM's rows and columns as the block covers them (at least m and n). Rows and columns past m and n
  /// (and positions past a partial tile's size) are computed from clamped positions and never stored.
  int64_t mPadded = 0, nPadded = 0;
  mlir::Value c;
  mlir::AffineMap outMap;
  mlir::gpu::LaunchOp launch;
  MatmulNeighbours neighbours;
  /// Whether some row, column or position of the tile is masked.
  bool masked() const {
    return mPadded != m || nPadded != n || llvm::any_of(sizes, [](mlir::Value size) { return bool(size); });
  }
};

/// The loops of `op` (on memrefs, an implicit GEMM) as a plan: roles, extents (a partial tile's bound), the
/// serial loops named, K's loops in the op's order. Fails with `why` on a dynamic size that is not a partial
/// block tile, a bad serial loop, a batch loop wider than 1 that is not serial, or a side left without loops.
mlir::FailureOr<ImplicitGemmPlan> planImplicitGemmLoops(mlir::linalg::LinalgOp op, llvm::ArrayRef<int64_t> serialLoops,
                                                        std::string &why);

/// Moves `loop` to the end of K's loops (innermost), when it is one of them.
void makeInnermostK(ImplicitGemmPlan &plan, int64_t loop);

/// Element access to a block's implicit GEMM at the builder's position.
class ImplicitGemmAccess {
public:
  /// `group`: the width of the groups of consecutive rows, columns or K indices whose positions share one
  /// delinearization (a Coord's constants stay below it).
  ImplicitGemmAccess(mlir::RewriterBase &rewriter, ImplicitGemmPlan &plan, int64_t group)
      : b(rewriter), loc(plan.op.getLoc()), ctx(rewriter.getContext()), access(plan), group(group) {}

  /// An element of the GEMM: its row, column and K index (null: not asked for), each as a value plus a
  /// constant below the group. Where the value is a multiple of the group and its side's innermost loop whole
  /// groups long, the constant moves that loop's position only (a group shares one delinearization).
  struct Coord {
    mlir::Value row, col, k;
    int64_t rowAdd = 0, colAdd = 0, kAdd = 0;
    /// A K index below block_k added to `k` (then a K tile's start, a multiple of block_k) on K's innermost loop
    /// alone: set (kTileCoord) only where that loop is whole K tiles long, so the tile's start is delinearized
    /// once per tile, not once per element.
    mlir::Value kInTile;
  };

  /// The Coord of K index kOff + kInTile (kOff a K tile's start, kInTile below block_k): split as Coord::kInTile
  /// where K's innermost loop is whole tiles long, else their sum.
  Coord kTileCoord(mlir::Value kInTile, mlir::Value kOff);

  /// A multiplicand that is an element read (or select(c, read, 0.0)) at loop positions: the memref, its
  /// indices, and the condition under which the read counts (null: always).
  struct Read {
    mlir::Value source;
    llvm::SmallVector<mlir::Value> indices;
    mlir::Value valid;
  };

protected:
  mlir::Value index(int64_t v) { return mlir::arith::ConstantIndexOp::create(b, loc, v); }
  mlir::Value apply(mlir::AffineExpr e, mlir::Value x) {
    return mlir::affine::AffineApplyOp::create(b, loc, mlir::AffineMap::get(1, 0, e), x);
  }
  mlir::Value add(mlir::Value base, int64_t constant) { return apply(mlir::getAffineDimExpr(0, ctx) + constant, base); }

  /// A linearized index as positions along `loops` (innermost last), by their extents.
  llvm::SmallVector<mlir::Value> delinearize(mlir::Value linear, llvm::ArrayRef<int64_t> loops);
  /// `i` at most `extent` - 1.
  mlir::Value clampIndex(mlir::Value i, int64_t extent);

  /// Every loop's position at `at` (the loops of a side not asked for at 0: the value asked for does not read
  /// them), serial loops at the current step, batch loops at 0. `clamped` (for reads): a row, column or K index
  /// past m, n or K, and a position past a partial tile's size, clamped to the last (valid addresses; what they
  /// give is never stored, or is masked to zero).
  llvm::SmallVector<mlir::Value> positions(const Coord &at, bool clamped);

  /// Whether the element at row `row`, column `col` (unclamped positions `at`) is one of the output's.
  mlir::Value stored(mlir::Value row, mlir::Value col, llvm::ArrayRef<mlir::Value> at);

  /// `value` (computed in the op's body) at loop positions `at`: the body's ops cloned with each input read
  /// through its indexing map and each linalg.index replaced by its position.
  mlir::Value evaluate(mlir::Value value, llvm::ArrayRef<mlir::Value> at,
                       llvm::DenseMap<mlir::Value, mlir::Value> &done);

  /// `multiplicand` (an element read, or select(c, read, 0.0)) at loop positions `at`.
  Read evaluateRead(mlir::Value multiplicand, llvm::ArrayRef<mlir::Value> at,
                    llvm::DenseMap<mlir::Value, mlir::Value> &done);

  /// Whether the element's K index lies within K (null when K has no partial tile).
  mlir::Value withinK(const Coord &at);

  /// The output's indices at loop positions `at`.
  llvm::SmallVector<mlir::Value> outIndices(llvm::ArrayRef<mlir::Value> at);

  /// Stores `value` at `indices` of `target` where `ok` holds (always when null).
  void storeIf(mlir::Value ok, mlir::Value value, mlir::Value target, mlir::ValueRange indices);

  /// Runs `gemm` at the builder's position: once, or in an scf.for over the serial loops' positions (`serial`
  /// set to the step's).
  void forEachSerialPosition(llvm::function_ref<void()> gemm);

  /// The initial accumulator of the output element at `at` (a Coord of row and column): the fill's value, an
  /// elementwise init's (a bias), else the output's own (copied into it by bufferization: read at the copy's
  /// source).
  mlir::Value initialValue(const Coord &at);

  mlir::RewriterBase &b;
  mlir::Location loc;
  mlir::MLIRContext *ctx;
  ImplicitGemmPlan &access;
  int64_t group;
  llvm::SmallVector<mlir::Value> serial; ///< The serial loops' positions in the current step.
};

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_IMPLICITGEMMACCESS_H
