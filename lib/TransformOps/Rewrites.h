//===- Rewrites.h - the rewrites behind the transform.kforge.* ops -*- C++ -*-===//
//
// One function per op that does more than a line of rewriting: it checks its target, then rewrites it. The
// ops (KforgeTransformOps.cpp) only read their attributes, call these and report the outcome.
//
// Unless said otherwise, a rewrite that fails has not touched the IR and has set `why` to the reason (the op's
// silenceable failure; the op descriptions in KforgeTransformOps.td say when). Options are as the op's verifier
// accepts them.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_REWRITES_H
#define KFORGE_LIB_TRANSFORMOPS_REWRITES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace kforge {

/// Sets `why` to `reason` and returns failure: how the rewrites below give up.
inline llvm::LogicalResult reject(std::string &why, const llvm::Twine &reason) {
  why = reason.str();
  return llvm::failure();
}

/// transform.kforge.fuse_elementwise_producers: fuses every elementwise linalg.generic inside `scope` into each
/// of its consumers there, until none is left. Fails only when upstream's fusion misbehaves (a definite failure:
/// the IR may be changed).
llvm::LogicalResult fuseElementwiseProducers(mlir::RewriterBase &rewriter, mlir::Operation *scope, std::string &why);

/// transform.kforge.distribute_rows_to_lanes's options.
struct RowsToLanesOptions {
  int64_t lanes = 32;   ///< A power of 2 from 2 to 32, or a multiple of 32 up to 1024.
  int64_t vector = 1;   ///< 1, 2 or 4 consecutive columns per lane.
  bool moments = false; ///< A row's sum and centred sum of squares in one round (the warps a power of 2).
};

/// transform.kforge.distribute_rows_to_lanes: the thread-level forall over rows becomes a forall over (rows,
/// lanes); returns it (the old forall is replaced).
mlir::FailureOr<mlir::scf::ForallOp> distributeRowsToLanes(mlir::RewriterBase &rewriter, mlir::scf::ForallOp forall,
                                                           const RowsToLanesOptions &options, std::string &why);

/// transform.kforge.matmul_to_mma_sync's options.
struct MmaSyncOptions {
  int64_t kSteps = 1, blockK = 0;
  llvm::SmallVector<int64_t, 2> warpGrid;
  bool ldmatrix = false;
  int64_t asyncStages = 0;
  bool wgmma = false, tma = false;
  bool warpSpecialized = false; ///< tma: a producer warp issues the copies; mbarriers replace the block barrier.
  int64_t persistentBlocks = 0; ///< warp-specialized: this many blocks loop over the tiles (0: a block a tile).
  std::string clusterMulticast; ///< warp-specialized: "a" or "b", the operand a cluster of two blocks shares.
  int64_t wgmmaInFlight = 0;
  bool stageEpilogue = false;
  bool tf32 = false; ///< f32 operands multiplied as TF32 (wgmma only).
  bool swapAB = false; ///< tf32 + tma: C^T = B^T A^T, B's fragments from its stage into registers.
  bool producerWarpgroup = false; ///< warp-specialized: a producer warpgroup that gives its registers away.
};

/// transform.kforge.matmul_to_mma_sync: replaces the matmul (with its fill and epilogue) by tensor-core code.
llvm::LogicalResult matmulToMmaSync(mlir::RewriterBase &rewriter, mlir::linalg::MatmulOp matmul,
                                    const MmaSyncOptions &options, std::string &why);

/// transform.kforge.matmul_to_simt_staged's options.
struct SimtStagedOptions {
  int64_t blockK = 0;                       ///< A positive multiple of 4.
  llvm::SmallVector<int64_t, 2> threadGrid; ///< [rows, columns], both positive.
  bool asyncB = false;
};

/// transform.kforge.matmul_to_simt_staged: replaces the matmul (with its fill and epilogue) by a block's staged
/// SIMT matmul.
llvm::LogicalResult matmulToSimtStaged(mlir::RewriterBase &rewriter, mlir::linalg::MatmulOp matmul,
                                       const SimtStagedOptions &options, std::string &why);

/// transform.kforge.implicit_gemm_to_simt_staged's options.
struct ImplicitGemmOptions {
  int64_t blockK = 0;                       ///< A positive multiple of 4.
  llvm::SmallVector<int64_t, 2> threadGrid; ///< [rows, columns], both positive.
  llvm::SmallVector<int64_t> serialLoops;   ///< Parallel loops the block walks one position at a time.
  bool asyncCopies = false;                 ///< Tiles copied element by element by cp.async (zero-filled where masked).
  /// How the asynchronous copies are shared out among the threads (copy_order).
  enum class CopyOrder { KGroups, Contiguous, ContiguousLongestK };
  CopyOrder copyOrder = CopyOrder::KGroups;
};

/// transform.kforge.implicit_gemm_to_simt_staged: replaces a block's contraction (out + x * y: a convolution as
/// its implicit GEMM; with its fill and epilogue) by a staged SIMT GEMM whose tiles are computed element by
/// element from the loop positions.
llvm::LogicalResult implicitGemmToSimtStaged(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                                             const ImplicitGemmOptions &options, std::string &why);

/// transform.kforge.implicit_gemm_to_mma_sync's options.
struct ImplicitGemmMmaOptions {
  int64_t blockK = 0;                     ///< A positive multiple of 16.
  llvm::SmallVector<int64_t, 2> warpGrid; ///< [rows, columns] of warps, both positive.
  llvm::SmallVector<int64_t> serialLoops; ///< Parallel loops the block walks one position at a time.
  int64_t stages = 2;                     ///< Shared-memory stages, 2 to 8 (above 2: every copy a 16-byte cp.async).
  bool wgmma = false;                     ///< Hopper's warpgroup MMA on swizzled stages instead of mma.sync.
  int64_t wgmmaInFlight = 0;              ///< wgmma: tiles whose wgmma may still run while the next is issued (0, 1).
  bool tf32 = false;                      ///< wgmma: f32 multiplicands as TF32 (both staged along K, block_k 32).
};

/// transform.kforge.implicit_gemm_to_mma_sync: replaces a block's contraction of 16-bit floats accumulated in
/// f32 (a convolution as its implicit GEMM; with its fill and epilogue) by warps of tensor-core mma.sync over
/// staged tiles.
llvm::LogicalResult implicitGemmToMmaSync(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                                          const ImplicitGemmMmaOptions &options, std::string &why);

/// transform.kforge.prefetch_rows_to_l2 (`ahead` positive): the launch, which now prefetches rows into L2.
mlir::FailureOr<mlir::gpu::LaunchOp> prefetchRowsToL2(mlir::RewriterBase &rewriter, mlir::gpu::LaunchOp launch,
                                                      int64_t ahead, std::string &why);

/// transform.kforge.group_block_order (`rows` positive): the launch, its blocks renumbered in groups of `rows`
/// block rows (cluster rows, its clusters kept whole); failure (why) for cluster sizes that are not constants.
mlir::FailureOr<mlir::gpu::LaunchOp> groupBlockOrder(mlir::RewriterBase &rewriter, mlir::gpu::LaunchOp launch,
                                                     int64_t rows, std::string &why);

/// transform.kforge.stash_rows_in_shared (`quarters` 1, 2 or 3): the launch, its row values partly stashed in
/// shared memory.
mlir::FailureOr<mlir::gpu::LaunchOp> stashRowsInShared(mlir::RewriterBase &rewriter, mlir::gpu::LaunchOp launch,
                                                       int64_t quarters, std::string &why);

/// transform.kforge.pipeline_rows (`blocks` positive): the launch, its blocks now looping over rows.
mlir::FailureOr<mlir::gpu::LaunchOp> pipelineRows(mlir::RewriterBase &rewriter, mlir::gpu::LaunchOp launch,
                                                  int64_t blocks, std::string &why);

} // namespace kforge

#endif // KFORGE_LIB_TRANSFORMOPS_REWRITES_H
