//===- MmaSync.cpp - transform.kforge.matmul_to_mma_sync -------------------===//
//
// A warp's bufferized matmul tile computed by tensor-core mma.sync (m16n8k16, bf16/f16 operands, f32
// accumulators), with its fill and its elementwise epilogue folded into the accumulators' registers.
// Upstream's nvgpu.rewrite_matmul_as_mma_sync takes only f16 x f16 -> f16 tiles of exactly one instruction's
// shape, and nvgpu.mma.sync cannot be lowered for bf16 in MLIR 22, so this emits nvvm.mma.sync directly.
// The staged forms (shared memory, cp.async, ldmatrix, Hopper's wgmma and TMA) are emitted here too; what a
// rewrite needs to know and checks first is its plan (MmaPlan.h).
//
//===----------------------------------------------------------------------===//

#include "MatmulNeighbours.h"
#include "MmaPlan.h"
#include "Rewrites.h"
#include "TensorMap.h"

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

using namespace mlir;
using kforge::innermostStride;
using namespace kforge::mma;

namespace {
/// Emits the lane-level code for one plan at the matmul's position.
class MmaEmitter {
public:
  MmaEmitter(RewriterBase &rewriter, MmaPlan plan)
      : b(rewriter), plan(plan), loc(plan.matmul.getLoc()), ctx(rewriter.getContext()) {}

  void emit() {
    b.setInsertionPoint(plan.matmul);
    operandType = cast<MemRefType>(plan.a.getType()).getElementType();
    AffineExpr l = getAffineDimExpr(0, ctx);
    warpM = plan.m / plan.warpRows;
    warpN = plan.n / plan.warpCols;
    if (plan.blockK > 0) {
      // One 1-D block: warp w = tid / 32 takes the tile at (w / columns, w % columns) of the warp grid.
      thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
      lane = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 32), ValueRange{thread});
      rowBase = affine::AffineApplyOp::create(
          b, loc, AffineMap::get(1, 0, l.floorDiv(32).floorDiv(plan.warpCols) * warpM), ValueRange{thread});
      colBase = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (l.floorDiv(32) % plan.warpCols) * warpN),
                                              ValueRange{thread});
    } else {
      lane = gpu::LaneIdOp::create(b, loc, /*upper_bound=*/IntegerAttr());
      rowBase = colBase = index(0);
    }
    group = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l.floorDiv(4)), ValueRange{lane});
    pair = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (l % 4) * 2), ValueRange{lane});
    aSource = plan.a;
    bSource = plan.b;
    SmallVector<Value> accumulators = initialAccumulators();
    SmallVector<Value> results = plan.blockK > 0 ? stagedKLoop(accumulators) : kLoop(accumulators);
    if (!plan.neighbours.epilogue.empty())
      applyEpilogue(results);
    else
      storeAccumulators(results, plan.c);
  }

private:
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

  /// Four f32 accumulators per tile, row-major over (i, j): from the fill's value, or read from C.
  SmallVector<Value> initialAccumulators() {
    SmallVector<Value> acc;
    Value fillValue = plan.neighbours.fill ? plan.neighbours.fill.getDpsInputs()[0] : Value();
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t e = 0; e < 2; ++e)
            acc.push_back(fillValue ? fillValue
                                    : memref::LoadOp::create(b, loc, plan.c,
                                                             ValueRange{clamp(accRow(i, h), plan.mExtent),
                                                                        clamp(accCol(j, e), plan.nExtent)})
                                          .getResult());
    return acc;
  }

  /// A pair of operand elements as the 32-bit register mma.sync takes: an i32 for bf16, a vector<2xf16> for
  /// f16 (what nvvm.mma.sync expects of each).
  Value packPair(Value pairVector) {
    if (operandType.isF16())
      return pairVector;
    Value asInt = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pairVector);
    return vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0});
  }

  /// A's fragment of tile row i at K offset kk: rows g and g+8, columns 2t, 2t+1 and 2t+8, 2t+9 (four
  /// 32-bit registers: a0a1, a2a3, a4a5, a6a7 in PTX's order).
  SmallVector<Value> loadA(int64_t i, Value kk) {
    SmallVector<Value> regs;
    auto pairType = VectorType::get({2}, operandType);
    for (auto [rowHalf, colHalf] : {std::pair{0, 0}, {1, 0}, {0, 1}, {1, 1}}) {
      Value row = add(group, rowBase, i * kTileM + 8 * rowHalf);
      Value col = add(pair, kk, 8 * colHalf);
      regs.push_back(packPair(vector::LoadOp::create(b, loc, pairType, aSource, ValueRange{row, col})));
    }
    return regs;
  }

  /// B's fragment of tile column j at K offset kk: column g, rows 2t, 2t+1 (b0b1) and 2t+8, 2t+9 (b2b3),
  /// element by element (a pair lies in one column of the row-major B).
  SmallVector<Value> loadB(int64_t j, Value kk) {
    SmallVector<Value> regs;
    Value col = add(group, colBase, j * kTileN);
    if (plan.bTransposed) { // B as N x K: a pair is two consecutive elements of row `col`
      auto pairType = VectorType::get({2}, operandType);
      for (int64_t half = 0; half < 2; ++half)
        regs.push_back(
            packPair(vector::LoadOp::create(b, loc, pairType, bSource, ValueRange{col, add(pair, kk, 8 * half)})));
      return regs;
    }
    for (int64_t half = 0; half < 2; ++half) {
      Value first = memref::LoadOp::create(b, loc, bSource, ValueRange{add(pair, kk, 8 * half), col});
      Value second = memref::LoadOp::create(b, loc, bSource, ValueRange{add(pair, kk, 8 * half + 1), col});
      Value both = vector::FromElementsOp::create(b, loc, VectorType::get({2}, operandType), ValueRange{first, second});
      regs.push_back(packPair(both));
    }
    return regs;
  }

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
  SmallVector<Value> multiplySteps(Value kBase, int64_t steps, SmallVector<Value> acc) {
    SmallVector<SmallVector<SmallVector<Value>>> aRegs(steps), bRegs(steps);
    for (int64_t step = 0; step < steps; ++step) {
      Value kk = add(kBase, index(0), step * kTileK);
      for (int64_t i = 0; i < mTiles(); ++i)
        aRegs[step].push_back(plan.ldmatrix && inShared ? ldmatrixA(i, kk) : loadA(i, kk));
      for (int64_t j = 0; j < nTiles(); j += plan.ldmatrix && inShared ? 2 : 1) {
        if (!(plan.ldmatrix && inShared)) {
          bRegs[step].push_back(loadB(j, kk));
          continue;
        }
        auto [first, second] = ldmatrixBPair(j, kk);
        bRegs[step].push_back(first);
        bRegs[step].push_back(second);
      }
    }
    for (int64_t step = 0; step < steps; ++step)
      acc = multiply(aRegs[step], bRegs[step], acc);
    return acc;
  }

  /// Four 8x8 matrices of 16-bit elements from shared memory: lane l gives the address of row l % 8 of matrix
  /// l / 8, and receives in register q its pair (row l / 4, columns 2(l % 4), +1) of matrix q.
  /// Transposed (.trans), lane l receives (rows 2(l % 4), +1, column l / 4) of each matrix instead.
  SmallVector<Value> ldmatrix(Value source, Value row, Value col, bool transpose) {
    auto type = VectorType::get({4, 2}, operandType);
    Value quad = nvgpu::LdMatrixOp::create(b, loc, type, source, ValueRange{row, col}, b.getBoolAttr(transpose),
                                           b.getI32IntegerAttr(4));
    SmallVector<Value> regs;
    for (int64_t q = 0; q < 4; ++q)
      regs.push_back(packPair(vector::ExtractOp::create(b, loc, quad, ArrayRef<int64_t>{q})));
    return regs;
  }
  /// A's fragment of tile row i: matrices (rows 0-7, K 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15), which
  /// are a0a1, a2a3, a4a5, a6a7.
  SmallVector<Value> ldmatrixA(int64_t i, Value kk) {
    AffineExpr l = getAffineDimExpr(0, ctx);
    Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 8 + (l.floorDiv(8) % 2) * 8), lane);
    Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l.floorDiv(16) * 8), lane);
    return ldmatrix(aSource, add(row, rowBase, i * kTileM), add(col, kk, 0), /*transpose=*/false);
  }
  /// B's fragments of column tiles j and j + 1 from the row-major B, transposed by ldmatrix: matrices (K 0-7,
  /// columns 0-7), (K 8-15, 0-7), (K 0-7, 8-15), (K 8-15, 8-15), which are b0b1 and b2b3 of tile j, then of
  /// tile j + 1.
  std::pair<SmallVector<Value>, SmallVector<Value>> ldmatrixBPair(int64_t j, Value kk) {
    AffineExpr l = getAffineDimExpr(0, ctx);
    if (plan.bTransposed) {
      // B as N x K, staged K-major as A is: untransposed matrices (columns 0-7, K 0-7), (0-7, K 8-15),
      // (8-15, K 0-7), (8-15, K 8-15): lane l receives (column l / 4, K 2(l % 4), +1) of each, b0b1 and b2b3
      // of tile j, then of tile j + 1.
      Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 8 + l.floorDiv(16) * 8), lane);
      Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (l.floorDiv(8) % 2) * 8), lane);
      SmallVector<Value> regs =
          ldmatrix(bSource, add(row, colBase, j * kTileN), add(col, kk, 0), /*transpose=*/false);
      return {{regs[0], regs[1]}, {regs[2], regs[3]}};
    }
    Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 8 + (l.floorDiv(8) % 2) * 8), lane);
    Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l.floorDiv(16) * 8), lane);
    SmallVector<Value> regs = ldmatrix(bSource, add(row, kk, 0), add(col, colBase, j * kTileN), /*transpose=*/true);
    return {{regs[0], regs[1]}, {regs[2], regs[3]}};
  }

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
  std::pair<Value, Value> vectorPosition(int64_t first, int64_t cols, int64_t rows, int64_t width = 8) {
    AffineExpr t = getAffineDimExpr(0, ctx);
    int64_t perRow = cols / width, last = rows * perRow - 1;
    Value v = thread;
    if (first + threads() - 1 > last)
      v = affine::AffineMinOp::create(
          b, loc, AffineMap::get(1, 0, {t + first, getAffineConstantExpr(last, ctx)}, ctx), ValueRange{thread});
    else
      v = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t + first), ValueRange{thread});
    Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t.floorDiv(perRow)), ValueRange{v});
    Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (t % perRow) * width), ValueRange{v});
    return {row, col};
  }
  /// The rounds of this thread's copies of a rows x cols tile (`width`-element vectors over the block's threads).
  int64_t rounds(int64_t rows, int64_t cols, int64_t width = 8) {
    return llvm::divideCeil(rows * cols / width, threads());
  }
  TileShare loadTileShare(Value kOff) {
    TileShare share;
    auto vec = VectorType::get({8}, operandType);
    for (int64_t r = 0; r < rounds(plan.m, plan.blockK); ++r) {
      auto [row, col] = vectorPosition(r * threads(), plan.blockK, plan.m);
      share.a.push_back(vector::LoadOp::create(b, loc, vec, plan.a, ValueRange{row, add(col, kOff, 0)}));
    }
    for (int64_t r = 0; r < rounds(plan.blockK, plan.n); ++r) {
      if (plan.bTransposed) { // B as N x K: vectors along K, as A's
        auto [row, col] = vectorPosition(r * threads(), plan.blockK, plan.n);
        share.b.push_back(vector::LoadOp::create(b, loc, vec, plan.b, ValueRange{row, add(col, kOff, 0)}));
        continue;
      }
      auto [row, col] = vectorPosition(r * threads(), plan.n, plan.blockK);
      share.b.push_back(vector::LoadOp::create(b, loc, vec, plan.b, ValueRange{add(row, kOff, 0), col}));
    }
    return share;
  }
  /// Stores a share into stage `stage`, both tiles as they are (8-element vectors).
  void storeTileShare(const TileShare &share, Value stage) {
    int64_t i = 0;
    for (int64_t r = 0; r < rounds(plan.m, plan.blockK); ++r, ++i) {
      auto [row, col] = vectorPosition(r * threads(), plan.blockK, plan.m);
      vector::StoreOp::create(b, loc, share.a[i], aShared, ValueRange{stage, row, col});
    }
    i = 0;
    for (int64_t r = 0; r < rounds(plan.blockK, plan.n); ++r, ++i) {
      auto [row, col] = plan.bTransposed ? vectorPosition(r * threads(), plan.blockK, plan.n)
                                         : vectorPosition(r * threads(), plan.n, plan.blockK);
      vector::StoreOp::create(b, loc, share.b[i], bShared, ValueRange{stage, row, col});
    }
  }
  /// Stage `stage` of a shared buffer as a 2-D view.
  Value stageView(Value buffer, Value stage) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<OpFoldResult> offsets = {stage, b.getIndexAttr(0), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(type.getDimSize(1)),
                                       b.getIndexAttr(type.getDimSize(2))};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto viewType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
        {type.getDimSize(1), type.getDimSize(2)}, type, offsets, sizes, strides));
    return memref::SubViewOp::create(b, loc, viewType, buffer, offsets, sizes, strides);
  }

  /// The K loop over tiles of block_k: while the warps multiply stage s, each thread's share of the next
  /// tile is loaded from global memory into registers and then stored into stage 1 - s; one barrier per tile.
  SmallVector<Value> stagedKLoop(ArrayRef<Value> init) {
    Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    SmallVector<MemRefType> types = {stagedAType(plan, operandType, workgroup),
                                     stagedBType(plan, operandType, workgroup)};
    if (plan.tma)
      types.push_back(barriersType(plan, b, workgroup));
    SmallVector<Value> buffers = kforge::sharedBuffers(b, loc, plan.launch, types, /*swizzled=*/plan.wgmma);
    aShared = buffers[0];
    bShared = buffers[1];
    if (plan.tma)
      return tmaKLoop(buffers[2], init);
    if (plan.asyncStages > 0)
      return asyncKLoop(init);
    return kforge::twoStageKLoop<TileShare>(
        b, loc, plan.k / plan.blockK, plan.blockK, init, [&](Value kOff, Value) { return loadTileShare(kOff); },
        [&](const TileShare &share, Value stage) { storeTileShare(share, stage); },
        [&](Value stage, SmallVector<Value> acc) {
          aSource = stageView(aShared, stage);
          bSource = stageView(bShared, stage);
          inShared = true;
          return multiplySteps(index(0), plan.blockK / kTileK, std::move(acc));
        });
  }

  /// Issues this thread's asynchronous 16-byte copies of the tile at K offset kOff into stage `stage` (the
  /// same vectors loadTileShare reads) and commits them as one group.
  void copyTileAsync(Value kOff, Value stage) {
    SmallVector<Value> tokens;
    // A vector past the data is zero-filled (cp.async with a source size of 0 bytes, or of the elements before
    // the edge) from a clamped, valid address: past K (the last tile of a K that block_k does not divide), zeros
    // add nothing to the products; past M or N (a partial tile), they make rows and columns nothing stores.
    bool partialK = plan.k % plan.blockK != 0;
    auto copy = [&](Value source, ValueRange from, Value shared, ValueRange to, Value elements) {
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(b, loc, shared, to, source, from, b.getIndexAttr(8),
                                                        /*srcElements=*/elements, /*bypassL1=*/b.getUnitAttr()));
    };
    // 8 elements, or 0 where `inside` is false (null: always inside, no source size).
    auto wholeOrNone = [&](Value inside) -> Value {
      return inside ? arith::SelectOp::create(b, loc, inside, index(8), index(0)).getResult() : Value();
    };
    // The K index of a vector, and where it is read from (within K): an A vector spans 8 columns of K, so
    // its start is clamped to K - 8; a B vector is one row of K, clamped to the last row, K - 1 (clamping B's
    // rows to K - 8 too made rows K - 7 .. K - 1 read row K - 8: seen on the H200 as a 0.119 relative error).
    auto kAt = [&](Value inTile) { return add(inTile, kOff, 0); };
    auto kIn = [&](Value inTile) -> Value {
      return partialK ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kAt(inTile), index(plan.k)).getResult()
                      : Value();
    };
    auto kRead = [&](Value inTile, int64_t last) -> Value {
      if (!partialK)
        return kAt(inTile);
      AffineExpr s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
      return affine::AffineMinOp::create(b, loc, AffineMap::get(0, 2, {s0 + s1, getAffineConstantExpr(last, ctx)}, ctx),
                                         ValueRange{inTile, kOff});
    };
    int64_t lastKVector = plan.k - 8, lastKRow = plan.k - 1;
    // An operand stored K-major (A as M x K, B as N x K): `extent` rows (M or N) of K, vectors along K, each
    // row whole or past the edge (K-major rows, swizzled for wgmma).
    auto copyKMajor = [&](Value source, Value shared, int64_t rows, Value extent) {
      for (int64_t r = 0; r < rounds(rows, plan.blockK); ++r) {
        auto [row, col] = vectorPosition(r * threads(), plan.blockK, rows);
        Value to = plan.wgmma ? swizzled(row, col) : col;
        copy(source, ValueRange{clamp(row, extent), kRead(col, lastKVector)}, shared, ValueRange{stage, row, to},
             wholeOrNone(allOf({kIn(col), within(row, extent)})));
      }
    };
    // An operand stored along M or N (B as K x N, A as K x M): block_k rows of `cols` columns, vectors along the
    // columns; wgmma's stages keep them in 64-column atoms.
    auto copyMNMajor = [&](Value source, Value shared, int64_t cols, Value extent) {
      for (int64_t r = 0; r < rounds(plan.blockK, cols); ++r) {
        auto [row, col] = vectorPosition(r * threads(), cols, plan.blockK);
        // Along a partial M or N, the elements of the vector before the edge (none past it, where its start is
        // read from the last whole vector's instead: 16-byte aligned).
        Value kInside = kIn(row);
        Value elements = wholeOrNone(kInside);
        Value readCol = col;
        if (extent) {
          AffineExpr d0 = getAffineDimExpr(0, ctx), s0 = getAffineSymbolExpr(0, ctx);
          Value before = affine::AffineMinOp::create(
              b, loc, AffineMap::get(1, 1, {s0 - d0, getAffineConstantExpr(8, ctx)}, ctx), ValueRange{col, extent});
          before = arith::MaxSIOp::create(b, loc, before, index(0));
          elements = kInside ? arith::SelectOp::create(b, loc, kInside, before, index(0)).getResult() : before;
          readCol = affine::AffineMinOp::create(b, loc, AffineMap::get(1, 1, {d0, (s0 - 1).floorDiv(8) * 8}, ctx),
                                                ValueRange{col, extent});
        }
        if (plan.wgmma) {
          AffineExpr c = getAffineDimExpr(0, ctx);
          Value atom = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, c.floorDiv(kSwizzleRow)), col);
          Value inAtom = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, c % kSwizzleRow), col);
          copy(source, ValueRange{kRead(row, lastKRow), readCol}, shared,
               ValueRange{stage, atom, row, swizzled(row, inAtom)}, elements);
        } else {
          copy(source, ValueRange{kRead(row, lastKRow), readCol}, shared, ValueRange{stage, row, col}, elements);
        }
      }
    };
    if (plan.aTransposed) // A as K x M (wgmma only: it reads an M-major A)
      copyMNMajor(plan.a, aShared, plan.m, plan.mExtent);
    else
      copyKMajor(plan.a, aShared, plan.m, plan.mExtent);
    if (plan.bTransposed)
      copyKMajor(plan.b, bShared, plan.n, plan.nExtent);
    else
      copyMNMajor(plan.b, bShared, plan.n, plan.nExtent);
    lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
  }

  /// The column a 16-byte chunk starting at `col` (a multiple of 8) of swizzled row `row` is stored at: chunk
  /// (col / 8) ^ (row % 8) of the 128-byte row.
  Value swizzled(Value row, Value col) {
    AffineExpr r = getAffineDimExpr(0, ctx), c = getAffineDimExpr(1, ctx);
    Value rowPhase = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, r % 8), row);
    Value chunk = affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, c.floorDiv(8)), ValueRange{row, col});
    Value xored = arith::XOrIOp::create(b, loc, chunk, rowPhase);
    return arith::MulIOp::create(b, loc, xored, index(8));
  }

  /// The K loop over S = async_stages stages filled by cp.async: tiles 0 .. S - 2 in flight before the loop;
  /// iteration t waits for tile t (its group and those before it done: S - 2 may stay pending), meets the
  /// block at a barrier (tile t is visible; every warp is done with tile t - 1), issues tile t + S - 1 into
  /// tile t - 1's stage (the last S - 1 iterations reload the last tile into a stage nothing reads again: no
  /// branch) and multiplies tile t.
  SmallVector<Value> asyncKLoop(ArrayRef<Value> init) {
    int64_t stages = plan.asyncStages, tiles = plan.tiles(), ahead = plan.prefetch();
    for (int64_t s = 0; s < ahead; ++s)
      copyTileAsync(index(std::min(s, tiles - 1) * plan.blockK), index(s));
    // nvgpu.device_async_wait names a group, but it lowers to cp.async.wait_group N, which counts the
    // thread's pending groups: the prologue's last group stands for whichever group the count reaches.
    Value prologueGroup = lastGroup;
    auto loop = scf::ForOp::create(b, loc, index(0), index(tiles), index(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      AffineExpr t = getAffineDimExpr(0, ctx);
      Value tile = loop.getInductionVar();
      nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, b.getI32IntegerAttr(ahead - 1));
      // wgmma reads shared memory through the async proxy: the copies' writes are made visible to it first.
      if (plan.wgmma)
        NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_shared,
                                   NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
      gpu::BarrierOp::create(b, loc);
      Value nextOffset = affine::AffineMinOp::create(
          b, loc,
          AffineMap::get(1, 0, {(t + ahead) * plan.blockK, getAffineConstantExpr((tiles - 1) * plan.blockK, ctx)},
                         ctx),
          ValueRange{tile});
      Value nextStage =
          affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (t + ahead) % stages), ValueRange{tile});
      copyTileAsync(nextOffset, nextStage);
      Value stage = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t % stages), ValueRange{tile});
      if (plan.wgmma) {
        scf::YieldOp::create(b, loc, wgmmaTile(stage, SmallVector<Value>(loop.getRegionIterArgs())));
        b.setInsertionPointAfter(loop);
        nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, b.getI32IntegerAttr(0));
        return afterWgmmaLoop(loop);
      }
      aSource = stageView(aShared, stage);
      bSource = stageView(bShared, stage);
      inShared = true;
      SmallVector<Value> acc =
          multiplySteps(index(0), plan.blockK / kTileK, SmallVector<Value>(loop.getRegionIterArgs()));
      scf::YieldOp::create(b, loc, acc);
    }
    // No copy may still be writing shared memory when the block's threads leave.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, b.getI32IntegerAttr(0));
    return SmallVector<Value>(loop.getResults());
  }

  /// The K loop's results once every wgmma has finished (the last tile's may still run with wgmma_in_flight).
  SmallVector<Value> afterWgmmaLoop(scf::ForOp loop) {
    if (plan.wgmmaInFlight > 0)
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(0));
    return SmallVector<Value>(loop.getResults());
  }

  //===--- TMA: the stages filled by the tensor memory accelerator ---===//

  /// A shared-memory pointer (!llvm.ptr<3>) `bytes` into `buffer`.
  Value sharedPointer(Value buffer, Value bytes) {
    return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 3), sharedByteAddress(buffer, bytes));
  }
  Value scaled(Value v, int64_t factor) {
    AffineExpr d = getAffineDimExpr(0, ctx);
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d * factor), ValueRange{v});
  }
  Value i32(Value indexValue) { return arith::IndexCastOp::create(b, loc, b.getI32Type(), indexValue); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  Value barrier(Value stage) { return sharedPointer(barriers, scaled(stage, 8)); }

  /// Thread 0 fills stage `stage` with the tile at K offset kOff: it tells the stage's mbarrier how many bytes
  /// to expect (and arrives), then issues one TMA copy of A's box (BM rows x 64 of K) and one per 64-column
  /// atom of B (64 K rows x 64 columns); the copies complete on the mbarrier. The tensor maps swizzle as the
  /// cp.async path does (128 bytes), so wgmma's descriptors are the same.
  void issueTileTma(Value kOff, Value stage) {
    int64_t rowBytes = 2 * kSwizzleRow;
    int64_t aStageBytes = plan.m * rowBytes, bStageBytes = plan.n * plan.blockK * 2;
    Value bar = barrier(stage);
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, /*res=*/Type(), bar, i32(aStageBytes + bStageBytes),
                                           NVVM::MemScopeKindAttr(), BoolAttr(), /*predicate=*/Value());
    // The copies' destination is in the shared::cluster window (a block without a cluster is a cluster of
    // one, its shared::cta addresses valid there), as PTX's cp.async.bulk.tensor.shared::cluster takes it.
    auto copy = [&](Value map, Value shared, ValueRange coordinates) {
      Value destination = LLVM::AddrSpaceCastOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 7), shared);
      Value descriptor = LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), map);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, destination, descriptor, coordinates, bar, /*im2colOffsets=*/ValueRange{},
          /*multicastMask=*/Value(), /*l2CacheHint=*/Value(), NVVM::TMALoadModeAttr(), BoolAttr(),
          NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
    };
    // Coordinates are innermost first: (column, row).
    if (plan.aTransposed) { // A as K x M: one box per 64-column atom of M, as B's along N
      for (int64_t atom = 0; atom < plan.m / kSwizzleRow; ++atom) {
        Value at = add(scaled(stage, aStageBytes), index(atom * plan.blockK * rowBytes), 0);
        copy(aMap, sharedPointer(aShared, at),
             {i32(add(plan.aGlobal.col, index(0), atom * kSwizzleRow)), i32(add(plan.aGlobal.row, kOff, 0))});
      }
    } else {
      copy(aMap, sharedPointer(aShared, scaled(stage, aStageBytes)),
           {i32(add(plan.aGlobal.col, kOff, 0)), i32(plan.aGlobal.row)});
    }
    if (plan.bTransposed) { // B as N x K: one box as A's (N rows x 64 of K)
      copy(bMap, sharedPointer(bShared, scaled(stage, bStageBytes)),
           {i32(add(plan.bGlobal.col, kOff, 0)), i32(plan.bGlobal.row)});
      return;
    }
    for (int64_t atom = 0; atom < plan.n / kSwizzleRow; ++atom) {
      Value at = add(scaled(stage, bStageBytes), index(atom * plan.blockK * rowBytes), 0);
      copy(bMap, sharedPointer(bShared, at),
           {i32(add(plan.bGlobal.col, index(0), atom * kSwizzleRow)), i32(add(plan.bGlobal.row, kOff, 0))});
    }
  }

  /// `then` under `if (thread == 0)`.
  void onFirstThread(llvm::function_ref<void()> then) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, index(0));
    auto branch = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    then();
  }

  /// The K loop over S = async_stages stages filled by TMA, one mbarrier per stage (thread 0 initialises them
  /// to one arrival and issues every copy). Tiles 0 .. S - 2 are issued before the loop; iteration t waits on
  /// its stage's mbarrier for phase t / S (parity), meets the block at a barrier (every warp is done with tile
  /// t - 1: its wgmma were waited for), thread 0 issues tile t + S - 1 into tile t - 1's stage (while there is
  /// one: no copy is left in flight when the block exits), and the warpgroups multiply tile t.
  SmallVector<Value> tmaKLoop(Value barrierBuffer, ArrayRef<Value> init) {
    barriers = barrierBuffer;
    int64_t stages = plan.asyncStages, tiles = plan.tiles(), ahead = plan.prefetch();
    aMap = kforge::createTensorMap2d(b, loc, plan.launch, plan.aGlobal.global, plan.aTransposed ? plan.blockK : plan.m,
                                     kSwizzleRow);
    bMap = kforge::createTensorMap2d(b, loc, plan.launch, plan.bGlobal.global,
                                     plan.bTransposed ? plan.n : plan.blockK, kSwizzleRow);
    onFirstThread([&] {
      for (int64_t s = 0; s < stages; ++s)
        NVVM::MBarrierInitOp::create(b, loc, barrier(index(s)), i32(1), /*predicate=*/Value());
      // The initialised mbarriers are visible to the async proxy (the TMA units) before the first copy.
      NVVM::FenceMbarrierInitOp::create(b, loc);
    });
    gpu::BarrierOp::create(b, loc);
    onFirstThread([&] {
      for (int64_t s = 0; s < std::min(ahead, tiles); ++s)
        issueTileTma(index(s * plan.blockK), index(s));
    });
    auto loop = scf::ForOp::create(b, loc, index(0), index(tiles), index(1), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    AffineExpr t = getAffineDimExpr(0, ctx);
    Value tile = loop.getInductionVar();
    Value stage = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t % stages), ValueRange{tile});
    Value parity = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t.floorDiv(stages) % 2), ValueRange{tile});
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier(stage), i32(parity), i32(kTryWaitTicks));
    gpu::BarrierOp::create(b, loc);
    Value next = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t + ahead), ValueRange{tile});
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, index(0));
    Value remains = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, index(tiles));
    auto issue = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, first, remains), /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(issue.thenBlock());
      Value nextStage =
          affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (t + ahead) % stages), ValueRange{tile});
      issueTileTma(scaled(next, plan.blockK), nextStage);
    }
    scf::YieldOp::create(b, loc, wgmmaTile(stage, SmallVector<Value>(loop.getRegionIterArgs())));
    b.setInsertionPointAfter(loop);
    return afterWgmmaLoop(loop);
  }
  /// The suspend-time hint of mbarrier.try_wait (ns), as CUTLASS and MLIR's nvgpu lowering use.
  static constexpr int64_t kTryWaitTicks = 10000000;

  /// A wgmma shared-memory descriptor: the start address and the two byte offsets in 16-byte units, the
  /// 128-byte swizzle in bits 62-63.
  Value descriptor(Value address, int64_t leadingBytes, int64_t strideBytes) {
    Type i64 = b.getI64Type();
    auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };
    Value start = arith::ShRUIOp::create(b, loc, arith::AndIOp::create(b, loc, address, constant(0x3FFFF)),
                                         constant(4));
    int64_t fixed = ((leadingBytes >> 4) << 16) | ((strideBytes >> 4) << 32) | (int64_t(1) << 62);
    return arith::OrIOp::create(b, loc, start, constant(fixed));
  }
  /// The shared-memory address, as an i64, of `buffer`'s stage `stage` (each `stageBytes` long) plus `part`
  /// times `partBytes`.
  Value sharedAddress(Value buffer, Value stage, int64_t stageBytes, Value part, int64_t partBytes) {
    AffineExpr s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
    Value bytes = affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 2, s0 * stageBytes + s1 * partBytes),
                                                ValueRange{stage, part});
    return sharedByteAddress(buffer, bytes);
  }
  /// The shared-memory address, as an i64, `bytes` into `buffer`.
  Value sharedByteAddress(Value buffer, Value bytes) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), add(base, bytes, 0));
  }

  /// One staged tile on Hopper's tensor cores: each warpgroup runs 4 wgmma.mma_async m64nNk16 (16 of K each)
  /// on descriptors of its 64 rows of A (K-major: 16 of K is 32 bytes along the swizzled rows; 8-row groups
  /// 1024 bytes apart) and of B (N-major, transposed by the instruction: 16 of K is two 8-row groups, 2048
  /// bytes; 64-column atoms 64 x 128 bytes apart), then waits for them. The accumulators go in and out as one
  /// struct per warpgroup; lane l of warp w holds rows 16 (w % 4) + l / 4 (+ 8), columns 8 j + 2 (l % 4) (+ 1)
  /// in the order of the mma.sync tiles, so the epilogue is the same.
  SmallVector<Value> wgmmaTile(Value stage, SmallVector<Value> acc) {
    Type f32 = b.getF32Type();
    SmallVector<Type> fields(acc.size(), f32);
    auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
    AffineExpr t = getAffineDimExpr(0, ctx);
    Value group = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t.floorDiv(128)), ValueRange{thread});
    int64_t rowBytes = 2 * kSwizzleRow;
    int64_t aStageBytes = plan.m * rowBytes, bStageBytes = plan.n * plan.blockK * 2;
    // The warpgroup's 64 rows of A (64 x 128 bytes each group; A as K x M: its 64-column atom of M, block_k
    // rows of 128 bytes) and the whole of B's stage.
    Value aStart =
        sharedAddress(aShared, stage, aStageBytes, group, plan.aTransposed ? plan.blockK * rowBytes : 64 * rowBytes);
    Value bStart = sharedAddress(bShared, stage, bStageBytes, index(0), 0);
    Value packed = LLVM::UndefOp::create(b, loc, structType);
    for (auto [i, v] : llvm::enumerate(acc))
      packed = LLVM::InsertValueOp::create(b, loc, packed, v, ArrayRef<int64_t>{int64_t(i)});
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    auto ptxType = operandType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    Type i64 = b.getI64Type();
    for (int64_t step = 0; step < plan.blockK / kTileK; ++step) {
      // A as K x M is M-major like B as K x N (16 of K: two 8-row groups; the instruction transposes it).
      Value aAddress = arith::AddIOp::create(
          b, loc, aStart,
          arith::ConstantIntOp::create(b, loc, i64, plan.aTransposed ? step * 16 * rowBytes : step * 32));
      // B as N x K is K-major like A (16 of K: 32 bytes along its rows; the instruction does not transpose it).
      Value bAddress = arith::AddIOp::create(
          b, loc, bStart, arith::ConstantIntOp::create(b, loc, i64, plan.bTransposed ? step * 32 : step * 16 * rowBytes));
      Value descA = plan.aTransposed
                        ? descriptor(aAddress, /*leadingBytes=*/plan.blockK * rowBytes, /*strideBytes=*/8 * rowBytes)
                        : descriptor(aAddress, /*leadingBytes=*/16, /*strideBytes=*/8 * rowBytes);
      Value descB = plan.bTransposed
                        ? descriptor(bAddress, /*leadingBytes=*/16, /*strideBytes=*/8 * rowBytes)
                        : descriptor(bAddress, /*leadingBytes=*/plan.blockK * rowBytes, /*strideBytes=*/8 * rowBytes);
      packed = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, structType, packed, descA, descB, NVVM::MMAShapeAttr::get(ctx, 64, plan.n, kTileK),
          NVVM::WGMMATypesAttr::get(ctx, ptxType), NVVM::WGMMATypesAttr::get(ctx, ptxType),
          NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
          NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
          NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
          NVVM::MMALayoutAttr::get(ctx, plan.aTransposed ? NVVM::MMALayout::col : NVVM::MMALayout::row),
          NVVM::MMALayoutAttr::get(ctx, plan.bTransposed ? NVVM::MMALayout::col : NVVM::MMALayout::row),
          /*satfinite=*/NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    // Wait for this tile's wgmma, or (wgmma_in_flight) for the previous tile's: this one's may still run
    // while the next tile is awaited and its wgmma issued; they accumulate into the same registers in order.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(plan.wgmmaInFlight));
    SmallVector<Value> next;
    for (int64_t i = 0; i < int64_t(acc.size()); ++i)
      next.push_back(LLVM::ExtractValueOp::create(b, loc, packed, ArrayRef<int64_t>{i}));
    return next;
  }

  /// One step of 16 along K: every (i, j) tile's accumulators times A's fragment i and B's fragment j.
  SmallVector<Value> multiply(ArrayRef<SmallVector<Value>> aRegs, ArrayRef<SmallVector<Value>> bRegs,
                              ArrayRef<Value> acc) {
    auto ptxType = operandType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    SmallVector<Value> next;
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j) {
        ArrayRef<Value> c = acc.slice((i * nTiles() + j) * 4, 4);
        Value d = NVVM::MmaOp::create(b, loc, resultType, aRegs[i], bRegs[j], c,
                                      /*shape=*/ArrayRef<int64_t>{kTileM, kTileN, kTileK},
                                      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                                      /*multiplicandPtxTypes=*/std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                                      /*multiplicandLayouts=*/
                                      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int64_t r = 0; r < 4; ++r)
          next.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r}));
      }
    return next;
  }

  /// Stores each tile's accumulators into `target` (the result, M x N): two contiguous pairs per tile and lane
  /// (in a partial tile, only those within the result).
  void storeAccumulators(ArrayRef<Value> values, Value target) {
    if (plan.stageEpilogue)
      return storeThroughShared(values, target);
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        for (int64_t h = 0; h < 2; ++h) {
          int64_t first = (i * nTiles() + j) * 4 + 2 * h;
          if (partial())
            storePartialPair(values[first], values[first + 1], target, accRow(i, h), accCol(j, 0));
          else
            storePair(values[first], values[first + 1], target, accRow(i, h), accCol(j, 0));
        }
  }

  /// A pair at (row, col..col+1) of a partial tile: stored whole within the result, its first element alone
  /// where the edge falls between them (an odd number of columns), nothing past the edge.
  void storePartialPair(Value first, Value second, Value target, Value row, Value col) {
    Value rowIn = within(row, plan.mExtent);
    Value bothIn = allOf({rowIn, within(add(col, index(0), 1), plan.nExtent)});
    if (!bothIn)
      return storePair(first, second, target, row, col);
    auto branch = scf::IfOp::create(b, loc, bothIn, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    storePair(first, second, target, row, col);
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    guarded(allOf({rowIn, within(col, plan.nExtent)}), [&] {
      memref::StoreOp::create(b, loc, first, target, ValueRange{row, col});
    });
  }

  /// stage_epilogue: the lanes' pairs into a shared tile of the result (over the stages, which every warp is
  /// done with at the first barrier), then the block's threads copy it out in 16-byte vectors of whole rows:
  /// consecutive threads on consecutive 16 bytes (the last round clamped to the last vector, as the copies in).
  void storeThroughShared(ArrayRef<Value> values, Value target) {
    Type element = cast<MemRefType>(target.getType()).getElementType();
    Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(), workgroup);
    Value base = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
    Value tile = memref::ViewOp::create(b, loc, resultTileType(plan, element, workgroup), base, index(0), ValueRange{});
    gpu::BarrierOp::create(b, loc);
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        for (int64_t h = 0; h < 2; ++h) {
          int64_t first = (i * nTiles() + j) * 4 + 2 * h;
          storePair(values[first], values[first + 1], tile, accRow(i, h), accCol(j, 0));
        }
    gpu::BarrierOp::create(b, loc);
    int64_t width = 128 / element.getIntOrFloatBitWidth(); // elements per 16 bytes
    auto vec = VectorType::get({width}, element);
    for (int64_t r = 0; r < rounds(plan.m, plan.n, width); ++r) {
      auto [row, col] = vectorPosition(r * threads(), plan.n, plan.m, width);
      Value x = vector::LoadOp::create(b, loc, vec, tile, ValueRange{row, col});
      if (!partial()) {
        vector::StoreOp::create(b, loc, x, target, ValueRange{row, col});
        continue;
      }
      // A partial tile: the vectors within the result whole, one the edge cuts element by element.
      Value rowIn = within(row, plan.mExtent);
      Value whole = allOf({rowIn, within(add(col, index(0), width - 1), plan.nExtent)});
      if (!whole) {
        vector::StoreOp::create(b, loc, x, target, ValueRange{row, col});
        continue;
      }
      auto branch = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      vector::StoreOp::create(b, loc, x, target, ValueRange{row, col});
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      for (int64_t e = 0; e < width; ++e) {
        Value column = add(col, index(0), e);
        guarded(allOf({rowIn, within(column, plan.nExtent)}), [&] {
          Value element = vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{e});
          memref::StoreOp::create(b, loc, element, target, ValueRange{row, column});
        });
      }
    }
  }

  /// Two adjacent elements of a row, as one vector store where the row is contiguous.
  void storePair(Value first, Value second, Value target, Value row, Value col) {
    auto type = cast<MemRefType>(target.getType());
    if (innermostStride(type) == 1) {
      Value both =
          vector::FromElementsOp::create(b, loc, VectorType::get({2}, type.getElementType()), ValueRange{first, second});
      vector::StoreOp::create(b, loc, both, target, ValueRange{row, col});
      return;
    }
    memref::StoreOp::create(b, loc, first, target, ValueRange{row, col});
    memref::StoreOp::create(b, loc, second, target, ValueRange{row, add(col, index(0), 1)});
  }

  /// The epilogue's body per accumulator element, its other inputs read through their indexing maps, its
  /// results stored into its output; then the epilogue, the matmul, the fill and C's buffer are gone.
  void applyEpilogue(ArrayRef<Value> values) {
    ArrayRef<linalg::GenericOp> epilogue = plan.neighbours.epilogue;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(epilogue.back()); // after the views of its operands
    SmallVector<Value> outputs(values.size());
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t e = 0; e < 2; ++e) {
            int64_t slot = (i * nTiles() + j) * 4 + 2 * h + e;
            // (In a partial tile the epilogue's reads are clamped; what they give past the edge is not stored.)
            outputs[slot] =
                kforge::epilogueChainElement(b, loc, epilogue, plan.c, values[slot], clamp(accRow(i, h), plan.mExtent),
                                             clamp(accCol(j, e), plan.nExtent));
          }
    storeAccumulators(outputs, plan.neighbours.result(plan.c));
  }

  RewriterBase &b;
  MmaPlan plan;
  Location loc;
  MLIRContext *ctx;
  Type operandType;
  Value group, pair; ///< lane / 4 and 2 (lane % 4): a lane's row and first column in a tile.
  int64_t warpM = 0, warpN = 0; ///< The warp's tile: the whole matmul, or (staged) its share of the grid.
  Value rowBase, colBase;       ///< The warp's tile's first row and column in the matmul's.
  Value thread;                 ///< Staged: the thread's index in the block.
  Value lane;
  Value aShared, bShared;       ///< Staged: the two-stage buffers.
  Value aSource, bSource;       ///< Where fragments are read: A and B, or a stage of the buffers.
  bool inShared = false;        ///< aSource and bSource are stages of the shared buffers.
  Value lastGroup;              ///< async_stages: the group of the copies issued last.
  Value barriers;               ///< tma: the stages' mbarriers (S x i64 in shared memory).
  Value aMap, bMap;             ///< tma: A's and B's tensor maps (device addresses, i64, from the host).
};
} // namespace

LogicalResult kforge::matmulToMmaSync(RewriterBase &rewriter, linalg::MatmulOp matmul, const MmaSyncOptions &options,
                                      std::string &why) {
  FailureOr<MmaPlan> plan = planMma(matmul, options, why);
  if (failed(plan))
    return failure();
  MmaEmitter(rewriter, *plan).emit();
  kforge::eraseMatmulAndNeighbours(rewriter, plan->matmul, plan->neighbours);
  return success();
}
