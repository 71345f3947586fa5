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

#include "MatmulNeighbours.h"
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

struct ImplicitGemmPlan {
  linalg::LinalgOp op;
  kforge::ImplicitGemm gemm;
  /// The tile's loop sizes: static, or a partial tile's bound (its block tile), the size then in `sizes`.
  SmallVector<int64_t> extents;
  SmallVector<Value> sizes; ///< Per loop: a partial tile's dynamic size, else null.
  SmallVector<int64_t> mLoops, nLoops, kLoops, serialLoops;
  int64_t m = 1, n = 1, k = 1, serialPositions = 1;
  int64_t blockK = 0, threadRows = 0, threadCols = 0;
  /// The GEMM's rows and columns as the thread grid covers them: whole groups of 4 per thread, at least m (n).
  /// Rows and columns past m and n (and positions past a partial tile's size) are computed from clamped
  /// positions and never stored.
  int64_t mPadded = 0, nPadded = 0;
  /// Whether a tile copy of A (of B) walks M (N) with consecutive threads, else K: through registers, 4
  /// consecutive elements a thread; with asynchronous copies, one element a thread per copy.
  bool aAlongM = false, bAlongN = false;
  /// Tiles copied straight into shared memory, an asynchronous 4-byte copy per element (zero-filled where a
  /// padded read is masked, or past K), instead of through registers.
  bool asyncCopies = false;
  /// Asynchronous copies one element a thread, consecutive threads along each multiplicand's contiguous side
  /// (copy_order contiguous*), instead of 4 consecutive elements a thread.
  bool contiguousCopies = false;
  Value c;
  AffineMap outMap;
  gpu::LaunchOp launch;
  kforge::MatmulNeighbours neighbours;
  int64_t threads() const { return threadRows * threadCols; }
  int64_t tileM() const { return mPadded / threadRows; }
  int64_t tileN() const { return nPadded / threadCols; }
  /// Whether some row, column or position of the tile is masked.
  bool masked() const {
    return mPadded != m || nPadded != n || llvm::any_of(sizes, [](Value size) { return bool(size); });
  }
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

static FailureOr<ImplicitGemmPlan> planImplicitGemm(linalg::LinalgOp op, const kforge::ImplicitGemmOptions &options,
                                                    std::string &why) {
  if (!op.hasPureBufferSemantics()) {
    why = "expected a linalg op on memrefs (after bufferization)";
    return failure();
  }
  FailureOr<kforge::ImplicitGemm> gemm = kforge::analyzeImplicitGemm(op, why);
  if (failed(gemm))
    return failure();
  ImplicitGemmPlan plan;
  plan.op = op;
  plan.gemm = *gemm;
  plan.c = op.getDpsInits()[0];
  plan.outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!getElementTypeOrSelf(plan.c.getType()).isF32() || !plan.gemm.a.getType().isF32() ||
      !plan.gemm.b.getType().isF32()) {
    why = "expected f32 multiplicands and output";
    return failure();
  }
  plan.extents = op.getStaticLoopRanges();
  plan.sizes.assign(plan.extents.size(), Value());
  for (auto [d, extent] : llvm::enumerate(plan.extents)) {
    if (!ShapedType::isDynamic(extent))
      continue;
    // A partial block tile: a parallel loop whose size (the output's) is bounded by its block tile.
    std::optional<unsigned> dim = plan.outMap.getResultPosition(getAffineDimExpr(d, op->getContext()));
    Value size = dim ? kforge::dynamicSize(plan.c, *dim) : Value();
    std::optional<int64_t> bound = size ? kforge::constantUpperBound(size) : std::nullopt;
    if (!bound) {
      why = "loop " + std::to_string(d) +
            " has a dynamic size that is not a partial block tile of the output (bounded by a constant)";
      return failure();
    }
    plan.extents[d] = *bound;
    plan.sizes[d] = size;
  }
  for (int64_t d : options.serialLoops) {
    if (d < 0 || d >= static_cast<int64_t>(plan.extents.size()) || plan.gemm.roles[d] == kforge::GemmRole::K ||
        llvm::is_contained(plan.serialLoops, d)) {
      why = "serial_loops: " + std::to_string(d) + " is not a parallel loop of the op (or is named twice)";
      return failure();
    }
    plan.serialLoops.push_back(d);
    plan.serialPositions *= plan.extents[d];
  }
  for (auto [d, role] : llvm::enumerate(plan.gemm.roles)) {
    int64_t loop = static_cast<int64_t>(d), extent = plan.extents[d];
    if (llvm::is_contained(plan.serialLoops, loop))
      continue;
    switch (role) {
    case kforge::GemmRole::K:
      plan.kLoops.push_back(loop);
      plan.k *= extent;
      break;
    case kforge::GemmRole::M:
      plan.mLoops.push_back(loop);
      plan.m *= extent;
      break;
    case kforge::GemmRole::N:
      plan.nLoops.push_back(loop);
      plan.n *= extent;
      break;
    case kforge::GemmRole::Batch:
      if (extent != 1) {
        why = "loop " + std::to_string(d) + " (" + std::to_string(extent) +
              " wide) is read by both multiplicands or by neither: tile it by 1 or walk it serially (serial_loops)";
        return failure();
      }
      break;
    }
  }
  if (plan.mLoops.empty() || plan.nLoops.empty()) {
    why = std::string("serial_loops leaves the GEMM no ") + (plan.mLoops.empty() ? "row (M)" : "column (N)") + " loop";
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
class ImplicitGemmEmitter {
public:
  ImplicitGemmEmitter(RewriterBase &rewriter, ImplicitGemmPlan plan)
      : b(rewriter), plan(std::move(plan)), loc(this->plan.op.getLoc()), ctx(rewriter.getContext()) {}

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
    if (plan.serialPositions == 1) {
      gemm();
      return;
    }
    auto loop = scf::ForOp::create(b, loc, index(0), index(plan.serialPositions), index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    serial = delinearize(loop.getInductionVar(), plan.serialLoops);
    gemm();
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value apply(AffineExpr e, Value x) { return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, e), x); }
  Value add(Value base, int64_t constant) { return apply(getAffineDimExpr(0, ctx) + constant, base); }

  /// A linearized index as positions along `loops` (innermost last), by their extents.
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> loops) {
    SmallVector<Value> positions;
    int64_t inner = 1;
    for (int64_t d : loops)
      inner *= plan.extents[d];
    AffineExpr x = getAffineDimExpr(0, ctx);
    for (auto [i, d] : llvm::enumerate(loops)) {
      inner /= plan.extents[d];
      AffineExpr e = x.floorDiv(inner);
      positions.push_back(apply(i == 0 ? e : e % plan.extents[d], linear));
    }
    return positions;
  }

  /// `i` at most `extent` - 1.
  Value clampIndex(Value i, int64_t extent) {
    return affine::AffineMinOp::create(
        b, loc, AffineMap::get(1, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(extent - 1, ctx)}, ctx),
        ValueRange{i});
  }

  /// An element of the GEMM: its row, column and K index (null: not asked for), each as a value plus a
  /// constant below 4. Where the value is a multiple of 4 and its side's innermost loop a multiple of 4 long,
  /// the constant moves that loop's position only (4 consecutive elements share one delinearization).
  struct Coord {
    Value row, col, k;
    int64_t rowAdd = 0, colAdd = 0, kAdd = 0;
  };

  /// Every loop's position at `at` (the loops of a side not asked for at 0: the value asked for does not read
  /// them), serial loops at the current step, batch loops at 0. `clamped` (for reads): a row, column or K index
  /// past m, n or K, and a position past a partial tile's size, clamped to the last (valid addresses; what they
  /// give is never stored, or is masked to zero).
  SmallVector<Value> positions(const Coord &at, bool clamped) {
    SmallVector<Value> where(plan.extents.size());
    auto place = [&](Value linear, int64_t constant, ArrayRef<int64_t> loops, int64_t limit, bool padded) {
      if (!linear)
        return;
      bool shift = constant && plan.extents[loops.back()] % kVector == 0;
      if (constant && !shift)
        linear = add(linear, constant);
      if (clamped && padded)
        linear = clampIndex(linear, limit);
      SmallVector<Value> found = delinearize(linear, loops);
      if (shift) {
        found.back() = add(found.back(), constant);
        if (clamped && padded) // (a clamped group start need not be a multiple of 4)
          found.back() = clampIndex(found.back(), plan.extents[loops.back()]);
      }
      for (auto [d, position] : llvm::zip(loops, found))
        where[d] = clamped ? kforge::clampToExtent(b, loc, position, plan.sizes[d]) : position;
    };
    place(at.row, at.rowAdd, plan.mLoops, plan.m, plan.mPadded != plan.m);
    place(at.col, at.colAdd, plan.nLoops, plan.n, plan.nPadded != plan.n);
    place(at.k, at.kAdd, plan.kLoops, plan.k, plan.k % plan.blockK != 0);
    for (auto [d, position] : llvm::zip(plan.serialLoops, serial))
      where[d] = position;
    Value zero;
    for (Value &position : where)
      if (!position)
        position = zero ? zero : (zero = index(0));
    return where;
  }

  /// Whether the element at row `row`, column `col` (its own, a group's constant added; unclamped positions
  /// `at`) is one of the output's.
  Value stored(Value row, Value col, ArrayRef<Value> at) {
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    auto both = [&](Value x, Value bound) {
      ok = arith::AndIOp::create(b, loc, ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, bound));
    };
    if (plan.mPadded != plan.m)
      both(row, index(plan.m));
    if (plan.nPadded != plan.n)
      both(col, index(plan.n));
    for (auto [position, size] : llvm::zip(at, plan.sizes))
      if (size)
        both(position, size);
    return ok;
  }

  /// `value` (computed in the op's body) at loop positions `at`: the body's ops cloned with each input read
  /// through its indexing map and each linalg.index replaced by its position.
  Value evaluate(Value value, ArrayRef<Value> at, DenseMap<Value, Value> &done) {
    if (Value known = done.lookup(value))
      return known;
    Block *body = plan.op.getBlock();
    Value result;
    if (auto arg = dyn_cast<BlockArgument>(value); arg && arg.getOwner() == body) {
      OpOperand *operand = plan.op.getMatchingOpOperand(arg);
      Value source = operand->get();
      if (!isa<MemRefType>(source.getType())) {
        result = source; // a scalar input
      } else {
        SmallVector<Value> indices;
        AffineMap map = plan.op.getMatchingIndexingMap(operand);
        for (AffineExpr expr : map.getResults())
          indices.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, expr), at));
        result = memref::LoadOp::create(b, loc, source, indices);
      }
    } else if (Operation *def = value.getDefiningOp(); !def || def->getBlock() != body) {
      result = value; // defined outside the body
    } else if (auto position = dyn_cast<linalg::IndexOp>(def)) {
      result = at[position.getDim()];
    } else {
      IRMapping mapping;
      for (Value operand : def->getOperands())
        mapping.map(operand, evaluate(operand, at, done));
      Operation *clone = b.clone(*def, mapping);
      for (auto [old, now] : llvm::zip(def->getResults(), clone->getResults()))
        done[old] = now;
      result = clone->getResult(cast<OpResult>(value).getResultNumber());
    }
    done[value] = result;
    return result;
  }

  /// A multiplicand that is an element read (or select(c, read, 0.0)) at loop positions `at`: the memref, its
  /// indices, and the condition under which the read counts (null: always).
  struct Read {
    Value source;
    SmallVector<Value> indices;
    Value valid;
  };
  Read evaluateRead(Value multiplicand, ArrayRef<Value> at, DenseMap<Value, Value> &done) {
    Read read;
    Value value = multiplicand;
    if (auto select = value.getDefiningOp<arith::SelectOp>()) {
      read.valid = evaluate(select.getCondition(), at, done);
      value = select.getTrueValue();
    }
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      OpOperand *operand = plan.op.getMatchingOpOperand(arg);
      read.source = operand->get();
      AffineMap map = plan.op.getMatchingIndexingMap(operand);
      for (AffineExpr expr : map.getResults())
        read.indices.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, expr), at));
      return read;
    }
    auto load = value.getDefiningOp<memref::LoadOp>();
    read.source = evaluate(load.getMemRef(), at, done);
    for (Value index : load.getIndices())
      read.indices.push_back(evaluate(index, at, done));
    return read;
  }

  /// One thread's vector of an operand's K tile: `along` the copy's M or N (4 consecutive rows or columns
  /// from `mn` at K index `kInTile` of the tile), else along K (4 consecutive K indices from `kInTile` of row
  /// or column `mn`).
  struct CopyStep {
    Value kInTile, mn;
  };
  /// Whether the element's K index lies within K (null when K has no partial tile).
  Value withinK(const Coord &at) {
    if (plan.k % plan.blockK == 0)
      return Value();
    Value k = at.kAdd ? add(at.k, at.kAdd) : at.k;
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, k, index(plan.k));
  }

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

  /// The output's indices at loop positions `at`.
  SmallVector<Value> outIndices(ArrayRef<Value> at) {
    SmallVector<Value> indices;
    for (AffineExpr result : plan.outMap.getResults())
      indices.push_back(at[cast<AffineDimExpr>(result).getPosition()]);
    return indices;
  }

  /// Whether 4 consecutive columns of a group are 4 consecutive elements of `target`'s rows.
  bool groupsAreRows(Value target) {
    int64_t innermost = cast<AffineDimExpr>(plan.outMap.getResults().back()).getPosition();
    return kforge::innermostStride(cast<MemRefType>(target.getType())) == 1 &&
           copiesAlong(plan.nLoops, plan.extents, innermost);
  }

  /// Stores `value` at `indices` of `target` where `ok` holds (always when null).
  void storeIf(Value ok, Value value, Value target, ValueRange indices) {
    if (!ok) {
      memref::StoreOp::create(b, loc, value, target, indices);
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, value, target, indices);
  }

  void gemm() {
    SmallVector<Value> acc;
    // The initial values: the fill's, an elementwise init's (a bias), else the output's own (copied into it by
    // bufferization: read at the copy's source).
    Value fill = plan.neighbours.fill ? plan.neighbours.fill.getDpsInputs()[0] : Value();
    Value initial = plan.neighbours.initCopy ? plan.neighbours.initCopy.getSource() : plan.c;
    for (int64_t i = 0; i < plan.tileM(); ++i)
      for (int64_t j = 0; j < plan.tileN(); ++j) {
        if (fill) {
          acc.push_back(fill);
          continue;
        }
        SmallVector<Value> indices = outIndices(positions(outCoord(i, j), /*clamped=*/true));
        acc.push_back(plan.neighbours.initGeneric
                          ? kforge::epilogueElement(b, loc, plan.neighbours.initGeneric, plan.c, Value(), indices)
                          : memref::LoadOp::create(b, loc, initial, indices).getResult());
      }
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
    auto vec = VectorType::get({kVector}, b.getF32Type());
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

  RewriterBase &b;
  ImplicitGemmPlan plan;
  Location loc;
  MLIRContext *ctx;
  Value thread, threadRow, threadCol, aShared, bShared;
  SmallVector<Value> serial; ///< The serial loops' positions in the current step.
};
} // namespace

LogicalResult kforge::implicitGemmToSimtStaged(RewriterBase &rewriter, linalg::LinalgOp op,
                                               const ImplicitGemmOptions &options, std::string &why) {
  FailureOr<ImplicitGemmPlan> plan = planImplicitGemm(op, options, why);
  if (failed(plan))
    return failure();
  ImplicitGemmEmitter(rewriter, *plan).emit();
  kforge::eraseMatmulAndNeighbours(rewriter, plan->op, plan->neighbours);
  return success();
}
