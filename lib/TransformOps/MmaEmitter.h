//===- MmaEmitter.h - the code matmul_to_mma_sync emits for a plan --------*- C++ -*-===//
//
// The emitter of transform.kforge.matmul_to_mma_sync, shared by its two halves: MmaSync.cpp (mma.sync: warp
// fragments, the register-staged and cp.async K loops, the epilogue and the stores) and MmaWgmma.cpp (Hopper:
// wgmma descriptors and tiles, the TMA-filled K loop). Private to lib/TransformOps.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_TRANSFORMOPS_MMAEMITTER_H
#define KFORGE_LIB_TRANSFORMOPS_MMAEMITTER_H

#include "MatmulNeighbours.h"
#include "MmaPlan.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

namespace kforge::mma {
// A private header of lib/TransformOps: the emitter is written in MLIR's names, as its .cpp files are.
using namespace mlir;

/// What one staged tile's warpgroup MMAs read: 128-byte swizzled stages (a row's 16-byte chunks permuted by
/// chunk ^ (row % 8); 8-row groups 1024 bytes apart). A K-major side is rows of K (its M or N rows, `blockK` =
/// one swizzled row of K); an M- or N-major side is atoms of 64 of its rows or columns, each `blockK` rows of K.
struct WgmmaTileLayout {
  int64_t n = 0;            ///< The block's columns: the instruction's N.
  int64_t blockK = 0;       ///< K of a tile.
  int64_t instructionK = 0; ///< K of one instruction: 16 (bf16/f16) or 8 (tf32), 32 bytes either way.
  bool aMMajor = false;     ///< A staged as K x M (atoms of 64 columns of M), else M x K.
  bool bKMajor = false;     ///< B staged as N x K, else K x N (atoms of 64 columns of N).
  NVVM::WGMMATypes type = NVVM::WGMMATypes::bf16;
  int64_t inFlight = 0; ///< Tiles of wgmma left running when it returns (0 or 1).
};

/// A wgmma shared-memory descriptor: the start address and the two byte offsets in 16-byte units, the 128-byte
/// swizzle in bits 62-63.
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value address, int64_t leadingBytes, int64_t strideBytes);

/// One staged tile on Hopper's tensor cores: the warpgroup's wgmma.mma_async m64nNk (blockK / instructionK of
/// them) on descriptors of its 64 rows of A (starting at shared address `aStart`, an i64) and of B (`bStart`),
/// committed and waited for (`inFlight` groups may stay running). The accumulators go in and out as one struct:
/// lane l of warp w holds rows 16 (w % 4) + l / 4 (+ 8), columns 8 j + 2 (l % 4) (+ 1), in the order of the
/// mma.sync tiles (j, then the four).
SmallVector<Value> wgmmaMultiply(OpBuilder &b, Location loc, const WgmmaTileLayout &layout, Value aStart, Value bStart,
                                 ArrayRef<Value> acc);

/// One mma.sync (m16n8 by `k`, row-major A, column-major B, f32 accumulators) of fragments `a` and `b` into the
/// four accumulators `c`: the four results.
inline SmallVector<Value> mmaSync(OpBuilder &b, Location loc, ValueRange a, ValueRange bFragment, ValueRange c,
                                  NVVM::MMATypes type, int64_t k) {
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(b, loc, resultType, a, bFragment, c, /*shape=*/ArrayRef<int64_t>{kTileM, kTileN, k},
                                /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                                /*multiplicandPtxTypes=*/std::array<NVVM::MMATypes, 2>{type, type},
                                /*multiplicandLayouts=*/
                                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> results;
  for (int64_t r = 0; r < 4; ++r)
    results.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r}));
  return results;
}

/// Emits the lane-level code for one plan at the matmul's position.
class MmaEmitter {
public:
  MmaEmitter(RewriterBase &rewriter, MmaPlan plan)
      : b(rewriter), plan(plan), loc(plan.matmul.getLoc()), ctx(rewriter.getContext()) {}

  void emit();
  /// What comes after the matmul and its neighbours are erased (persistent: the tile loop split by role, so
  /// that the linalg ops do not go into both copies).
  void finish();

private:
  /// The epilogue (applied in registers, or not) and the stores of the K loop's results.
  void storeResults(ArrayRef<Value> results);
  /// A barrier of the block's threads that compute (warp-specialized: named barrier 1 over the consumers).
  void blockBarrier();
  int64_t mTiles() const { return warpM / kTileM; }
  int64_t nTiles() const { return warpN / kTileN; }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// base + offset + constant, folded where possible.
  Value add(Value base, Value offset, int64_t constant) {
    AffineExpr s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 2, s0 + s1 + constant), ValueRange{base, offset});
  }

  /// Whether the tile is partial: the last block tile along M or N, its extents (values) within its static bound.
  bool partial() const { return plan.mExtent || plan.nExtent; }
  Value clamp(Value i, Value extent) { return kforge::clampToExtent(b, loc, i, extent); }
  /// Whether `i` lies within `extent`: null (always) when the extent is static.
  Value within(Value i, Value extent) {
    if (!extent)
      return Value();
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, extent);
  }
  /// The conjunction of conditions, each possibly null (true); null when all are.
  Value allOf(ArrayRef<Value> conditions) {
    Value all;
    for (Value c : conditions)
      if (c)
        all = all ? arith::AndIOp::create(b, loc, all, c).getResult() : c;
    return all;
  }
  /// `then` under `if (condition)`; directly when the condition is null (true).
  void guarded(Value condition, llvm::function_ref<void()> then) {
    if (!condition)
      return then();
    auto branch = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    then();
  }

  /// The f32 accumulator element (row half h, column e) of tile (i, j) lives at C[16i + g + 8h, 8j + 2t + e].
  /// (Staged: offset by the warp's tile in the block's.)
  Value accRow(int64_t i, int64_t h) { return add(group, rowBase, i * kTileM + 8 * h); }
  Value accCol(int64_t j, int64_t e) { return add(pair, colBase, j * kTileN + e); }
  /// Where accumulator element (h, e) of tile (i, j) lives in C: (accRow(i, h), accCol(j, e)); swap_ab, C^T's
  /// element (wgmma's tile 2i + j of the warp's 16 columns by the block's rows) at C[16i + 8j + 2t + e,
  /// swapColumn(h)].
  std::pair<Value, Value> accAt(int64_t i, int64_t j, int64_t h, int64_t e) {
    if (!plan.swapAB)
      return {accRow(i, h), accCol(j, e)};
    return {add(pair, rowBase, i * kTileM + j * kTileN + e), swapColumn(h)};
  }
  /// swap_ab: the block's column that this lane's row g + 8 h of B^T (and of its accumulators) stands for.
  Value swapColumn(int64_t h) { return add(swapGroup, colBase, 4 * h); }
  /// Stores the pair (h, e = 0, 1) of tile (i, j) into `target` at its place (guarded: only what lies within the
  /// result of a partial tile): along a row, or (swap_ab) down a column, element by element.
  void storeAccumulatorPair(Value first, Value second, Value target, int64_t i, int64_t j, int64_t h, bool guard);

  /// Four f32 accumulators per tile, row-major over (i, j): from the fill's value, or read from C.
  SmallVector<Value> initialAccumulators();

  /// A pair of operand elements as the 32-bit register mma.sync takes: an i32 for bf16, a vector<2xf16> for
  /// f16 (what nvvm.mma.sync expects of each).
  Value packPair(Value pairVector) {
    if (operandType.isF16())
      return pairVector;
    Value asInt = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pairVector);
    return vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0});
  }

  /// A TF32 operand element as mma.sync's 32-bit register (its bits as an i32).
  Value tf32Register(Value element);
  /// A's fragment of tile row i at K offset kk: rows g and g+8, columns 2t, 2t+1 and 2t+8, 2t+9 (four
  /// 32-bit registers: a0a1, a2a3, a4a5, a6a7 in PTX's order; TF32: one element each, columns t and t + 4).
  SmallVector<Value> loadA(int64_t i, Value kk);

  /// B's fragment of tile column j at K offset kk: column g, rows 2t, 2t+1 (b0b1) and 2t+8, 2t+9 (b2b3),
  /// element by element (a pair lies in one column of the row-major B).
  SmallVector<Value> loadB(int64_t j, Value kk);

  /// The loop over K in steps of 16, the accumulators carried in registers.
  SmallVector<Value> kLoop(ArrayRef<Value> init) {
    auto loop = scf::ForOp::create(b, loc, index(0), index(plan.k), index(kTileK * plan.kSteps), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> acc =
        multiplySteps(loop.getInductionVar(), plan.kSteps, SmallVector<Value>(loop.getRegionIterArgs()));
    scf::YieldOp::create(b, loc, acc);
    return SmallVector<Value>(loop.getResults());
  }

  /// `steps` steps of 16 along K from `kBase` (in the sources' K coordinates): every step's fragments first,
  /// then the multiplies, so the loads of all steps are in flight together.
  SmallVector<Value> multiplySteps(Value kBase, int64_t steps, SmallVector<Value> acc);

  /// Four 8x8 matrices of 16-bit elements from shared memory: lane l gives the address of row l % 8 of matrix
  /// l / 8, and receives in register q its pair (row l / 4, columns 2(l % 4), +1) of matrix q.
  /// Transposed (.trans), lane l receives (rows 2(l % 4), +1, column l / 4) of each matrix instead.
  /// TF32: the matrices are 8 rows of 4 f32 (16 bytes), and lane l receives the f32 (row l / 4, column l % 4)
  /// of each: a fragment element of m16n8k8 .tf32, as an i32.
  SmallVector<Value> ldmatrix(Value source, Value row, Value col, bool transpose) {
    int64_t perRegister = plan.tf32 ? 1 : 2;
    auto type = VectorType::get({4, perRegister}, operandType);
    Value quad = nvgpu::LdMatrixOp::create(b, loc, type, source, ValueRange{row, col}, b.getBoolAttr(transpose),
                                           b.getI32IntegerAttr(4));
    SmallVector<Value> regs;
    for (int64_t q = 0; q < 4; ++q)
      regs.push_back(plan.tf32 ? tf32Register(vector::ExtractOp::create(b, loc, quad, ArrayRef<int64_t>{q, 0}))
                               : packPair(vector::ExtractOp::create(b, loc, quad, ArrayRef<int64_t>{q})));
    return regs;
  }
  /// A's fragment of tile row i: matrices (rows 0-7, K 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15), which
  /// are a0a1, a2a3, a4a5, a6a7. TF32: the same 16-byte geometry, K 0-3 and 4-7: a0, a1, a2, a3.
  SmallVector<Value> ldmatrixA(int64_t i, Value kk) {
    AffineExpr l = getAffineDimExpr(0, ctx);
    int64_t half = plan.tf32 ? 4 : 8; // elements in 16 bytes
    Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 8 + (l.floorDiv(8) % 2) * 8), lane);
    Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l.floorDiv(16) * half), lane);
    return ldmatrix(aSource, add(row, rowBase, i * kTileM), add(col, kk, 0), /*transpose=*/false);
  }
  /// B's fragments of column tiles j and j + 1 from the row-major B, transposed by ldmatrix: matrices (K 0-7,
  /// columns 0-7), (K 8-15, 0-7), (K 0-7, 8-15), (K 8-15, 8-15), which are b0b1 and b2b3 of tile j, then of
  /// tile j + 1.
  std::pair<SmallVector<Value>, SmallVector<Value>> ldmatrixBPair(int64_t j, Value kk);

  //===--- Staged: A and B through two shared-memory buffers ---===//

  int64_t threads() const { return 32 * plan.warpRows * plan.warpCols; }

  /// This thread's share of the global tile at K offset kOff: vectors of 8 elements of A (BM x BK) and of B
  /// (BK x BN), thread t taking vectors t, t + threads, ... in row-major order (consecutive threads read
  /// consecutive 16 bytes: coalesced).
  struct TileShare {
    SmallVector<Value> a, b;
  };
  /// Row and column of this thread's vector `t + first` in a rows x cols tile of `width`-element vectors. When
  /// the block's threads do not divide the tile's vectors, the last round's extra threads take the tile's last
  /// vector again (the same bytes to the same place: no branch).
  std::pair<Value, Value> vectorPosition(int64_t first, int64_t cols, int64_t rows, int64_t width = 8);
  /// This thread's item `t + first` of `last + 1` (t: the thread's index), the last item where it is past it.
  Value threadItem(int64_t first, int64_t last);
  /// The rounds of this thread's copies of a rows x cols tile (`width`-element vectors over the block's threads).
  int64_t rounds(int64_t rows, int64_t cols, int64_t width = 8) {
    return llvm::divideCeil(rows * cols / width, threads());
  }
  TileShare loadTileShare(Value kOff);
  /// Stores a share into stage `stage`, both tiles as they are (8-element vectors).
  void storeTileShare(const TileShare &share, Value stage);
  /// Stage `stage` of a shared buffer as a 2-D view.
  Value stageView(Value buffer, Value stage);

  /// The stages in dynamic shared memory (aShared, bShared; with tma, the mbarriers after them).
  void allocateStages();

  /// The K loop over tiles of block_k: while the warps multiply stage s, each thread's share of the next
  /// tile is loaded from global memory into registers and then stored into stage 1 - s; one barrier per tile.
  SmallVector<Value> stagedKLoop(ArrayRef<Value> init);

  /// Issues this thread's asynchronous 16-byte copies of the tile at K offset kOff into stage `stage` (the
  /// same vectors loadTileShare reads) and commits them as one group.
  void copyTileAsync(Value kOff, Value stage);

  /// The column a 16-byte chunk starting at `col` (a multiple of the chunk's E elements: 8, or 4 for tf32) of
  /// swizzled row `row` is stored at: chunk (col / E) ^ (row % 8) of the 128-byte row.
  Value swizzled(Value row, Value col) {
    int64_t chunkElements = plan.copyElements();
    AffineExpr r = getAffineDimExpr(0, ctx), c = getAffineDimExpr(1, ctx);
    Value rowPhase = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, r % 8), row);
    Value chunk =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, c.floorDiv(chunkElements)), ValueRange{row, col});
    Value xored = arith::XOrIOp::create(b, loc, chunk, rowPhase);
    return arith::MulIOp::create(b, loc, xored, index(chunkElements));
  }

  /// The K loop over S = async_stages stages filled by cp.async: tiles 0 .. S - 2 in flight before the loop;
  /// iteration t waits for tile t (its group and those before it done: S - 2 may stay pending), meets the
  /// block at a barrier (tile t is visible; every warp is done with tile t - 1), issues tile t + S - 1 into
  /// tile t - 1's stage (the last S - 1 iterations reload the last tile into a stage nothing reads again: no
  /// branch) and multiplies tile t.
  SmallVector<Value> asyncKLoop(ArrayRef<Value> init);

  /// The K loop's results once every wgmma has finished (the last tile's may still run with wgmma_in_flight).
  SmallVector<Value> afterWgmmaLoop(scf::ForOp loop);

  //===--- TMA: the stages filled by the tensor memory accelerator ---===//

  /// A shared-memory pointer (!llvm.ptr<3>) `bytes` into `buffer`.
  Value sharedPointer(Value buffer, Value bytes);
  Value scaled(Value v, int64_t factor);
  Value i32(Value indexValue) { return arith::IndexCastOp::create(b, loc, b.getI32Type(), indexValue); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  /// The stage's mbarrier that its copies complete on (warp-specialized: its full mbarrier).
  Value barrier(Value stage) { return sharedPointer(barriers, scaled(stage, 8)); }
  /// Warp-specialized: the stage's empty mbarrier (every consumer warp is done with it), after the S full ones.
  Value emptyBarrier(Value stage) {
    return sharedPointer(barriers, add(scaled(stage, 8), index(0), 8 * plan.stages()));
  }

  /// Thread 0 fills stage `stage` with the tile at K offset kOff: it tells the stage's mbarrier how many bytes
  /// to expect (and arrives), then issues one TMA copy of A's box (BM rows x 64 of K) and one per 64-column
  /// atom of B (64 K rows x 64 columns); the copies complete on the mbarrier. The tensor maps swizzle as the
  /// cp.async path does (128 bytes), so wgmma's descriptors are the same.
  void issueTileTma(Value kOff, Value stage);
  /// One TMA copy: tensor map, shared destination, coordinates (innermost first), and whether it goes to both
  /// blocks of the pair (cluster_multicast).
  using CopyBox = llvm::function_ref<void(Value, Value, ValueRange, bool)>;
  /// The boxes of A's (`isA`) or B's tile for the stage, each copied into this block alone.
  void issueBoxesOf(bool isA, Value kOff, Value stage, CopyBox copy);
  /// cluster_multicast: this block's half of the shared operand's tile, copied into both blocks of the pair.
  void issueSharedHalf(Value kOff, Value stage, CopyBox copy);

  /// `then` under `if (thread == 0)`.
  void onFirstThread(llvm::function_ref<void()> then);

  /// The K loop over S = async_stages stages filled by TMA, one mbarrier per stage (thread 0 initialises them
  /// to one arrival and issues every copy). Tiles 0 .. S - 2 are issued before the loop; iteration t waits on
  /// its stage's mbarrier for phase t / S (parity), meets the block at a barrier (every warp is done with tile
  /// t - 1: its wgmma were waited for), thread 0 issues tile t + S - 1 into tile t - 1's stage (while there is
  /// one: no copy is left in flight when the block exits), and the warpgroups multiply tile t.
  SmallVector<Value> tmaKLoop(ArrayRef<Value> init);
  /// The tensor maps of A and B (host code before the launch).
  void createTensorMaps();

  //===--- Warp-specialized (tma): a producer warp, full and empty mbarriers ---===//

  /// The block is the consumers (the warp grid) and one producer warp. Thread 0 initialises the mbarriers
  /// (full: one arrival and the copies' bytes; empty: one arrival per consumer warp), the block meets once, then
  /// the consumers run their K loop and the epilogue while the producer's first thread runs its loop.
  void emitWarpSpecialized();
  /// persistent_blocks: the launch's grid becomes min(P, gx x gy) blocks along x, and its body a loop over the
  /// tiles this block takes (b, b + P, ...; tile i at block (i % gx, i / gx), which replace the block ids in the
  /// body); `round` counts the block's tiles (0, 1, ...).
  void makePersistent();
  /// The place of K tile `t` of this block's current output tile in the sequence of every tile it has
  /// loaded: t, or (persistent) round x tiles + t. Stages and mbarrier phases follow it.
  Value sequence(Value t);
  /// persistent: the loop over tiles, whose body branches on the role, becomes a branch on the role around two
  /// loops over tiles (the consumers' and the producer's): a wgmma under control flow the producer warp shares
  /// with the consumers (the loop's) is serialized by ptxas ("... WG.AR in divergent path").
  void splitTileLoopByRole(scf::IfOp roles, Value consumer);
  /// mbarrier.arrive on `mbarrier` (a shared pointer) where `condition` holds, as one predicated instruction:
  /// a branch around it would be a divergent path between the consumers' wgmma, which ptxas serializes.
  void arriveIf(Value condition, Value mbarrier);
  /// cluster_multicast: the same arrival on the other block of the pair's mbarrier at `mbarrier`'s place in its
  /// shared memory (mapa, then an arrive on that shared::cluster address), as one predicated instruction.
  void arriveOnPeerIf(Value condition, Value mbarrier);
  /// cluster_multicast: the launch gets clusters of two blocks along the pair's dimension, `clusterRank` (this
  /// block's place in its pair) is set, and the pair meets at a cluster barrier at the end of the launch.
  void formClusters();
  /// producer_warpgroup: the consumer warpgroups raise their registers a thread (setmaxnreg.inc), or the producer
  /// warpgroup lowers its own (setmaxnreg.dec); nothing otherwise.
  void rebalanceRegisters(bool consumers);
  /// cluster_multicast: every thread of both blocks meets at a cluster barrier (barrier.cluster arrive + wait).
  void clusterBarrier(bool aligned);
  /// The producer's loop: for each tile t, wait until stage t % S is empty (phase parity (t / S + 1) % 2: the
  /// first round passes on the fresh mbarriers), then fill it (issueTileTma).
  void producerKLoop();
  /// The consumers' loop: for each tile t, wait until stage t % S is full (parity (t / S) % 2), multiply it,
  /// and once tile t - wgmma_in_flight's wgmma have finished, lane 0 of each warp arrives on that tile's empty
  /// mbarrier.
  SmallVector<Value> consumerKLoop(ArrayRef<Value> init);
  /// The suspend-time hint of mbarrier.try_wait (ns), as CUTLASS and MLIR's nvgpu lowering use.
  static constexpr int64_t kTryWaitTicks = 10000000;

  /// The shared-memory address, as an i64, of `buffer`'s stage `stage` (each `stageBytes` long) plus `part`
  /// times `partBytes`.
  Value sharedAddress(Value buffer, Value stage, int64_t stageBytes, Value part, int64_t partBytes);
  /// The shared-memory address, as an i64, `bytes` into `buffer`.
  Value sharedByteAddress(Value buffer, Value bytes);

  /// One staged tile on Hopper's tensor cores: each warpgroup runs 4 wgmma.mma_async m64nNk16 (16 of K each;
  /// tf32: m64nNk8, 8 of K each, the same 32 bytes of a K-major row)
  /// on descriptors of its 64 rows of A (K-major: 16 of K is 32 bytes along the swizzled rows; 8-row groups
  /// 1024 bytes apart) and of B (N-major, transposed by the instruction: 16 of K is two 8-row groups, 2048
  /// bytes; 64-column atoms 64 x 128 bytes apart), then waits for them. The accumulators go in and out as one
  /// struct per warpgroup; lane l of warp w holds rows 16 (w % 4) + l / 4 (+ 8), columns 8 j + 2 (l % 4) (+ 1)
  /// in the order of the mma.sync tiles, so the epilogue is the same.
  SmallVector<Value> wgmmaTile(Value stage, SmallVector<Value> acc);
  /// swap_ab's tile: each thread reads its fragments of B^T from B's stage (rows of K, atoms of 32 columns,
  /// swizzled) for every step of 8 of K, then the warpgroup runs one wgmma m64nMk8 per step with them as the
  /// register A operand and A's K-major stage as B (inline PTX: the NVVM op takes descriptors only).
  SmallVector<Value> wgmmaTileSwapped(Value stage, SmallVector<Value> acc);

  /// One step of 16 along K: every (i, j) tile's accumulators times A's fragment i and B's fragment j.
  SmallVector<Value> multiply(ArrayRef<SmallVector<Value>> aRegs, ArrayRef<SmallVector<Value>> bRegs,
                              ArrayRef<Value> acc);

  /// Stores each tile's accumulators into `target` (the result, M x N): two contiguous pairs per tile and lane
  /// (in a partial tile, only those within the result).
  void storeAccumulators(ArrayRef<Value> values, Value target);

  /// A pair at (row, col..col+1) of a partial tile: stored whole within the result, its first element alone
  /// where the edge falls between them (an odd number of columns), nothing past the edge.
  void storePartialPair(Value first, Value second, Value target, Value row, Value col);

  /// stage_epilogue: the lanes' pairs into a shared tile of the result (over the stages, which every warp is
  /// done with at the first barrier), then the block's threads copy it out in 16-byte vectors of whole rows:
  /// consecutive threads on consecutive 16 bytes (the last round clamped to the last vector, as the copies in).
  void storeThroughShared(ArrayRef<Value> values, Value target);

  /// Two adjacent elements of a row, as one vector store where the row is contiguous.
  void storePair(Value first, Value second, Value target, Value row, Value col);

  /// The epilogue's body per accumulator element, its other inputs read through their indexing maps, its
  /// results stored into its output; then the epilogue, the matmul, the fill and C's buffer are gone.
  void applyEpilogue(ArrayRef<Value> values);

  RewriterBase &b;
  MmaPlan plan;
  Location loc;
  MLIRContext *ctx;
  Type operandType;
  Value group, pair;            ///< lane / 4 and 2 (lane % 4): a lane's row and first column in a tile.
  Value swapGroup;              ///< swap_ab: (g % 4) + 16 (g / 4), g = lane / 4 (see emit()).
  Value quad;                   ///< lane % 4: a TF32 fragment's column (A) or row (B) of K.
  int64_t warpM = 0, warpN = 0; ///< The warp's tile: the whole matmul, or (staged) its share of the grid.
  Value rowBase, colBase;       ///< The warp's tile's first row and column in the matmul's.
  Value thread;                 ///< Staged: the thread's index in the block.
  Value lane;
  Value aShared, bShared; ///< Staged: the two-stage buffers.
  Value aSource, bSource; ///< Where fragments are read: A and B, or a stage of the buffers.
  bool inShared = false;  ///< aSource and bSource are stages of the shared buffers.
  Value lastGroup;        ///< async_stages: the group of the copies issued last.
  Value barriers;         ///< tma: the stages' mbarriers (S x i64 in shared memory).
  Value aMap, bMap;       ///< tma: A's and B's tensor maps (device addresses, i64, from the host).
  Operation *anchor =
      nullptr;           ///< Warp-specialized: where the roles' branch goes (the epilogue's or the matmul's place).
  scf::ForOp tileLoop;   ///< persistent: the loop over the block's tiles.
  Value round;           ///< persistent: the loop's iteration (the block's tiles before this one).
  scf::IfOp rolesBranch; ///< persistent: the branch on the role in the tile loop (finish() splits the loop).
  Value consumerRole;    ///< persistent: its condition.
  Value clusterRank;     ///< cluster_multicast: this block's place in its pair (0 or 1).
};

} // namespace kforge::mma

#endif // KFORGE_LIB_TRANSFORMOPS_MMAEMITTER_H
