//===- MmaPlan.cpp - what transform.kforge.matmul_to_mma_sync rewrites -----===//
//
// The checks behind matmul_to_mma_sync's silenceable failures, and its staged forms' shared-memory layouts.
//
//===----------------------------------------------------------------------===//

#include "MmaPlan.h"

#include "kforge/Transforms/KernelRequests.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using kforge::innermostStride;

namespace kforge::mma {

MemRefType stagedAType(const MmaPlan &plan, Type operand, Attribute space) {
  // A as K x M (wgmma only) is staged as B as K x N is: M-major, in atoms of 64 columns (TF32: K-major).
  if (plan.wgmma && !plan.aStagedKMajor())
    return MemRefType::get({plan.stages(), plan.m / plan.swizzleRow(), plan.blockK, plan.swizzleRow()}, operand,
                           MemRefLayoutAttrInterface(), space);
  if (plan.wgmma)
    return MemRefType::get({plan.stages(), plan.m, plan.swizzleRow()}, operand, MemRefLayoutAttrInterface(), space);
  return MemRefType::get({plan.stages(), plan.m, plan.blockK + plan.kMajorPad()}, operand, MemRefLayoutAttrInterface(),
                         space);
}
MemRefType stagedBType(const MmaPlan &plan, Type operand, Attribute space) {
  // B as N x K (nn.Linear's weight) is staged as A is: K-major rows, one per column of the tile (TF32 wgmma:
  // B as K x N too, transposed by its copies).
  if (plan.bStagedKMajor()) {
    int64_t rowLength = plan.wgmma ? plan.swizzleRow() : plan.blockK + plan.kMajorPad();
    return MemRefType::get({plan.stages(), plan.n, rowLength}, operand, MemRefLayoutAttrInterface(), space);
  }
  if (plan.wgmma)
    return MemRefType::get({plan.stages(), plan.n / plan.swizzleRow(), plan.blockK, plan.swizzleRow()}, operand,
                           MemRefLayoutAttrInterface(), space);
  return MemRefType::get({plan.stages(), plan.blockK, plan.n + kSmemPad}, operand, MemRefLayoutAttrInterface(), space);
}
/// tma: one 8-byte mbarrier per stage, two warp-specialized (a 1024-byte aligned buffer after the swizzled
/// stages).
MemRefType barriersType(const MmaPlan &plan, Builder &b, Attribute space) {
  return MemRefType::get({plan.stages() * (plan.warpSpecialized ? 2 : 1)}, b.getI64Type(), MemRefLayoutAttrInterface(),
                         space);
}
constexpr int64_t kBarriersBytes = 1024;
static int64_t stagedSmemBytes(const MmaPlan &plan) {
  Type operand = cast<MemRefType>(plan.a.getType()).getElementType();
  return kforge::memrefBytes(stagedAType(plan, operand, {})) + kforge::memrefBytes(stagedBType(plan, operand, {})) +
         (plan.tma ? kBarriersBytes : 0);
}

/// The staged plan's extra conditions: the warp grid (its shape verified) divides the tile into whole
/// instruction tiles, the block's threads copy whole 8-element vectors, the two stages fit in static shared
/// memory, and the matmul runs in a gpu.launch of exactly the grid's threads (along x).
static LogicalResult checkStaged(MmaPlan &plan, ArrayRef<int64_t> warpGrid, std::string &why) {
  plan.warpRows = warpGrid[0];
  plan.warpCols = warpGrid[1];
  int64_t threads = plan.consumerThreads() + plan.producerThreads();
  if (plan.m % (kTileM * plan.warpRows) || plan.n % (kTileN * plan.warpCols)) {
    why = "the warp grid " + std::to_string(plan.warpRows) + "x" + std::to_string(plan.warpCols) +
          " does not cut the " + std::to_string(plan.m) + "x" + std::to_string(plan.n) +
          " tile into warp tiles of whole 16x8 instruction tiles";
    return failure();
  }
  // (The threads need not divide the tiles' vectors: the last round repeats the last vector. With async
  // stages K need not be a multiple of block_k: the last tile's copies past K are zero-filled.)
  bool partialK = plan.k % plan.blockK != 0;
  int64_t stepK = plan.instructionK(), copy = plan.copyElements();
  if (plan.blockK % stepK || (partialK && (plan.asyncStages == 0 || plan.k % copy)) || plan.n % 8) {
    why = "block_k (" + std::to_string(plan.blockK) + ") must be a multiple of " + std::to_string(stepK) +
          " dividing K (" + std::to_string(plan.k) + "), or with async_stages any multiple of " +
          std::to_string(stepK) + " when K is a multiple of " + std::to_string(copy) +
          "; the tile's columns a multiple of 8 (whole 8-element vectors)";
    return failure();
  }
  plan.launch = kforge::launchOfThreads(plan.matmul, threads);
  if (!plan.launch) {
    why = "a staged matmul must be in a gpu.launch of " + std::to_string(threads) +
          (plan.producerWarpgroup ? "x1x1 threads (32 per warp of the grid, and a producer warpgroup of 128)"
           : plan.warpSpecialized ? "x1x1 threads (32 per warp of the grid, and a producer warp)"
                                  : "x1x1 threads (32 per warp of the grid): its threads copy the tiles to shared "
                                    "memory together");
    return failure();
  }
  if (std::string problem = kforge::sharedBuffersProblem(plan.launch, stagedSmemBytes(plan)); !problem.empty()) {
    why = (plan.stages() == 2 ? std::string("two") : std::to_string(plan.stages())) + " stages of A and B " + problem;
    return failure();
  }
  if (innermostStride(cast<MemRefType>(plan.b.getType())) != 1) {
    why = "expected B's rows contiguous (innermost stride 1)";
    return failure();
  }
  return success();
}

/// Whether each row of a 2-D memref starts on a whole 16-byte copy: a static leading stride that is a multiple
/// of `copy` elements (cp.async copies 16 aligned bytes; the buffers themselves are at least 16-byte aligned).
static bool rowsWholeCopies(MemRefType type, int64_t copy) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.size() != 2)
    return false;
  return !ShapedType::isDynamic(strides[0]) && strides[0] % copy == 0;
}

/// wgmma's conditions on the tile and the launch (those on the options are verified): each warpgroup takes 64
/// rows, warps stacked 16 rows each, one column of warps; wgmma's N is at most 256 and B's atoms are 64 columns
/// wide; the swizzled stages are the launch's dynamic shared memory. With tma, A and B are boxes of global
/// memrefs.
static LogicalResult checkWgmma(MmaPlan &plan, std::string &why) {
  // swap_ab: the warpgroups side by side along N, 64 columns each (the instruction's 64 rows of C^T), each
  // multiplying all the block's rows (the instruction's N: a multiple of 16 up to 256).
  if (plan.swapAB &&
      (plan.warpRows != 1 || plan.warpCols % 4 || plan.n != 16 * plan.warpCols || plan.m % 16 || plan.m > 256)) {
    why = "wgmma with swap_ab needs warp_grid = [1, 4 x warpgroups] over warp tiles of all the tile's rows by 16 "
          "columns (64 columns per warpgroup), and the tile's rows a multiple of 16, at most 256; got a " +
          std::to_string(plan.warpRows) + "x" + std::to_string(plan.warpCols) + " grid on " + std::to_string(plan.m) +
          "x" + std::to_string(plan.n);
    return failure();
  }
  if (!plan.swapAB && (plan.warpCols != 1 || plan.warpRows % 4 || plan.m != 16 * plan.warpRows ||
                       plan.n % kSwizzleRow || plan.n > 256)) {
    why = "wgmma needs warp_grid = [4 x warpgroups, 1] over 16 rows per warp (the tile's rows 64 per warpgroup) "
          "and the tile's columns a multiple of 64, at most 256; got a " +
          std::to_string(plan.warpRows) + "x" + std::to_string(plan.warpCols) + " grid on " + std::to_string(plan.m) +
          "x" + std::to_string(plan.n);
    return failure();
  }
  if (plan.launch.getDynamicSharedMemorySize()) {
    why = "wgmma's swizzled stages are dynamic shared memory, and the launch already has some";
    return failure();
  }
  if (!plan.tma)
    return success();
  FailureOr<kforge::GlobalTile> a = kforge::globalTileOf(plan.a, plan.launch, why);
  FailureOr<kforge::GlobalTile> b = failed(a) ? a : kforge::globalTileOf(plan.b, plan.launch, why);
  if (failed(b)) {
    why = "tma copies boxes of global memrefs: expected A and B each " + why;
    return failure();
  }
  plan.aGlobal = *a;
  plan.bGlobal = *b;
  return success();
}

int64_t MmaPlan::sharedBoxes() const {
  // (A as K x M and B as K x N are copied one box per 64-column atom; A as M x K and B as N x K, one box.)
  if (multicast == 'a')
    return aTransposed ? m / swizzleRow() : 1;
  return bTransposed ? 1 : n / swizzleRow();
}

/// Whether `value` is computed from the block index along `dimension` (the launch's region argument `id`, or a
/// gpu.block_id read of it, as the block mapping writes them), through the ops that define it.
static bool dependsOn(Value value, Value id, gpu::Dimension dimension, int depth = 0) {
  if (value == id)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 64)
    return false;
  if (auto read = dyn_cast<gpu::BlockIdOp>(def))
    return read.getDimension() == dimension;
  return llvm::any_of(def->getOperands(), [&](Value operand) { return dependsOn(operand, id, dimension, depth + 1); });
}

/// cluster_multicast's conditions (warp-specialized, not persistent: verified): the pair spans the one grid
/// dimension (x or y) that the shared operand's tile offsets do not depend on and the other operand's do, with a
/// static, even launch size; the shared stage splits in two (an even number of boxes, or a box of rows that are
/// whole 8-row swizzle atoms when halved).
static LogicalResult checkClusterMulticast(MmaPlan &plan, std::string &why) {
  const kforge::GlobalTile &shared = plan.multicast == 'a' ? plan.aGlobal : plan.bGlobal;
  const kforge::GlobalTile &other = plan.multicast == 'a' ? plan.bGlobal : plan.aGlobal;
  gpu::KernelDim3 ids = plan.launch.getBlockIds();
  int found = -1;
  for (auto [dim, id] : llvm::enumerate(SmallVector<Value>{ids.x, ids.y})) {
    gpu::Dimension d = dim == 0 ? gpu::Dimension::x : gpu::Dimension::y;
    bool sharedMoves = dependsOn(shared.row, id, d) || dependsOn(shared.col, id, d);
    bool otherMoves = dependsOn(other.row, id, d) || dependsOn(other.col, id, d);
    if (!sharedMoves && otherMoves)
      found = found < 0 ? int(dim) : 2;
  }
  if (found < 0 || found > 1) {
    why = std::string("cluster_multicast shares ") + plan.multicast +
          "'s tile within a pair of blocks: expected exactly one grid dimension (x or y) that moves the other "
          "operand's tile and not the shared one's";
    return failure();
  }
  plan.clusterDim = found;
  std::optional<int64_t> size =
      getConstantIntValue(found == 0 ? plan.launch.getGridSizeX() : plan.launch.getGridSizeY());
  if (!size || *size % 2) {
    why = std::string("cluster_multicast launches clusters of two blocks along ") + (found == 0 ? "x" : "y") +
          ": the grid's size there must be static and even";
    return failure();
  }
  int64_t boxes = plan.sharedBoxes(), rows = plan.multicast == 'a' ? plan.m : plan.n;
  if ((boxes > 1 && boxes % 2) || (boxes == 1 && (rows / 2) % 8)) {
    why = "cluster_multicast splits the shared stage between the two blocks: expected an even number of boxes, or "
          "a box whose half is whole 8-row swizzle atoms";
    return failure();
  }
  return success();
}

/// stage_epilogue's conditions (async stages verified): the stages are dynamic shared memory that holds the
/// result tile, whose rows are contiguous whole 16-byte vectors of 16- or 32-bit elements.
static LogicalResult checkStageEpilogue(MmaPlan &plan, std::string &why) {
  auto result = cast<MemRefType>(plan.neighbours.result(plan.c).getType());
  int64_t bits = result.getElementTypeBitWidth();
  bool dynamicStages = plan.wgmma || stagedSmemBytes(plan) > kforge::kMaxStaticSharedBytes;
  if (!dynamicStages || innermostStride(result) != 1 || (bits != 16 && bits != 32) || (plan.n * bits / 8) % 16 ||
      kforge::memrefBytes(resultTileType(plan, result.getElementType(), {})) > stagedSmemBytes(plan)) {
    why = "stage_epilogue needs async stages in dynamic shared memory that hold the result tile, and a result "
          "of 16- or 32-bit elements in contiguous rows of whole 16-byte vectors";
    return failure();
  }
  plan.stageEpilogue = true;
  return success();
}

FailureOr<MmaPlan> planMma(linalg::MatmulOp matmul, const kforge::MmaSyncOptions &options, std::string &why) {
  FailureOr<kforge::MatmulTile> tile = kforge::staticMatmulTile(
      matmul,
      [&](Type a, Type b, Type c) {
        if (options.tf32)
          return a.isF32() && b.isF32() && c.isF32()
                     ? std::string()
                     : std::string("tf32 multiplies f32 operands: expected f32 x f32 -> f32");
        return (a.isBF16() || a.isF16()) && b == a && c.isF32()
                   ? std::string()
                   : std::string("expected bf16 or f16 operands (both the same) and an f32 result (f32 operands "
                                 "need tf32)");
      },
      why, /*allowTransposed=*/true, /*allowPartial=*/true);
  if (failed(tile))
    return failure();
  // A partial block tile (the last along M or N, cut by an affine.min): its rows and columns past the edge are
  // read as zeros by the staged asynchronous copies (cp.async's source size, TMA's out-of-bounds fill) and its
  // stores past the edge are skipped; the register-staged and unstaged forms read operands unguarded.
  if ((tile->mExtent || tile->nExtent) && (options.blockK <= 0 || options.asyncStages <= 0)) {
    why = "a partial tile (M or N past the edge of the matmul) needs the staged, asynchronous form (block_k and "
          "async_stages: its copies zero-fill past the edge)";
    return failure();
  }
  // Hopper's wgmma reads an M-major A from shared memory (the instruction's transpose of A); mma.sync's
  // fragments are read K-major.
  if (tile->aTransposed && !(options.wgmma && options.blockK > 0 && options.asyncStages > 0)) {
    why = "the mma.sync rewrite reads A as M x K; A is transposed (K x M): use wgmma (which reads A M-major), "
          "the staged SIMT rewrite or the tiled and vectorized loops";
    return failure();
  }
  // TF32 wgmma reads both operands K-major (PTX: no transpose for .tf32): TMA copies boxes as they lie in
  // global memory, so it takes A as M x K and B as N x K only; the cp.async stages transpose an operand
  // stored along M or N, element by element. mma.sync's TF32 form reads its fragments element by element
  // from the pipelined stages (B either way, A as M x K).
  // swap_ab reads B as K x N into registers instead (C^T = B^T A^T): A as M x K and B as K x N only.
  if (options.swapAB && (tile->aTransposed || tile->bTransposed)) {
    why = "swap_ab reads A as M x K (the instruction's K-major B) and B as K x N (into registers); this matmul reads " +
          std::string(tile->aTransposed ? "A as K x M" : "B as N x K") +
          (tile->aTransposed ? "" : ": drop swap_ab (TF32 wgmma with tma reads B as N x K as it lies)");
    return failure();
  }
  if (options.tf32 && options.wgmma && options.tma && !options.swapAB && (tile->aTransposed || !tile->bTransposed)) {
    why = "tf32 on wgmma with tma reads A and B K-major only: expected A as M x K and B as N x K (nn.Linear's "
          "weight, x @ W^T); this matmul reads " +
          std::string(tile->aTransposed ? "A as K x M" : "B as K x N") +
          (tile->aTransposed
               ? ": drop tma (the cp.async stages transpose it), or use mma.sync's TF32 form or the SIMT tiles"
               : ": add swap_ab (B's fragments through registers), drop tma (the cp.async stages "
                 "transpose it), or use mma.sync's TF32 form or the SIMT tiles");
    return failure();
  }
  if (options.tf32 && !options.wgmma && (options.blockK <= 0 || options.asyncStages <= 0)) {
    why = "tf32 on mma.sync takes the pipelined staged form (block_k and async_stages)";
    return failure();
  }
  MmaPlan plan;
  static_cast<kforge::MatmulTile &>(plan) = *tile;
  plan.tf32 = options.tf32;
  plan.swapAB = options.swapAB;
  auto aType = cast<MemRefType>(plan.a.getType()), bType = cast<MemRefType>(plan.b.getType());
  int64_t blockK = options.blockK, asyncStages = options.asyncStages;
  // With async stages K may end inside the last tile of block_k (zero-filled): whole 16-byte rows are enough.
  bool zeroFilledK = asyncStages > 0 && blockK > 0 && plan.k % plan.copyElements() == 0;
  if (plan.m % kTileM || plan.n % kTileN || (plan.k % plan.instructionK() && !zeroFilledK)) {
    why = "expected M, N and K multiples of 16, 8 and " + std::to_string(plan.instructionK()) + " (the " +
          (plan.tf32 ? "TF32 instructions' k8" : "mma.sync m16n8k16 tile") + "; K a multiple of " +
          std::to_string(plan.copyElements()) + " with async_stages), got " + std::to_string(plan.m) + "x" +
          std::to_string(plan.n) + "x" + std::to_string(plan.k);
    return failure();
  }
  if (plan.k % (plan.instructionK() * options.kSteps) && !zeroFilledK) {
    why = "expected K (" + std::to_string(plan.k) + ") a multiple of " + std::to_string(plan.instructionK()) +
          " x k_steps (" + std::to_string(options.kSteps) + ")";
    return failure();
  }
  plan.kSteps = options.kSteps;
  if (innermostStride(aType) != 1) {
    why = "expected A's rows contiguous (innermost stride 1)";
    return failure();
  }
  plan.blockK = blockK;
  if (asyncStages != 0 &&
      (!rowsWholeCopies(aType, plan.copyElements()) || !rowsWholeCopies(bType, plan.copyElements()))) {
    why = "async_stages copies 16 bytes at a time: A's and B's rows must start on whole " +
          std::to_string(plan.copyElements()) + "-element copies (a static leading stride that is a multiple of " +
          std::to_string(plan.copyElements()) + ")";
    return failure();
  }
  plan.asyncStages = asyncStages;
  plan.wgmma = options.wgmma; // sizes the stages (swizzled, unpadded) for checkStaged
  plan.tma = options.tma;     // and adds the stages' mbarriers
  plan.warpSpecialized = options.warpSpecialized; // (two per stage, and a producer warp in the launch)
  plan.producerWarpgroup = options.producerWarpgroup; // (or a producer warpgroup)
  plan.persistentBlocks = options.persistentBlocks;
  plan.wgmmaInFlight = options.wgmmaInFlight;
  if (blockK > 0 && failed(checkStaged(plan, options.warpGrid, why)))
    return failure();
  if (plan.wgmma && failed(checkWgmma(plan, why)))
    return failure();
  if (plan.producerWarpgroup && (plan.launch->hasAttr(kforge::requests::kMaxRegisters) ||
                                 plan.launch->hasAttr(kforge::requests::kMinBlocksPerSm))) {
    why = "producer_warpgroup compiles the kernel for the block's whole register file and shares it out by "
          "setmaxnreg: the launch already bounds its registers (max_registers or min_blocks_per_sm)";
    return failure();
  }
  plan.multicast = options.clusterMulticast.empty() ? 0 : options.clusterMulticast[0];
  if (plan.multicast && failed(checkClusterMulticast(plan, why)))
    return failure();
  if (plan.persistentBlocks > 0) {
    std::optional<int64_t> gx = getConstantIntValue(plan.launch.getGridSizeX()),
                           gy = getConstantIntValue(plan.launch.getGridSizeY()),
                           gz = getConstantIntValue(plan.launch.getGridSizeZ());
    if (!gx || !gy || gz != 1) {
      why = "persistent_blocks loops over the launch's tiles: its grid must have static sizes along x and y and 1 "
            "along z";
      return failure();
    }
    plan.gridX = *gx;
    plan.gridY = *gy;
  }
  // (TF32 with B as K x N reads B element by element: ldmatrix does not transpose 32-bit elements.)
  if (options.ldmatrix && !(plan.tf32 && !plan.bTransposed) && (plan.n / plan.warpCols) % (2 * kTileN)) {
    why = "ldmatrix reads B's fragments two column tiles at a time: the warp tile's columns (" +
          std::to_string(plan.n / plan.warpCols) + ") must be a multiple of 16";
    return failure();
  }
  plan.ldmatrix = options.ldmatrix;
  plan.neighbours = kforge::findMatmulNeighbours(matmul);
  // Each lane stores only its own elements of C: an op of the warp that read C afterwards would read the
  // other lanes' elements without a barrier.
  if (kforge::cUsedAfter(matmul, plan.neighbours.epilogue)) {
    why = "C is used after the matmul by an op that cannot take its values from registers";
    return failure();
  }
  if (options.stageEpilogue && failed(checkStageEpilogue(plan, why)))
    return failure();
  return plan;
}

MemRefType resultTileType(const MmaPlan &plan, Type element, Attribute space) {
  int64_t pad = 128 / element.getIntOrFloatBitWidth(); // 16 bytes
  return MemRefType::get({plan.m, plan.n + pad}, element, MemRefLayoutAttrInterface(), space);
}


} // namespace kforge::mma
