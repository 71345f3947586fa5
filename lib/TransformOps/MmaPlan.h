//===- MmaPlan.h - what transform.kforge.matmul_to_mma_sync rewrites ----*- C++ -*-===//
//
// The plan of one matmul_to_mma_sync rewrite (the matmul, its options and its neighbours, checked), and the
// shared-memory layouts of its staged forms; MmaSync.cpp emits the code for a plan.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_MMAPLAN_H
#define KFORGE_LIB_TRANSFORMOPS_MMAPLAN_H

#include "MatmulNeighbours.h"
#include "Rewrites.h"
#include "TensorMap.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace kforge::mma {

/// The instruction: mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32.
inline constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 16;

/// What the rewrite needs to know about the matmul and its neighbours.
struct MmaPlan : kforge::MatmulTile {
  int64_t kSteps = 1;          ///< Steps of 16 per iteration of the K loop.
  /// Staged (block_k > 0): the matmul is a block's tile, split over a warp grid; its K loop walks tiles of
  /// block_k, A and B staged through two shared-memory buffers.
  int64_t blockK = 0, warpRows = 1, warpCols = 1;
  bool ldmatrix = false;       ///< Staged: fragments read by ldmatrix (four 8x8 matrices per instruction).
  int64_t asyncStages = 0;     ///< Staged: 0, two stages through registers; else this many filled by cp.async.
  /// Staged and async: Hopper's warpgroup MMA (wgmma.mma_async m64nNk16) on 128-byte swizzled stages instead
  /// of mma.sync: each warpgroup (4 warps) multiplies 64 rows by the block's N columns.
  bool wgmma = false;
  /// wgmma with TMA: each stage is filled by the tensor memory accelerator (one thread issues a bulk tensor
  /// copy per box, completing on the stage's mbarrier) instead of every thread's cp.async.
  bool tma = false;
  /// tma with a producer warp: the block is the grid's warps (the consumers, which only wait and multiply) plus
  /// one warp whose first thread issues every tile's copies; each stage has a full and an empty mbarrier.
  bool warpSpecialized = false;
  /// Warp-specialized: at most this many blocks, each looping over tiles (0: one tile a block, as launched).
  int64_t persistentBlocks = 0;
  /// persistent: the launch's grid (its static sizes along x and y) before it became persistent.
  int64_t gridX = 1, gridY = 1;
  /// Warp-specialized in clusters of two blocks that share one operand's tile by TMA multicast: 'a' or 'b' (0:
  /// no cluster), and the grid dimension the pair spans (0: x, 1: y), along which the shared tile is the same.
  char multicast = 0;
  int clusterDim = 0;
  /// The boxes of the shared operand's stage (each block copies half of them), or 1: one box, of which each
  /// block copies half the rows.
  int64_t sharedBoxes() const;
  /// The warp grid's threads: the block's, less the producer warp.
  int64_t consumerThreads() const { return 32 * warpRows * warpCols; }
  /// Warp-specialized with a producer warpgroup (128 threads, not one warp) whose registers go to the consumers
  /// by setmaxnreg.
  bool producerWarpgroup = false;
  /// The producer's threads: a warp, a warpgroup, or none (not warp-specialized).
  int64_t producerThreads() const { return !warpSpecialized ? 0 : producerWarpgroup ? 128 : 32; }
  /// producer_warpgroup: the kernel's registers a thread (.maxnreg: all the launch's 65536 over its threads,
  /// rounded down to 8, at most 255 as PTX allows), the producer warpgroup's after setmaxnreg.dec, and the
  /// consumers' after setmaxnreg.inc (what the block's registers leave them, rounded down to 8, at most 256).
  int64_t kernelRegisters() const {
    return std::min<int64_t>(255, 65536 / (consumerThreads() + producerThreads()) / 8 * 8);
  }
  int64_t producerRegisters() const { return consumerThreads() > 256 ? 24 : 40; }
  int64_t consumerRegisters() const {
    int64_t pool = kernelRegisters() * (consumerThreads() + producerThreads());
    return std::min<int64_t>(256, (pool - 128 * producerRegisters()) / consumerThreads() / 8 * 8);
  }
  /// wgmma: tiles whose wgmma may still run while the next tile's are issued (0 or 1). With 1, each tile's
  /// wgmma are waited for one tile later, so copies run S - 2 tiles ahead instead of S - 1.
  int64_t wgmmaInFlight = 0;
  /// Tiles copied ahead of the one multiplied: S - 1, one less while a wgmma tile is still in flight.
  int64_t prefetch() const { return asyncStages - 1 - wgmmaInFlight; }
  kforge::GlobalTile aGlobal, bGlobal; ///< tma: the global memrefs A's and B's tiles are cut from.
  /// Staged, async, dynamic shared memory: the result goes out through a shared tile in 16-byte row vectors.
  bool stageEpilogue = false;
  /// f32 operands multiplied as TF32: on wgmma (m64nNk8; a 128-byte row holds 32 of them) or on mma.sync
  /// (m16n8k8, the pipelined staged form, fragments read element by element); a 16-byte copy holds 4.
  bool tf32 = false;
  int64_t elementBytes() const { return tf32 ? 4 : 2; }
  /// Operand elements per 128-byte swizzled row of wgmma's stages (a tile's block_k when K-major).
  int64_t swizzleRow() const { return 128 / elementBytes(); }
  /// Operand elements per 16-byte copy (cp.async's vector; a row of A or B must start on one).
  int64_t copyElements() const { return 16 / elementBytes(); }
  /// K of one tensor-core instruction: 16 (bf16/f16), 8 (tf32).
  int64_t instructionK() const { return tf32 ? 8 : kTileK; }
  /// The padding of a staged row (mma.sync's stages): a K-major row (A, or B as N x K) is read by fragment
  /// rows g = lane / 4 at columns t = lane % 4 (tf32: one element each), so its stride must put the 8 rows 4
  /// banks apart: 16 bytes of padding (8 16-bit elements, 4 f32 past 32 of K). A row along N (B as K x N) is
  /// read at rows t and columns g: 8 elements of padding put its 4 rows 8 banks apart.
  int64_t kMajorPad() const { return tf32 ? 4 : 8; } // (8: kSmemPad, below)
  /// Whether the stages hold A K-major (rows of M) and B K-major (rows of N). TF32 wgmma reads both operands
  /// K-major only (PTX has no transpose for .tf32), so on the cp.async stages an operand stored along M or N
  /// (A as K x M, B as K x N) is transposed by its copies, element by element; 16-bit wgmma transposes it
  /// itself (an M- or N-major stage); mma.sync's B stages keep global memory's layout.
  bool aStagedKMajor() const { return !aTransposed || (wgmma && tf32); }
  bool bStagedKMajor() const { return bTransposed || (wgmma && tf32 && !swapAB); }
  /// TF32 wgmma with TMA on A as M x K and B as K x N: the warpgroups compute C^T = B^T A^T. B's stage keeps
  /// global memory's layout (atoms of 32 columns of N, K rows each) and each thread reads its fragments of B^T
  /// from it into registers (wgmma's register A operand); A's K-major stage is the instruction's B. The warp
  /// grid is [1, 4 x G]: each warp takes all the block's rows by 16 columns, and its accumulators are C^T's.
  bool swapAB = false;
  int64_t stages() const { return asyncStages > 0 ? asyncStages : 2; }
  /// Tiles of block_k along K; the last one partial when block_k does not divide K (async stages only: its
  /// copies past K are zero-filled).
  int64_t tiles() const { return blockK > 0 ? (k + blockK - 1) / blockK : 0; }
  mlir::gpu::LaunchOp launch;
  kforge::MatmulNeighbours neighbours; ///< Its fill and the epilogue applied to the accumulators in registers.
};

/// Shared memory a staged plan takes: two stages of A (BM x (BK + pad)) and of B (BK x (BN + pad)), both as
/// they are in global memory. Rows 16 bytes longer than the tile's shift each row 4 banks from the one above,
/// so the 8 rows an ldmatrix phase reads (and the rows a lane's 16-bit B loads touch) fall in different banks,
/// while every row stays 16-byte aligned as ldmatrix and the vector stores need. (B stored transposed, as the
/// first version did, cost a 16-way conflict on every element store: 0.2 of the H200's mma.sync rate.)
inline constexpr int64_t kSmemPad = 8; ///< bf16/f16 elements
/// wgmma reads its operands through descriptors of 128-byte swizzled layouts: 64 elements (128 bytes) per row,
/// the row's 16-byte chunks permuted by chunk ^ (row % 8). A is K-major: M rows of the 64 K of a tile. B is
/// N-major (as in global memory), in atoms of 64 columns: for each atom, the tile's 64 K rows of those columns.
inline constexpr int64_t kSwizzleRow = 64; ///< 16-bit elements per 128-byte row (MmaPlan::swizzleRow in general)

/// The staged buffers: S stages of A and of B (padded rows; wgmma: swizzled, B in 64-column atoms), and (tma)
/// one 8-byte mbarrier per stage (warp-specialized: S full ones, then S empty ones).
mlir::MemRefType stagedAType(const MmaPlan &plan, mlir::Type operand, mlir::Attribute space);
mlir::MemRefType stagedBType(const MmaPlan &plan, mlir::Type operand, mlir::Attribute space);
mlir::MemRefType barriersType(const MmaPlan &plan, mlir::Builder &b, mlir::Attribute space);

/// The matmul and the op's options (as its verifier accepts them) as a plan, or failure with `why` set (the op's
/// silenceable failures).
mlir::FailureOr<MmaPlan> planMma(mlir::linalg::MatmulOp matmul, const kforge::MmaSyncOptions &options,
                                 std::string &why);

/// stage_epilogue: the shared tile the result goes through (rows padded by 16 bytes).
mlir::MemRefType resultTileType(const MmaPlan &plan, mlir::Type element, mlir::Attribute space);

} // namespace kforge::mma

#endif // KFORGE_LIB_TRANSFORMOPS_MMAPLAN_H
