//===- ImplicitGemmSimt.cpp - transform.kforge.implicit_gemm_to_simt_staged -===//
//
// A block's contraction `out + x * y` (kforge/Transforms/ImplicitGemm.h: a convolution read as its implicit
// GEMM, whatever its layout, stride, dilation or padding) as the staged SIMT GEMM of SimtStaged.cpp. The GEMM's
// rows are the tile's M loops linearized, its columns the N loops, its K the reduction loops. im2col is never
// built: each element of an A or B tile is computed from its loop positions by the body's own ops (an input
// read through its indexing map, a padded convolution's guarded read), cloned per element. The block's threads
// copy each K tile into shared memory together, 4 elements per thread along the loop the operand is contiguous
// in (consecutive threads on consecutive addresses), both operands stored K-major; two stages with the next
// tile in registers; each thread accumulates groups of 4 rows and columns strided over the thread grid, as in
// the matmul. The fill before the op and an elementwise epilogue after it are taken into the accumulators.
// Serial loops (a batch the block tile leaves whole) are walked one position at a time, a GEMM each.
//
//===----------------------------------------------------------------------===//

#include "ImplicitGemmAccess.h"
#include "Rewrites.h"
#include "SimtTile.h"

#include "kforge/Transforms/ImplicitGemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {
using kforge::simt::kVector;
constexpr int64_t kPad = 4; ///< Stage rows padded by 4 floats: element stores along K spread over banks.

/// The SIMT emitter's plan: the loops, and how the thread grid shares and copies the tile.
struct SimtImplicitGemmPlan : kforge::ImplicitGemmPlan {
  int64_t threadRows = 0, threadCols = 0;
  /// Whether a tile copy of A (of B) walks M (N) with consecutive threads, else K: through registers, 4
  /// consecutive elements a thread; with asynchronous copies, one element a thread per copy.
  bool aAlongM = false, bAlongN = false;
  /// Tiles copied straight into shared memory, an asynchronous 4-byte copy per element (zero-filled where a
  /// padded read is masked, or past K), instead of through registers.
  bool asyncCopies = false;
  /// Asynchronous copies one element a thread, consecutive threads along each multiplicand's contiguous side
  /// (copy_order contiguous*), instead of 4 consecutive elements a thread.
  bool contiguousCopies = false;
  int64_t threads() const { return threadRows * threadCols; }
  int64_t tileM() const { return mPadded / threadRows; }
  int64_t tileN() const { return nPadded / threadCols; }
  /// Two stages, K-major: block_k rows of the tile's M (or N) elements, padded.
  MemRefType stageType(int64_t cols, Attribute space) const {
    return MemRefType::get({2, blockK, cols + kPad}, Float32Type::get(op->getContext()), MemRefLayoutAttrInterface(),
                           space);
  }
  int64_t smemBytes() const {
    return kforge::memrefBytes(stageType(mPadded, {})) + kforge::memrefBytes(stageType(nPadded, {}));
  }
};
} // namespace

/// Whether a copy along `loops` (M's or N's, innermost last) may take 4 consecutive elements of the linearized
/// index at once from the operand's contiguous loop `fast`: the innermost loop, in whole groups of 4.
static bool copiesAlong(ArrayRef<int64_t> loops, ArrayRef<int64_t> extents, int64_t fast) {
  return !loops.empty() && fast == loops.back() && extents[fast] % kVector == 0;
}

static FailureOr<SimtImplicitGemmPlan> planImplicitGemm(linalg::LinalgOp op, const kforge::ImplicitGemmOptions &options,
                                                        std::string &why) {
  FailureOr<kforge::ImplicitGemmPlan> loops = kforge::planImplicitGemmLoops(op, options.serialLoops, why);
  if (failed(loops))
    return failure();
  SimtImplicitGemmPlan plan;
  static_cast<kforge::ImplicitGemmPlan &>(plan) = std::move(*loops);
  if (!getElementTypeOrSelf(plan.c.getType()).isF32() || !plan.gemm.a.getType().isF32() ||
      !plan.gemm.b.getType().isF32()) {
    why = "expected f32 multiplicands and output";
    return failure();
  }
  // K's order is the GEMM's choice (a sum). Its longest loop (a convolution's channels, not its 3-wide
  // window) innermost: 4 consecutive K indices are 4 positions of one loop (one delinearization for a thread's
  // 4), fewer divisions per element. For contiguous copies in the op's order, a multiplicand copied along K has
  // its contiguous loop innermost instead, the others in the op's order: consecutive K indices are then
  // consecutive addresses of it (NCHW's filter: f * C*KH*KW + k), which a warp reads in one run.
  using CopyOrder = kforge::ImplicitGemmOptions::CopyOrder;
  plan.contiguousCopies = options.asyncCopies && options.copyOrder != CopyOrder::KGroups;
  if (options.copyOrder != CopyOrder::Contiguous) {
    auto longest =
        llvm::max_element(plan.kLoops, [&](int64_t x, int64_t y) { return plan.extents[x] < plan.extents[y]; });
    if (longest != plan.kLoops.end())
      std::rotate(longest, longest + 1, plan.kLoops.end());
  } else {
    for (int64_t fast : {plan.gemm.aFastLoop, plan.gemm.bFastLoop}) {
      auto at = llvm::find(plan.kLoops, fast);
      if (at != plan.kLoops.end()) {
        std::rotate(at, at + 1, plan.kLoops.end());
        break;
      }
    }
  }
  plan.threadRows = options.threadGrid[0];
  plan.threadCols = options.threadGrid[1];
  plan.blockK = options.blockK;
  auto padded = [](int64_t extent, int64_t threads) {
    return threads * llvm::alignTo(llvm::divideCeil(extent, threads), kVector);
  };
  plan.mPadded = padded(plan.m, plan.threadRows);
  plan.nPadded = padded(plan.n, plan.threadCols);
  if (plan.blockK % kVector || plan.blockK > plan.k) {
    why = "block_k (" + std::to_string(plan.blockK) + ") must be a multiple of 4, at most K (" +
          std::to_string(plan.k) + ")";
    return failure();
  }
  if (options.asyncCopies) {
    // Each multiplicand must be a read of a memref (or a padded one: select(c, read, 0.0)).
    auto memrefRead = [&](Value v) {
      if (auto select = v.getDefiningOp<arith::SelectOp>())
        v = select.getTrueValue();
      if (auto arg = dyn_cast<BlockArgument>(v))
        return isa<MemRefType>(op.getMatchingOpOperand(arg)->get().getType());
      return bool(v.getDefiningOp<memref::LoadOp>());
    };
    if (!plan.gemm.aIsRead || !plan.gemm.bIsRead || !memrefRead(plan.gemm.a) || !memrefRead(plan.gemm.b)) {
      why = "async_copies: each multiplicand must be an element read of a memref (or select(c, read, 0.0)); this "
            "op computes one";
      return failure();
    }
    plan.asyncCopies = true;
  }
  if (plan.contiguousCopies) {
    // Each multiplicand's contiguous side: its M (N) when it is contiguous along its innermost M (N) loop,
    // else K.
    plan.aAlongM = plan.gemm.aFastLoop == plan.mLoops.back();
    plan.bAlongN = plan.gemm.bFastLoop == plan.nLoops.back();
  } else {
    plan.aAlongM = copiesAlong(plan.mLoops, plan.extents, plan.gemm.aFastLoop);
    plan.bAlongN = copiesAlong(plan.nLoops, plan.extents, plan.gemm.bFastLoop);
    // Asynchronous copies are 4 bytes each either way: a thread's 4 consecutive K positions (K's innermost
    // loop whole groups of 4: a convolution's channels) share the rest of their positions, so the window's
    // padding check and most of the address (H100, session 54: 0.369 -> 0.325 ms on a ResNet 3x3, 1.177 ->
    // 1.143 ms on a UNet 3x3; through registers, 4 consecutive M or N positions are one vector store into the
    // stage instead).
    if (plan.asyncCopies && plan.extents[plan.kLoops.back()] % kVector == 0)
      plan.aAlongM = plan.bAlongN = false;
  }
  if (failed(kforge::stagedSimtBlock(op, plan.threads(), plan.smemBytes(), /*initOps=*/true, "the op", "the output",
                                     plan.launch, plan.neighbours, why)))
    return failure();
  return plan;
}

namespace {
class ImplicitGemmEmitter : kforge::ImplicitGemmAccess {
public:
  ImplicitGemmEmitter(RewriterBase &rewriter, SimtImplicitGemmPlan &plan)
      : ImplicitGemmAccess(rewriter, plan, kVector), plan(plan) {}

  void emit() {
    // At the last epilogue op when there is one: the views of its operands come between it and the op (only
    // pure ops do), and a serial loop takes the epilogue in.
    b.setInsertionPoint(plan.neighbours.epilogue.empty() ? plan.op.getOperation()
                                                         : plan.neighbours.epilogue.back().getOperation());
    AffineExpr t = getAffineDimExpr(0, ctx);
    thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    threadRow = apply(t.floorDiv(plan.threadCols) * kVector, thread);
    threadCol = apply((t % plan.threadCols) * kVector, thread);
    Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    SmallVector<Value> buffers = kforge::sharedBuffers(
        b, loc, plan.launch, {plan.stageType(plan.mPadded, workgroup), plan.stageType(plan.nPadded, workgroup)});
    aShared = buffers[0];
    bShared = buffers[1];
    forEachSerialPosition([&] { gemm(); });
  }

private:
  /// One thread's vector of an operand's K tile: `along` the copy's M or N (4 consecutive rows or columns
  /// from `mn` at K index `kInTile` of the tile), else along K (4 consecutive K indices from `kInTile` of row
  /// or column `mn`).
  struct CopyStep {
    Value kInTile, mn;
  };
  /// An asynchronous copy of `multiplicand`'s element at `at` into `buffer` at `to`: 4 bytes, none read
  /// (zero-filled) where a padded read is masked or K is past its end.
  Value copyElement(Value multiplicand, const Coord &at, Value buffer, ValueRange to) {
    DenseMap<Value, Value> done;
    Read read = evaluateRead(multiplicand, positions(at, /*clamped=*/true), done);
    Value valid = read.valid;
    if (Value within = withinK(at))
      valid = valid ? arith::AndIOp::create(b, loc, valid, within).getResult() : within;
    Value elements = valid ? arith::SelectOp::create(b, loc, valid, index(1), index(0)).getResult() : Value();
    return nvgpu::DeviceAsyncCopyOp::create(b, loc, buffer, to, read.source, read.indices, b.getIndexAttr(1), elements,
                                            /*bypassL1=*/UnitAttr());
  }

  /// `multiplicand`'s element at `at`; past K (the last tile of a K that block_k does not divide), zero, read
  /// at K's last index.
  Value element(Value multiplicand, const Coord &at) {
    DenseMap<Value, Value> done;
    Value v = evaluate(multiplicand, positions(at, /*clamped=*/true), done);
    Value within = withinK(at);
    if (!within)
      return v;
    return arith::SelectOp::create(b, loc, within, v, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)));
  }

  /// Element `e` of a copy step's vector of A (`isA`) or B, along M/N (`along`) or K, in the tile at `kOff`.
  Coord copyCoord(bool isA, bool along, const CopyStep &step, Value kOff, int64_t e) {
    Coord at;
    AffineExpr s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
    at.k = affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 2, s0 + s1), ValueRange{step.kInTile, kOff});
    if (!along)
      at.kAdd = e;
    (isA ? at.row : at.col) = step.mn;
    (isA ? at.rowAdd : at.colAdd) = along ? e : 0;
    return at;
  }

  /// Row and column of the thread's vector `first` of a rows x cols tile of 4-element vectors.
  std::pair<Value, Value> vectorPosition(int64_t first, int64_t rows, int64_t cols) {
    return kforge::simt::vectorPosition(b, loc, thread, plan.threads(), first, rows, cols);
  }

  SmallVector<CopyStep> copySteps(int64_t mn, bool along) {
    SmallVector<CopyStep> steps;
    for (int64_t v = 0; v < mn * plan.blockK / kVector; v += plan.threads()) {
      if (along) {
        auto [kInTile, first] = vectorPosition(v, plan.blockK, mn);
        steps.push_back({kInTile, first});
      } else {
        auto [at, kInTile] = vectorPosition(v, mn, plan.blockK);
        steps.push_back({kInTile, at});
      }
    }
    return steps;
  }

  /// The thread's 4-element vectors of A's tile, then of B's; with async copies, their group instead.
  struct Share {
    SmallVector<Value> vectors;
    Value copies;
  };

  /// The thread's copies of the K tile at `kOff` into `stage`, straight into shared memory, 4 consecutive
  /// elements a thread (k_groups).
  Share groupedCopyShare(Value kOff, Value stage) {
    SmallVector<Value> tokens;
    for (bool isA : {true, false}) {
      int64_t mn = isA ? plan.mPadded : plan.nPadded;
      bool along = isA ? plan.aAlongM : plan.bAlongN;
      Value buffer = isA ? aShared : bShared;
      for (const CopyStep &step : copySteps(mn, along))
        for (int64_t e = 0; e < kVector; ++e) {
          Value kInTile = along ? step.kInTile : add(step.kInTile, e), at = along ? add(step.mn, e) : step.mn;
          tokens.push_back(copyElement(isA ? plan.gemm.a : plan.gemm.b, copyCoord(isA, along, step, kOff, e), buffer,
                                       {stage, kInTile, at}));
        }
    }
    Share share;
    share.copies = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
    return share;
  }

  /// The thread's copies of the K tile at `kOff` into `stage`, straight into shared memory: one element a
  /// thread per copy, consecutive threads along the multiplicand's contiguous side (its M or N, else K), so a
  /// warp's 32 copies read consecutive addresses (a row of NCHW's input, a filter's K) and store to 32
  /// consecutive words of the stage along M or N. (H100, session 55, ncu: 4 consecutive K positions a thread
  /// left 74% of a ResNet 3x3's global sectors excess, the filter read at a 36-byte stride; L1 was the
  /// bottleneck at 81% busy.) A thread's positions along M or N do not depend on the K tile: their
  /// delinearization leaves the K loop. (On the same ResNet 3x3 schedule that ran 0.324 ms with k_groups:
  /// L1 at 47% busy, 8% excess sectors, but 45% more instructions, 0.331 ms: which order wins depends on the
  /// shape, and the search measures it.)
  Share contiguousCopyShare(Value kOff, Value stage) {
    SmallVector<Value> tokens;
    AffineExpr d = getAffineDimExpr(0, ctx), s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
    for (bool isA : {true, false}) {
      int64_t mn = isA ? plan.mPadded : plan.nPadded, total = mn * plan.blockK;
      bool along = isA ? plan.aAlongM : plan.bAlongN;
      Value buffer = isA ? aShared : bShared;
      for (int64_t first = 0; first < total; first += plan.threads()) {
        // The tile's element first + thread, numbered along the contiguous side; past the tile (a last
        // round the threads do not fill), its last element again (the same value, stored twice).
        Value element = first + plan.threads() <= total
                            ? apply(d + first, thread)
                            : affine::AffineMinOp::create(
                                  b, loc, AffineMap::get(1, 0, {d + first, getAffineConstantExpr(total - 1, ctx)}, ctx),
                                  ValueRange{thread})
                                  .getResult();
        int64_t inner = along ? mn : plan.blockK;
        Value fast = apply(d % inner, element), slow = apply(d.floorDiv(inner), element);
        Value kInTile = along ? slow : fast, position = along ? fast : slow;
        Coord at;
        at.k = affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 2, s0 + s1), ValueRange{kInTile, kOff});
        (isA ? at.row : at.col) = position;
        tokens.push_back(copyElement(isA ? plan.gemm.a : plan.gemm.b, at, buffer, {stage, kInTile, position}));
      }
    }
    Share share;
    share.copies = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
    return share;
  }

  Share loadShare(Value kOff) {
    Share share;
    auto vec = VectorType::get({kVector}, b.getF32Type());
    for (bool isA : {true, false}) {
      int64_t mn = isA ? plan.mPadded : plan.nPadded;
      bool along = isA ? plan.aAlongM : plan.bAlongN;
      for (const CopyStep &step : copySteps(mn, along)) {
        SmallVector<Value> elements;
        for (int64_t e = 0; e < kVector; ++e)
          elements.push_back(element(isA ? plan.gemm.a : plan.gemm.b, copyCoord(isA, along, step, kOff, e)));
        share.vectors.push_back(vector::FromElementsOp::create(b, loc, vec, elements));
      }
    }
    return share;
  }

  void storeShare(const Share &share, Value stage) {
    if (share.copies) {
      // This thread's copies into the stage have landed (the barrier after the store covers the block's).
      nvgpu::DeviceAsyncWaitOp::create(b, loc, share.copies, b.getI32IntegerAttr(0));
      return;
    }
    size_t i = 0;
    for (bool isA : {true, false}) {
      int64_t mn = isA ? plan.mPadded : plan.nPadded;
      bool along = isA ? plan.aAlongM : plan.bAlongN;
      Value buffer = isA ? aShared : bShared;
      for (const CopyStep &step : copySteps(mn, along)) {
        Value vector = share.vectors[i++];
        if (along) {
          vector::StoreOp::create(b, loc, vector, buffer, ValueRange{stage, step.kInTile, step.mn});
          continue;
        }
        for (int64_t e = 0; e < kVector; ++e) {
          Value element = vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{e});
          memref::StoreOp::create(b, loc, element, buffer, ValueRange{stage, add(step.kInTile, e), step.mn});
        }
      }
    }
  }

  /// The thread's i-th row and j-th column of the tile: groups of 4, strided over the thread grid.
  Value row(int64_t i) { return add(threadRow, (i / kVector) * kVector * plan.threadRows + i % kVector); }
  Value col(int64_t j) { return add(threadCol, (j / kVector) * kVector * plan.threadCols + j % kVector); }

  SmallVector<Value> multiply(Value stage, int64_t kk, SmallVector<Value> acc) {
    return kforge::simt::multiplyStep(
        b, loc, aShared, bShared, stage, kk, plan.tileM(), plan.tileN(), [&](int64_t i) { return row(i); },
        [&](int64_t j) { return col(j); }, std::move(acc));
  }

  /// The thread's output element (i, j): columns of a group of 4 share their delinearization.
  Coord outCoord(int64_t i, int64_t j) {
    Coord at;
    at.row = row(i);
    at.col = col(j - j % kVector);
    at.colAdd = j % kVector;
    return at;
  }

  /// Whether 4 consecutive columns of a group are 4 consecutive elements of `target`'s rows.
  bool groupsAreRows(Value target) {
    int64_t innermost = cast<AffineDimExpr>(plan.outMap.getResults().back()).getPosition();
    return kforge::innermostStride(cast<MemRefType>(target.getType())) == 1 &&
           copiesAlong(plan.nLoops, plan.extents, innermost);
  }

  void gemm() {
    SmallVector<Value> acc;
    for (int64_t i = 0; i < plan.tileM(); ++i)
      for (int64_t j = 0; j < plan.tileN(); ++j)
        acc.push_back(initialValue(outCoord(i, j)));
    acc = kforge::twoStageKLoop<Share>(
        b, loc, (plan.k + plan.blockK - 1) / plan.blockK, plan.blockK, acc,
        [&](Value kOff, Value stage) {
          if (!plan.asyncCopies)
            return loadShare(kOff);
          return plan.contiguousCopies ? contiguousCopyShare(kOff, stage) : groupedCopyShare(kOff, stage);
        },
        [&](const Share &share, Value stage) { storeShare(share, stage); },
        [&](Value stage, SmallVector<Value> acc) {
          for (int64_t kk = 0; kk < plan.blockK; ++kk)
            acc = multiply(stage, kk, acc);
          return acc;
        });
    Value target = plan.neighbours.result(plan.c);
    bool rows = groupsAreRows(target), masked = plan.masked();
    // (The stored elements are the epilogue's: a rounding to bf16 makes them bf16.)
    auto vec = VectorType::get({kVector}, cast<MemRefType>(target.getType()).getElementType());
    for (int64_t i = 0; i < plan.tileM(); ++i)
      for (int64_t j = 0; j < plan.tileN(); j += kVector) {
        SmallVector<Value> values, oks;
        SmallVector<SmallVector<Value>> indices;
        for (int64_t e = 0; e < kVector; ++e) {
          Coord coord = outCoord(i, j + e);
          SmallVector<Value> at = positions(coord, /*clamped=*/false);
          // (A masked element's epilogue reads at clamped positions; its value is not stored.)
          SmallVector<Value> read = masked ? positions(coord, /*clamped=*/true) : at;
          Value r = coord.row, c = coord.colAdd ? add(coord.col, coord.colAdd) : coord.col;
          values.push_back(kforge::epilogueChainElement(b, loc, plan.neighbours.epilogue, plan.c,
                                                        acc[i * plan.tileN() + j + e], outIndices(read)));
          indices.push_back(outIndices(at));
          oks.push_back(masked ? stored(r, c, at) : Value());
        }
        if (!rows) {
          for (int64_t e = 0; e < kVector; ++e)
            storeIf(oks[e], values[e], target, indices[e]);
          continue;
        }
        auto storeRow = [&] {
          vector::StoreOp::create(b, loc, vector::FromElementsOp::create(b, loc, vec, values), target, indices[0]);
        };
        if (!masked) {
          storeRow();
          continue;
        }
        // Masked: the group whole as a vector where all of it is stored, else element by element.
        Value whole = oks[0];
        for (int64_t e = 1; e < kVector; ++e)
          whole = arith::AndIOp::create(b, loc, whole, oks[e]);
        auto ifOp = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        storeRow();
        b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
        for (int64_t e = 0; e < kVector; ++e)
          storeIf(oks[e], values[e], target, indices[e]);
      }
  }

  SimtImplicitGemmPlan &plan;
  Value thread, threadRow, threadCol, aShared, bShared;
};
} // namespace

LogicalResult kforge::implicitGemmToSimtStaged(RewriterBase &rewriter, linalg::LinalgOp op,
                                               const ImplicitGemmOptions &options, std::string &why) {
  FailureOr<SimtImplicitGemmPlan> plan = planImplicitGemm(op, options, why);
  if (failed(plan))
    return failure();
  ImplicitGemmEmitter(rewriter, *plan).emit();
  kforge::eraseMatmulAndNeighbours(rewriter, plan->op, plan->neighbours);
  return success();
}
