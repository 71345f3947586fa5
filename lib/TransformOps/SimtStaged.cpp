//===- SimtStaged.cpp - transform.kforge.matmul_to_simt_staged ------------===//
//
// A block's fp32 matmul tile as the classic shared-memory SGEMM: the block's threads copy A's and B's K tile
// into shared memory together (A transposed), two stages with a register prefetch of the next tile, and each
// thread accumulates a strided TM x TN share of the tile in registers from 4-wide shared-memory reads.
// Either operand may come transposed (A as K x M, B as N x K: nn.Linear's weight); the copy into shared memory
// then reads it along its contiguous K rows and stores it so the multiply reads the same K-major stages.
// A partial tile (the last block along an M or N that the block tile does not divide) computes the whole static
// tile: its loads past the operands' edge are clamped to their last row or column (in bounds; the values they
// give only reach outputs past the edge), and its stores past C's edge are skipped.
//
//===----------------------------------------------------------------------===//

#include "MatmulNeighbours.h"
#include "Rewrites.h"
#include "SimtTile.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {
using kforge::simt::kVector;
constexpr int64_t kPad = 4; ///< Rows stored transposed are padded by 4 floats: the stores spread over banks.

struct SimtPlan : kforge::MatmulTile {
  int64_t blockK = 0, threadRows = 0, threadCols = 0;
  bool asyncB = false; ///< B's tiles copied by cp.async, not through registers.
  gpu::LaunchOp launch;
  kforge::MatmulNeighbours neighbours;
  int64_t threads() const { return threadRows * threadCols; }
  int64_t tileM() const { return m / threadRows; } ///< Rows per thread.
  int64_t tileN() const { return n / threadCols; } ///< Columns per thread.
  /// Two stages of A^T (block_k x (M + pad); unpadded when A comes K x M: no transposed stores) and of B
  /// (block_k x N; padded when B comes N x K and is transposed on its way in).
  MemRefType aSharedType(Attribute space) const {
    return MemRefType::get({2, blockK, m + (aTransposed ? 0 : kPad)}, Float32Type::get(c.getContext()),
                           MemRefLayoutAttrInterface(), space);
  }
  MemRefType bSharedType(Attribute space) const {
    return MemRefType::get({2, blockK, n + (bTransposed ? kPad : 0)}, Float32Type::get(c.getContext()),
                           MemRefLayoutAttrInterface(), space);
  }
  int64_t smemBytes() const { return kforge::memrefBytes(aSharedType({})) + kforge::memrefBytes(bSharedType({})); }
};

} // namespace

/// The matmul and the op's options (as its verifier accepts them) as a plan, or failure with `why` set.
static FailureOr<SimtPlan> planSimt(linalg::MatmulOp matmul, const kforge::SimtStagedOptions &options,
                                    std::string &why) {
  FailureOr<kforge::MatmulTile> tile = kforge::staticMatmulTile(
      matmul,
      [](Type a, Type b, Type c) {
        return a.isF32() && b.isF32() && c.isF32() ? std::string() : std::string("expected f32 operands and result");
      },
      why, /*allowTransposed=*/true, /*allowPartial=*/true);
  if (failed(tile))
    return failure();
  SimtPlan plan;
  static_cast<kforge::MatmulTile &>(plan) = *tile;
  if (kforge::innermostStride(cast<MemRefType>(plan.a.getType())) != 1 ||
      kforge::innermostStride(cast<MemRefType>(plan.b.getType())) != 1) {
    why = "expected A's and B's rows contiguous (innermost stride 1)";
    return failure();
  }
  plan.threadRows = options.threadGrid[0];
  plan.threadCols = options.threadGrid[1];
  plan.blockK = options.blockK;
  plan.asyncB = options.asyncB;
  if (plan.asyncB && plan.nExtent) {
    why = "async_b copies B's rows into shared memory as they are; a partial tile's B columns past N are read "
          "clamped through registers: drop async_b";
    return failure();
  }
  if (plan.asyncB && plan.bTransposed) {
    why = "async_b copies B's rows into shared memory as they are; B comes transposed (N x K) and is transposed "
          "on its way in through registers: drop async_b";
    return failure();
  }
  if (plan.m % (kVector * plan.threadRows) || plan.n % (kVector * plan.threadCols)) {
    why = "the thread grid " + std::to_string(plan.threadRows) + "x" + std::to_string(plan.threadCols) +
          " does not cut the " + std::to_string(plan.m) + "x" + std::to_string(plan.n) +
          " tile into shares of whole groups of 4 rows and 4 columns";
    return failure();
  }
  if (plan.blockK % kVector || plan.blockK > plan.k) {
    why = "block_k (" + std::to_string(plan.blockK) + ") must be a multiple of 4, at most K (" +
          std::to_string(plan.k) + ")";
    return failure();
  }
  if (plan.asyncB && plan.k % plan.blockK) {
    why = "async_b copies whole rows of B; K (" + std::to_string(plan.k) + ") is not a multiple of block_k (" +
          std::to_string(plan.blockK) + "), and its last tile's rows past K must read zeros: drop async_b";
    return failure();
  }
  if (failed(kforge::stagedSimtBlock(matmul, plan.threads(), plan.smemBytes(), /*initOps=*/false, "the matmul", "C",
                                     plan.launch, plan.neighbours, why)))
    return failure();
  return plan;
}

namespace {
/// Emits the staged SGEMM for one plan at the matmul's position.
class SimtEmitter {
public:
  SimtEmitter(RewriterBase &rewriter, SimtPlan plan)
      : b(rewriter), plan(std::move(plan)), loc(this->plan.matmul.getLoc()), ctx(rewriter.getContext()) {}

  void emit() {
    b.setInsertionPoint(plan.matmul);
    AffineExpr t = getAffineDimExpr(0, ctx);
    thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    threadRow = apply(t.floorDiv(plan.threadCols) * kVector);
    threadCol = apply((t % plan.threadCols) * kVector);
    SmallVector<Value> acc = initialAccumulators();
    acc = kLoop(acc);
    if (!plan.neighbours.epilogue.empty()) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(plan.neighbours.epilogue.back()); // after the views of its operands
      // (In a partial tile the epilogue's reads are clamped too; what they give past the edge is not stored.)
      for (int64_t i = 0; i < plan.tileM(); ++i)
        for (int64_t j = 0; j < plan.tileN(); ++j)
          acc[i * plan.tileN() + j] =
              kforge::epilogueChainElement(b, loc, plan.neighbours.epilogue, plan.c, acc[i * plan.tileN() + j],
                                           ValueRange{clamp(row(i), plan.mExtent), clamp(col(j), plan.nExtent)});
      store(acc, plan.neighbours.result(plan.c));
      return;
    }
    store(acc, plan.c);
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value apply(AffineExpr e) { return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, e), thread); }
  Value add(Value base, int64_t constant) {
    AffineExpr s0 = getAffineSymbolExpr(0, ctx);
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 1, s0 + constant), ValueRange{base});
  }
  Value add(Value x, Value y) {
    AffineExpr s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 2, s0 + s1), ValueRange{x, y});
  }
  /// The thread's i-th row and j-th column of the tile: groups of 4, strided over the thread grid (a warp's
  /// 4-wide reads of a shared-memory row are consecutive).
  int64_t rowOffset(int64_t i) const { return (i / kVector) * kVector * plan.threadRows + i % kVector; }
  int64_t colOffset(int64_t j) const { return (j / kVector) * kVector * plan.threadCols + j % kVector; }
  Value row(int64_t i) { return add(threadRow, rowOffset(i)); }
  Value col(int64_t j) { return add(threadCol, colOffset(j)); }
  Value clamp(Value i, Value extent) { return kforge::clampToExtent(b, loc, i, extent); }
  /// Whether `i` lies within `extent` (true when the extent is static: null).
  Value within(Value i, Value extent) {
    if (!extent)
      return arith::ConstantIntOp::create(b, loc, 1, 1);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, extent);
  }
  /// A 4-wide vector of `operand` at (r, c..c+3), its columns clamped to `extent` element by element (a partial
  /// tile's last vector may straddle the edge).
  Value clampedVector(Value operand, Value r, Value c, Value extent) {
    SmallVector<Value> elements;
    for (int64_t e = 0; e < kVector; ++e)
      elements.push_back(memref::LoadOp::create(b, loc, operand, ValueRange{r, clamp(add(c, e), extent)}));
    return vector::FromElementsOp::create(b, loc, VectorType::get({kVector}, b.getF32Type()), elements);
  }

  SmallVector<Value> initialAccumulators() {
    SmallVector<Value> acc;
    Value fill = plan.neighbours.fill ? plan.neighbours.fill.getDpsInputs()[0] : Value();
    for (int64_t i = 0; i < plan.tileM(); ++i)
      for (int64_t j = 0; j < plan.tileN(); ++j)
        acc.push_back(fill ? fill
                           : memref::LoadOp::create(
                                 b, loc, plan.c, ValueRange{clamp(row(i), plan.mExtent), clamp(col(j), plan.nExtent)})
                                 .getResult());
    return acc;
  }

  /// Rows of `values` (tileM x tileN) stored 4 contiguous columns at a time; in a partial tile only the rows and
  /// columns within C's extents (a group of 4 whole as a vector, one straddling the edge element by element).
  void store(ArrayRef<Value> values, Value target) {
    auto type = cast<MemRefType>(target.getType());
    bool contiguous = kforge::innermostStride(type) == 1;
    for (int64_t i = 0; i < plan.tileM(); ++i)
      for (int64_t j = 0; j < plan.tileN(); j += kVector) {
        ArrayRef<Value> group = values.slice(i * plan.tileN() + j, kVector);
        if (plan.mExtent || plan.nExtent) {
          storePartial(group, target, contiguous, row(i), col(j));
          continue;
        }
        if (contiguous) {
          Value v = vector::FromElementsOp::create(b, loc, VectorType::get({kVector}, type.getElementType()), group);
          vector::StoreOp::create(b, loc, v, target, ValueRange{row(i), col(j)});
          continue;
        }
        for (int64_t e = 0; e < kVector; ++e)
          memref::StoreOp::create(b, loc, group[e], target, ValueRange{row(i), col(j + e)});
      }
  }

  /// A group of 4 results at (r, c..c+3) of a partial tile: stored whole when it lies within C, else its elements
  /// within C one by one.
  void storePartial(ArrayRef<Value> group, Value target, bool contiguous, Value r, Value c) {
    Value rowIn = within(r, plan.mExtent);
    Value whole = arith::AndIOp::create(b, loc, rowIn, within(add(c, kVector - 1), plan.nExtent));
    auto ifOp = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    if (contiguous) {
      Value v = vector::FromElementsOp::create(b, loc, VectorType::get({kVector}, group[0].getType()), group);
      vector::StoreOp::create(b, loc, v, target, ValueRange{r, c});
    } else {
      for (int64_t e = 0; e < kVector; ++e)
        memref::StoreOp::create(b, loc, group[e], target, ValueRange{r, add(c, e)});
    }
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    for (int64_t e = 0; e < kVector; ++e) {
      Value column = add(c, e);
      Value in = arith::AndIOp::create(b, loc, rowIn, within(column, plan.nExtent));
      auto one = scf::IfOp::create(b, loc, in, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(one.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, group[e], target, ValueRange{r, column});
    }
  }

  /// Row and column of the thread's vector `first` of a rows x cols tile of 4-element vectors.
  std::pair<Value, Value> vectorPosition(int64_t first, int64_t rows, int64_t cols) {
    return kforge::simt::vectorPosition(b, loc, thread, plan.threads(), first, rows, cols);
  }
  struct Share {
    SmallVector<Value> a, b;
    Value copies; ///< With async_b: the group of B's asynchronous copies into the stage.
  };
  /// The thread's vectors of the tile at K offset kOff: A's into registers; B's likewise, or, with async_b,
  /// copied straight into stage `stage` (cp.async, 16 bytes each, no registers held across the multiply).
  Share loadShare(Value kOff, Value stage) {
    Share share;
    for (int64_t v = 0; v < plan.m * plan.blockK / kVector; v += plan.threads()) {
      auto [r, c] = aPosition(v);
      share.a.push_back(plan.aTransposed ? loadVector(plan.a, add(r, kOff), c, Value(), plan.mExtent, true)
                                         : loadVector(plan.a, r, add(c, kOff), plan.mExtent, Value(), false));
    }
    SmallVector<Value> tokens;
    for (int64_t v = 0; v < plan.blockK * plan.n / kVector; v += plan.threads()) {
      auto [r, c] = bPosition(v);
      if (plan.bTransposed)
        share.b.push_back(loadVector(plan.b, r, add(c, kOff), plan.nExtent, Value(), false));
      else if (plan.asyncB)
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(b, loc, bShared, ValueRange{stage, r, c}, plan.b,
                                                          ValueRange{add(r, kOff), c}, b.getIndexAttr(kVector),
                                                          /*srcElements=*/Value(), /*bypassL1=*/b.getUnitAttr()));
      else
        share.b.push_back(loadVector(plan.b, add(r, kOff), c, Value(), plan.nExtent, true));
    }
    if (plan.asyncB)
      share.copies =
          nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
    return share;
  }
  /// The 4-wide vector of `operand` at row r, columns c..c+3 (as the operand is laid out; K is its row when
  /// `kIsRow`, else its column). In a partial tile the row is clamped to `rowExtent` and the columns to
  /// `colExtent` (M or N past the edge: in bounds, and only outputs past the edge use them); in a last K tile
  /// that K does not fill, K past the end reads zeros (those products are summed into every output).
  Value loadVector(Value operand, Value r, Value c, Value rowExtent, Value colExtent, bool kIsRow) {
    auto vec = VectorType::get({kVector}, b.getF32Type());
    bool partialK = plan.k % plan.blockK != 0;
    if (!partialK || kIsRow) {
      Value row = partialK ? clampK(r) : clamp(r, rowExtent);
      Value v = colExtent ? clampedVector(operand, row, c, colExtent)
                          : vector::LoadOp::create(b, loc, vec, operand, ValueRange{row, c}).getResult();
      if (!partialK)
        return v;
      Value zeros = arith::ConstantOp::create(b, loc, vec, DenseElementsAttr::get(vec, b.getF32FloatAttr(0)));
      return arith::SelectOp::create(b, loc, withinK(r), v, zeros);
    }
    Value row = clamp(r, rowExtent), zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    SmallVector<Value> elements;
    for (int64_t e = 0; e < kVector; ++e) {
      Value k = add(c, e);
      Value element = memref::LoadOp::create(b, loc, operand, ValueRange{row, clampK(k)});
      elements.push_back(arith::SelectOp::create(b, loc, withinK(k), element, zero));
    }
    return vector::FromElementsOp::create(b, loc, vec, elements);
  }
  /// A K index within the matmul's K (its last one past the end).
  Value clampK(Value k) {
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    return affine::AffineMinOp::create(b, loc, AffineMap::get(1, 0, {d0, getAffineConstantExpr(plan.k - 1, ctx)}, ctx),
                                       ValueRange{k});
  }
  Value withinK(Value k) { return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, k, index(plan.k)); }
  /// Where the thread's vector `first` of the A and B tiles lies in its operand: (row, column) of the operand as
  /// it is laid out, vectors along its contiguous rows (K for A as M x K and B as N x K, else M or N).
  std::pair<Value, Value> aPosition(int64_t first) {
    return plan.aTransposed ? vectorPosition(first, plan.blockK, plan.m) : vectorPosition(first, plan.m, plan.blockK);
  }
  std::pair<Value, Value> bPosition(int64_t first) {
    return plan.bTransposed ? vectorPosition(first, plan.n, plan.blockK) : vectorPosition(first, plan.blockK, plan.n);
  }
  /// A vector read along K (from row r, columns c..c+3 of an operand laid out M x K or N x K) stored transposed
  /// into a K-major stage, element by element.
  void storeTransposed(Value vector, Value buffer, Value stage, Value r, Value c) {
    for (int64_t e = 0; e < kVector; ++e) {
      Value element = vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{e});
      memref::StoreOp::create(b, loc, element, buffer, ValueRange{stage, add(c, e), r});
    }
  }
  /// A's vectors into A^T (K x M): transposed element by element, or as they are when A comes K x M; B's
  /// as they are, or transposed when B comes N x K.
  void storeShare(const Share &share, Value stage) {
    int64_t i = 0;
    for (int64_t v = 0; v < plan.m * plan.blockK / kVector; v += plan.threads(), ++i) {
      auto [r, c] = aPosition(v);
      if (plan.aTransposed)
        vector::StoreOp::create(b, loc, share.a[i], aShared, ValueRange{stage, r, c});
      else
        storeTransposed(share.a[i], aShared, stage, r, c);
    }
    if (share.copies) {
      // B's copies into this stage have landed (this thread's; the barrier after the store covers the block's).
      nvgpu::DeviceAsyncWaitOp::create(b, loc, share.copies, b.getI32IntegerAttr(0));
      return;
    }
    i = 0;
    for (int64_t v = 0; v < plan.blockK * plan.n / kVector; v += plan.threads(), ++i) {
      auto [r, c] = bPosition(v);
      if (plan.bTransposed)
        storeTransposed(share.b[i], bShared, stage, r, c);
      else
        vector::StoreOp::create(b, loc, share.b[i], bShared, ValueRange{stage, r, c});
    }
  }

  /// One K step from stage `stage`: the thread's rows of A^T[kk] and columns of B[kk] as 4-wide reads, then
  /// tileM x tileN fused multiply-adds.
  SmallVector<Value> multiply(Value stage, int64_t kk, SmallVector<Value> acc) {
    return kforge::simt::multiplyStep(
        b, loc, aShared, bShared, stage, kk, plan.tileM(), plan.tileN(), [&](int64_t i) { return row(i); },
        [&](int64_t j) { return col(j); }, std::move(acc));
  }

  /// The K loop over tiles of block_k, two stages: while the threads multiply stage s, each thread's share of
  /// the next tile is loaded into registers, then stored into stage 1 - s; one barrier per tile.
  SmallVector<Value> kLoop(ArrayRef<Value> init) {
    Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    SmallVector<Value> buffers =
        kforge::sharedBuffers(b, loc, plan.launch, {plan.aSharedType(workgroup), plan.bSharedType(workgroup)});
    aShared = buffers[0];
    bShared = buffers[1];
    // A K that block_k does not divide: one more tile, partly past K (read as zeros).
    return kforge::twoStageKLoop<Share>(
        b, loc, (plan.k + plan.blockK - 1) / plan.blockK, plan.blockK, init,
        [&](Value kOff, Value stage) { return loadShare(kOff, stage); },
        [&](const Share &share, Value stage) { storeShare(share, stage); },
        [&](Value stage, SmallVector<Value> acc) {
          for (int64_t kk = 0; kk < plan.blockK; ++kk)
            acc = multiply(stage, kk, acc);
          return acc;
        });
  }

  RewriterBase &b;
  SimtPlan plan;
  Location loc;
  MLIRContext *ctx;
  Value thread, threadRow, threadCol;
  Value aShared, bShared;
};
} // namespace

LogicalResult kforge::matmulToSimtStaged(RewriterBase &rewriter, linalg::MatmulOp matmul,
                                         const SimtStagedOptions &options, std::string &why) {
  FailureOr<SimtPlan> plan = planSimt(matmul, options, why);
  if (failed(plan))
    return failure();
  SimtEmitter(rewriter, *plan).emit();
  kforge::eraseMatmulAndNeighbours(rewriter, plan->matmul, plan->neighbours);
  return success();
}
