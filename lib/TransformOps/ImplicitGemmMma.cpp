//===- ImplicitGemmMma.cpp - transform.kforge.implicit_gemm_to_mma_sync ---===//
//
// A block's contraction `out + x * y` of 16-bit floats accumulated in f32 (kforge/Transforms/ImplicitGemm.h: a
// convolution read as its implicit GEMM, whatever its layout, stride, dilation or padding; an importer's bf16
// convolution extends its operands to f32 in the body) on tensor cores: warps of mma.sync m16n8k16 over a warp
// grid, fragments read from shared memory by ldmatrix. Each multiplicand's K tile is staged in the layout it is
// contiguous in: rows along K ([mn][k], read by plain ldmatrix) when its contiguous loop is a K loop (NHWC's
// channels, a filter's inputs), else rows along its M or N ([k][mn], read by ldmatrix.trans). Its copy into the
// stage is a 16-byte cp.async of 8 consecutive elements where the layout allows it (its contiguous loop whole
// groups of 8, read at that loop's own index from 16-byte aligned rows, the padding check not depending on it:
// zero-filled where the window leaves the input or K ends), else one element a thread through registers,
// consecutive threads along its contiguous side. Two stages, the next tile's copies in flight while the warps
// multiply; or, where every copy is a cp.async, more (stages - 1 tiles ahead). The fill before the op, an
// elementwise init (a bias) and an elementwise epilogue after it (a rounding to bf16) are taken into the
// accumulators. With wgmma (Hopper), the same copies fill 128-byte swizzled stages of 64 of K, and each
// warpgroup multiplies its 64 rows by its share of the columns with wgmma.mma_async
// (kforge::mma::wgmmaMultiply, shared with matmul_to_mma_sync): no ldmatrix, the accumulators in the same order.
// With tf32, f32 multiplicands both staged along K (the .tf32 form reads no transposed operand) are multiplied
// as TF32 on wgmma: a 16-byte copy is 4 f32 and a swizzled row 32 (copyWidth, rowElements).
//
//===----------------------------------------------------------------------===//

#include "ImplicitGemmAccess.h"
#include "MmaEmitter.h"
#include "Rewrites.h"

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

namespace {
using kforge::mma::kTileK, kforge::mma::kTileM, kforge::mma::kTileN; // mma.sync m16n8k16
constexpr int64_t kPad = 8; ///< Stage rows 16 bytes longer: ldmatrix's 8 rows fall in different banks.
constexpr int64_t kWarpgroupRows = 64; ///< A warpgroup's rows of the block (4 warps of 16)

/// How one multiplicand is staged and copied.
struct Side {
  Value value;          ///< The 16-bit multiplicand in the body (an importer's extension to f32 removed).
  bool kMajor = false;  ///< Stage rows along K ([mn][k]); else along its M or N ([k][mn]).
  bool vectors = false; ///< 16-byte cp.async of 8 consecutive elements along the stage's rows.
};

struct MmaImplicitGemmPlan : kforge::ImplicitGemmPlan {
  int64_t warpRows = 1, warpCols = 1;
  int64_t stages = 2; ///< Above 2: filled by cp.async alone, stages - 1 tiles ahead.
  /// Hopper's warpgroup MMA: each warpgroup (4 warp rows) multiplies 64 rows by all nPadded columns, from
  /// 128-byte swizzled stages of 64 of K (kforge::mma::WgmmaTileLayout), instead of mma.sync.
  bool wgmma = false;
  int64_t wgmmaInFlight = 0; ///< wgmma: each tile's waited for this many tiles later (0 or 1).
  /// f32 multiplicands multiplied as TF32 (wgmma only, both staged along K: m64nNk8 .tf32 has no transpose).
  bool tf32 = false;
  Type operandType;
  /// Elements of a 16-byte copy (8 16-bit, 4 f32) and of a 128-byte swizzled row of a wgmma stage (64, 32).
  int64_t copyWidth() const { return tf32 ? 4 : 8; }
  int64_t rowElements() const { return tf32 ? 32 : 64; }
  Side a, b;
  int64_t threads() const { return 32 * warpRows * warpCols; }
  int64_t warpM() const { return mPadded / warpRows; }
  int64_t warpN() const { return nPadded / warpCols; }
  /// A stage of one side: [mn][k] or [k][mn] with rows padded by 16 bytes (ldmatrix); wgmma: mn rows of 128
  /// swizzled bytes either way (K-major: a row of 64 of K; else 64-row atoms of K, 64 of M or N per row).
  MemRefType stageType(const Side &side, int64_t mn, Attribute space) const {
    SmallVector<int64_t> shape = wgmma         ? SmallVector<int64_t>{stages, mn, rowElements()}
                                 : side.kMajor ? SmallVector<int64_t>{stages, mn, blockK + kPad}
                                               : SmallVector<int64_t>{stages, blockK, mn + kPad};
    return MemRefType::get(shape, operandType, MemRefLayoutAttrInterface(), space);
  }
  int64_t smemBytes() const {
    return kforge::memrefBytes(stageType(a, mPadded, {})) + kforge::memrefBytes(stageType(b, nPadded, {}));
  }
};
} // namespace

/// Whether an offset is a multiple of `width` elements (a copy's): a constant, or an affine.apply whose
/// expression is, whatever its operands (a block's offset: the block's index times its tile).
static bool wholeCopies(OpFoldResult offset, int64_t width) {
  if (std::optional<int64_t> constant = getConstantIntValue(offset))
    return *constant % width == 0;
  auto value = dyn_cast<Value>(offset);
  auto apply = value ? value.getDefiningOp<affine::AffineApplyOp>() : affine::AffineApplyOp();
  return apply && apply.getAffineMap().getNumResults() == 1 &&
         apply.getAffineMap().getResult(0).getLargestKnownDivisor() % width == 0;
}

/// Whether `width` elements (16 bytes) of `memref` from an innermost index that is a multiple of `width` start on
/// 16 bytes: its rows contiguous, every other stride a multiple of `width`, and its offset one (static, or a
/// subview's of such a memref whose innermost offset is a multiple of `width`: wholeCopies). Kernel buffers are
/// 16-byte aligned.
static bool vectorAligned(Value memref, int64_t width) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || failed(type.getStridesAndOffset(strides, offset)) || strides.empty() || strides.back() != 1)
    return false;
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(stride) || stride % width)
      return false;
  if (!ShapedType::isDynamic(offset))
    return offset % width == 0;
  auto subview = memref.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return false;
  return wholeCopies(subview.getMixedOffsets().back(), width) && vectorAligned(subview.getSource(), width);
}

/// How a multiplicand (its contiguous loop `fast`; its own M or N loops `own`) is staged and copied.
static Side planSide(MmaImplicitGemmPlan &plan, Value multiplicand, int64_t fast, ArrayRef<int64_t> own) {
  Side side;
  side.value = kforge::withoutExtension(multiplicand);
  side.kMajor = fast >= 0 && plan.gemm.roles[fast] == kforge::GemmRole::K;
  Value read = kforge::vectorCopyRead(plan.op, side.value, fast, plan.copyWidth());
  if (!read || plan.sizes[fast])
    return side;
  Value source = isa<BlockArgument>(read) ? plan.op.getMatchingOpOperand(cast<BlockArgument>(read))->get()
                                          : read.getDefiningOp<memref::LoadOp>().getMemRef();
  bool innermost = side.kMajor ? fast == plan.kLoops.back() : fast == own.back();
  Operation *sourceDef = source.getDefiningOp();
  bool fromOutside = !sourceDef || !plan.op->isAncestor(sourceDef); // (a memref the body does not compute)
  side.vectors = innermost && fromOutside && vectorAligned(source, plan.copyWidth());
  return side;
}

/// mma.sync's block: whole 16-row tiles per warp row, 16-column pairs per warp column (B's fragments are read
/// two column tiles at a time).
static LogicalResult padForMmaSync(MmaImplicitGemmPlan &plan, std::string &) {
  plan.mPadded = llvm::alignTo(plan.m, kTileM * plan.warpRows);
  plan.nPadded = llvm::alignTo(plan.n, 2 * kTileN * plan.warpCols);
  return success();
}

/// wgmma's block: warp_grid [4 gm, gn] is gm x gn warpgroups, each 64 rows (4 warps of 16) by a gn-th of
/// the columns in one instruction (N at most 256, whole 64-column atoms where B is staged along N, else whole
/// 8-column tiles); one swizzled row of K per tile.
static LogicalResult padForWgmma(MmaImplicitGemmPlan &plan, std::string &why) {
  if (plan.blockK != plan.rowElements()) {
    why = "wgmma takes block_k = " + std::to_string(plan.rowElements()) + " (one 128-byte swizzled row of " +
          (plan.tf32 ? "f32" : "16-bit elements") + " of K per tile), not " + std::to_string(plan.blockK);
    return failure();
  }
  if (plan.warpRows % 4) {
    why = "wgmma takes warp_grid = [4 x warpgroup rows, warpgroup columns] (a warpgroup is 4 warps of 16 rows), "
          "not [" +
          std::to_string(plan.warpRows) + ", " + std::to_string(plan.warpCols) + "]";
    return failure();
  }
  plan.mPadded = kTileM * plan.warpRows;
  plan.nPadded = llvm::alignTo(plan.n, plan.warpCols * (plan.b.kMajor ? kTileN : plan.rowElements()));
  if (plan.m > plan.mPadded || plan.warpN() > 256) {
    why = "wgmma: the block's " + std::to_string(plan.m) + " rows must fit its warpgroups' " +
          std::to_string(plan.mPadded) + " (64 each), and its " + std::to_string(plan.n) + " columns (padded to " +
          std::to_string(plan.nPadded) + ") over " + std::to_string(plan.warpCols) +
          " warpgroup columns one instruction's N each, at most 256";
    return failure();
  }
  return success();
}

static FailureOr<MmaImplicitGemmPlan> planMma(linalg::LinalgOp op, const kforge::ImplicitGemmMmaOptions &options,
                                              std::string &why) {
  FailureOr<kforge::ImplicitGemmPlan> loops = kforge::planImplicitGemmLoops(op, options.serialLoops, why);
  if (failed(loops))
    return failure();
  MmaImplicitGemmPlan plan;
  static_cast<kforge::ImplicitGemmPlan &>(plan) = std::move(*loops);
  Type aType = kforge::withoutExtension(plan.gemm.a).getType(), bType = kforge::withoutExtension(plan.gemm.b).getType();
  plan.tf32 = options.tf32;
  if (options.tf32 && (!getElementTypeOrSelf(plan.c.getType()).isF32() || !aType.isF32() || !bType.isF32())) {
    why = "tf32 multiplies f32 multiplicands into an f32 output";
    return failure();
  }
  if (options.tf32 && !options.wgmma) {
    why = "tf32 on a convolution takes wgmma (the mma.sync path is 16-bit)";
    return failure();
  }
  if (!options.tf32 &&
      (!getElementTypeOrSelf(plan.c.getType()).isF32() || aType != bType || !(aType.isBF16() || aType.isF16()))) {
    why = "expected bf16 or f16 multiplicands (both the same, as read or extended to f32 in the body) and an f32 "
          "output (f32 ones with tf32)";
    return failure();
  }
  plan.operandType = aType;
  // K's order is the GEMM's choice (a sum): a multiplicand's contiguous K loop innermost where it is whole
  // groups of 8 (16-byte copies along NHWC's channels), else K's longest loop (fewer divisions per element).
  auto longest =
      llvm::max_element(plan.kLoops, [&](int64_t x, int64_t y) { return plan.extents[x] < plan.extents[y]; });
  if (longest != plan.kLoops.end())
    kforge::makeInnermostK(plan, *longest);
  // (Not the order a multiplicand holding all of K in one contiguous run lays K out in, NCHW's filter C x KH x KW,
  // to copy it 8 K indices at a time: on an H100 that made the input's element copies dearer, each K index its
  // own divisions, and the UNet and stride-2 3x3 bf16 convolutions 2.2-2.8x slower on wgmma, session 57 call 2.)
  for (int64_t fast : {plan.gemm.bFastLoop, plan.gemm.aFastLoop})
    if (fast >= 0 && plan.gemm.roles[fast] == kforge::GemmRole::K && plan.extents[fast] % plan.copyWidth() == 0)
      kforge::makeInnermostK(plan, fast);
  plan.warpRows = options.warpGrid[0];
  plan.warpCols = options.warpGrid[1];
  plan.blockK = options.blockK;
  plan.wgmma = options.wgmma;
  plan.wgmmaInFlight = options.wgmmaInFlight;
  if (plan.blockK > static_cast<int64_t>(llvm::alignTo(plan.k, kTileK))) {
    why = "block_k (" + std::to_string(plan.blockK) + ") is above K (" + std::to_string(plan.k) + ") rounded up to 16";
    return failure();
  }
  plan.a = planSide(plan, plan.gemm.a, plan.gemm.aFastLoop, plan.mLoops);
  plan.b = planSide(plan, plan.gemm.b, plan.gemm.bFastLoop, plan.nLoops);
  if (plan.tf32 && !(plan.a.kMajor && plan.b.kMajor)) {
    why = "tf32 on wgmma reads both multiplicands K-major (its .tf32 form has no transpose): each must be "
          "contiguous along a K loop (NHWC's input, an FHWC filter; channels_last copies NCHW and FCHW so)";
    return failure();
  }
  if (plan.wgmma ? failed(padForWgmma(plan, why)) : failed(padForMmaSync(plan, why)))
    return failure();
  plan.stages = options.stages;
  if (plan.stages > 2 && !(plan.a.vectors && plan.b.vectors)) {
    why = "stages (" + std::to_string(plan.stages) +
          ") above 2 are filled by cp.async alone: both multiplicands "
          "must be copied in 16-byte vectors (contiguous along a loop of whole groups of 8, read at its own index "
          "from aligned rows, any padding check independent of it); " +
          std::string(plan.a.vectors ? "B" : "A") + " is copied element by element";
    return failure();
  }
  if (failed(kforge::stagedSimtBlock(op, plan.threads(), plan.smemBytes(), /*initOps=*/true, "the op", "the output",
                                     plan.launch, plan.neighbours, why)))
    return failure();
  return plan;
}

namespace {
class MmaImplicitGemmEmitter : kforge::ImplicitGemmAccess {
public:
  MmaImplicitGemmEmitter(RewriterBase &rewriter, MmaImplicitGemmPlan &plan)
      : ImplicitGemmAccess(rewriter, plan, plan.copyWidth()), plan(plan) {}

  void emit() {
    b.setInsertionPoint(plan.neighbours.epilogue.empty() ? plan.op.getOperation()
                                                         : plan.neighbours.epilogue.back().getOperation());
    AffineExpr t = getAffineDimExpr(0, ctx);
    thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    lane = apply(t % 32, thread);
    rowBase = apply(t.floorDiv(32 * plan.warpCols) * plan.warpM(), thread);
    colBase = apply((t.floorDiv(32) % plan.warpCols) * plan.warpN(), thread);
    if (plan.wgmma) { // warpgroup g: row (g / columns) of 64, column g % columns; its warp q: 16 rows from 16 q
      rowBase = apply(t.floorDiv(128 * plan.warpCols) * 64 + (t.floorDiv(32) % 4) * kTileM, thread);
      colBase = apply((t.floorDiv(128) % plan.warpCols) * plan.warpN(), thread);
    }
    Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    SmallVector<Value> buffers = kforge::sharedBuffers(
        b, loc, plan.launch,
        {plan.stageType(plan.a, plan.mPadded, workgroup), plan.stageType(plan.b, plan.nPadded, workgroup)},
        /*swizzled=*/plan.wgmma);
    aShared = buffers[0];
    bShared = buffers[1];
    forEachSerialPosition([&] { gemm(); });
  }

private:
  int64_t mTiles() const { return plan.warpM() / kTileM; }
  int64_t nTiles() const { return plan.warpN() / kTileN; }
  Value apply2(AffineExpr e, Value x, Value y) {
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, e), ValueRange{x, y});
  }
  Value sum(Value x, Value y) { return apply2(getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx), x, y); }
  Value minIndex(Value x, int64_t most) {
    return affine::AffineMinOp::create(
        b, loc, AffineMap::get(1, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(most, ctx)}, ctx), ValueRange{x});
  }

  /// Where the element at (row, col) of a side's [mn][k] or [k][mn] tile goes in its stage: there (mma.sync),
  /// or (wgmma) at its 128-byte swizzled place, E elements a 16-byte chunk (8 16-bit, 4 f32) and R a row (64,
  /// 32): K-major, row mn and chunk (k / E) ^ (mn % 8); else row R (mn / R) + k (R-row atoms of K) and chunk
  /// ((mn % R) / E) ^ (k % 8). An E-element vector starting on a chunk (a copy's) moves as one.
  std::pair<Value, Value> stagePlace(const Side &side, Value row, Value col) {
    if (!plan.wgmma)
      return {row, col};
    int64_t e = plan.copyWidth(), rowElements = plan.rowElements();
    AffineExpr r = getAffineDimExpr(0, ctx), c = getAffineDimExpr(1, ctx);
    Value mn = side.kMajor ? row : col, k = side.kMajor ? col : row;
    Value chunk = side.kMajor ? apply(r.floorDiv(e), k) : apply((r % rowElements).floorDiv(e), mn);
    Value phase = apply(r % 8, side.kMajor ? mn : k);
    Value xored = arith::XOrIOp::create(b, loc, chunk, phase);
    Value placeRow = side.kMajor ? mn : apply2(c.floorDiv(rowElements) * rowElements + r, k, mn);
    return {placeRow, apply2(r * e + c % e, xored, side.kMajor ? k : mn)};
  }

  /// wgmma's tensor cores read shared memory through the async proxy: the block's writes are made visible to
  /// it before the barrier that publishes them.
  void fenceForWgmma() {
    if (plan.wgmma)
      NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_shared,
                                 NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  }

  /// The thread's copies of a K tile: the asynchronous ones' group, and the elements it holds in registers
  /// with where they go.
  struct Share {
    Value copies;
    SmallVector<Value> elements;
    SmallVector<std::pair<bool, SmallVector<Value>>> targets; ///< (A's stage?, [row, col] in the stage)
  };

  /// Row (K index when `kMajor` is false) and column of the thread's unit `first` + thread of a rows x cols
  /// tile of `width`-element units along its rows; past the tile (a last round the threads do not fill), its
  /// last unit again (the same value to the same place).
  std::pair<Value, Value> unitPosition(int64_t first, int64_t rows, int64_t cols, int64_t width) {
    AffineExpr t = getAffineDimExpr(0, ctx);
    int64_t perRow = cols / width, last = rows * perRow - 1;
    Value v = first + plan.threads() - 1 > last ? minIndex(apply(t + first, thread), last) : apply(t + first, thread);
    return {apply(t.floorDiv(perRow), v), apply((t % perRow) * width, v)};
  }

  /// The thread's 16-byte copies of one multiplicand's tile at `kOff` into `stage`: vectors of 8 along the
  /// stage's rows, zero-filled where the read is masked or K has ended. A vector's start stays a multiple of 8
  /// where it is clamped (a row past m or n, a K past its end: never stored, or zero-filled).
  void copyVectors(bool isA, Value kOff, Value stage, SmallVector<Value> &tokens) {
    const Side &side = isA ? plan.a : plan.b;
    int64_t width = plan.copyWidth();
    int64_t mn = isA ? plan.mPadded : plan.nPadded, mnReal = isA ? plan.m : plan.n;
    int64_t rows = side.kMajor ? mn : plan.blockK, cols = side.kMajor ? plan.blockK : mn;
    for (int64_t first = 0; first < rows * cols / width; first += plan.threads()) {
      auto [row, col] = unitPosition(first, rows, cols, width);
      Value kInTile = side.kMajor ? col : row, position = side.kMajor ? row : col;
      Value kIndex = plan.k % plan.blockK ? sum(kInTile, kOff) : Value();
      Coord at = kIndex ? Coord() : kTileCoord(kInTile, kOff);
      if (kIndex)
        at.k = side.kMajor ? minIndex(kIndex, plan.k - width) : kIndex;
      if (!side.kMajor && mn != mnReal)
        position = minIndex(position, mnReal - width);
      (isA ? at.row : at.col) = position;
      DenseMap<Value, Value> done;
      Read read = evaluateRead(side.value, positions(at, /*clamped=*/true), done);
      Value valid = read.valid;
      if (plan.k % plan.blockK) {
        Value within = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kIndex, index(plan.k));
        valid = valid ? arith::AndIOp::create(b, loc, valid, within).getResult() : within;
      }
      Value elements = valid ? arith::SelectOp::create(b, loc, valid, index(width), index(0)).getResult() : Value();
      auto [placeRow, placeCol] = stagePlace(side, row, col);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(b, loc, isA ? aShared : bShared,
                                                        ValueRange{stage, placeRow, placeCol}, read.source,
                                                        read.indices, b.getIndexAttr(width), elements,
                                                        /*bypassL1=*/b.getUnitAttr()));
    }
  }

  /// The thread's elements of one multiplicand's tile at `kOff`, one a thread per round, consecutive threads
  /// along the stage's rows (the multiplicand's contiguous side: a warp's loads on consecutive elements where the
  /// layout has them); zero past K. (H100, session 56: 8 consecutive elements a thread, sharing one
  /// delinearization and stored as one vector, made the UNet 3x3's best schedule 0.297 -> 0.553 ms on both sides,
  /// 0.585 on the filter's side alone.)
  void loadElements(bool isA, Value kOff, Share &share) {
    const Side &side = isA ? plan.a : plan.b;
    int64_t mn = isA ? plan.mPadded : plan.nPadded;
    int64_t rows = side.kMajor ? mn : plan.blockK, cols = side.kMajor ? plan.blockK : mn;
    for (int64_t first = 0; first < rows * cols; first += plan.threads()) {
      auto [row, col] = unitPosition(first, rows, cols, 1);
      Coord at = kTileCoord(side.kMajor ? col : row, kOff); // (K's tile start delinearized once per tile)
      (isA ? at.row : at.col) = side.kMajor ? row : col;
      DenseMap<Value, Value> done;
      Value v = evaluate(side.value, positions(at, /*clamped=*/true), done);
      if (Value within = withinK(at))
        v = arith::SelectOp::create(b, loc, within, v,
                                    arith::ConstantOp::create(b, loc, b.getFloatAttr(plan.operandType, 0.0)));
      share.elements.push_back(v);
      share.targets.push_back({isA, {row, col}});
    }
  }

  Share load(Value kOff, Value stage) {
    Share share;
    SmallVector<Value> tokens;
    for (bool isA : {true, false}) {
      if ((isA ? plan.a : plan.b).vectors)
        copyVectors(isA, kOff, stage, tokens);
      else
        loadElements(isA, kOff, share);
    }
    if (!tokens.empty())
      share.copies = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
    return share;
  }

  void store(const Share &share, Value stage) {
    if (share.copies) // (the barrier after the store covers the block's copies)
      nvgpu::DeviceAsyncWaitOp::create(b, loc, share.copies, b.getI32IntegerAttr(0));
    for (auto [element, target] : llvm::zip(share.elements, share.targets)) {
      auto [row, col] = stagePlace(target.first ? plan.a : plan.b, target.second[0], target.second[1]);
      memref::StoreOp::create(b, loc, element, target.first ? aShared : bShared, ValueRange{stage, row, col});
    }
    fenceForWgmma();
  }

  /// Four 8x8 matrices of 16-bit elements from the stage (lane l gives the address of row l % 8 of matrix
  /// l / 8), as mma.sync's four 32-bit registers.
  SmallVector<Value> ldmatrix(Value buffer, Value stage, Value row, Value col, bool transpose) {
    auto type = VectorType::get({4, 2}, plan.operandType);
    Value quad = nvgpu::LdMatrixOp::create(b, loc, type, buffer, ValueRange{stage, row, col}, b.getBoolAttr(transpose),
                                           b.getI32IntegerAttr(4));
    SmallVector<Value> regs;
    for (int64_t q = 0; q < 4; ++q) {
      Value pair = vector::ExtractOp::create(b, loc, quad, ArrayRef<int64_t>{q});
      if (plan.operandType.isBF16()) { // (nvvm.mma.sync takes a bf16 pair as an i32, an f16 pair as it is)
        Value asInt = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pair);
        pair = vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0});
      }
      regs.push_back(pair);
    }
    return regs;
  }

  /// A's fragment of the warp's row tile i at K `kk` of the stage: matrices (rows 0-7, K 0-7), (8-15, 0-7),
  /// (0-7, 8-15), (8-15, 8-15): a0a1, a2a3, a4a5, a6a7. Staged [k][m], the same matrices transposed.
  SmallVector<Value> fragmentA(Value stage, int64_t i, int64_t kk) {
    AffineExpr l = getAffineDimExpr(0, ctx), base = getAffineDimExpr(1, ctx);
    int64_t tileRow = i * kTileM;
    if (plan.a.kMajor)
      return ldmatrix(aShared, stage, apply2(base + tileRow + l % 8 + (l.floorDiv(8) % 2) * 8, lane, rowBase),
                      apply(l.floorDiv(16) * 8 + kk, lane), /*transpose=*/false);
    return ldmatrix(aShared, stage, apply(l % 8 + l.floorDiv(16) * 8 + kk, lane),
                    apply2(base + tileRow + (l.floorDiv(8) % 2) * 8, lane, rowBase), /*transpose=*/true);
  }

  /// B's fragments (b0b1, b2b3) of the warp's column tiles j and j + 1 at K `kk` of the stage.
  std::pair<SmallVector<Value>, SmallVector<Value>> fragmentsB(Value stage, int64_t j, int64_t kk) {
    AffineExpr l = getAffineDimExpr(0, ctx), base = getAffineDimExpr(1, ctx);
    int64_t tileCol = j * kTileN;
    SmallVector<Value> regs;
    if (plan.b.kMajor) // [n][k]: matrices (columns 0-7, K 0-7), (0-7, K 8-15), (8-15, K 0-7), (8-15, K 8-15)
      regs = ldmatrix(bShared, stage, apply2(base + tileCol + l % 8 + l.floorDiv(16) * 8, lane, colBase),
                      apply((l.floorDiv(8) % 2) * 8 + kk, lane), /*transpose=*/false);
    else // [k][n]: matrices (K 0-7, columns 0-7), (K 8-15, 0-7), (K 0-7, 8-15), (K 8-15, 8-15), transposed
      regs = ldmatrix(bShared, stage, apply(l % 8 + (l.floorDiv(8) % 2) * 8 + kk, lane),
                      apply2(base + tileCol + l.floorDiv(16) * 8, lane, colBase), /*transpose=*/true);
    return {{regs[0], regs[1]}, {regs[2], regs[3]}};
  }

  /// One step of 16 along K: the warp's fragments, then every (i, j) tile's mma.sync.
  SmallVector<Value> multiply(Value stage, int64_t kk, ArrayRef<Value> acc) {
    SmallVector<SmallVector<Value>> aRegs, bRegs;
    for (int64_t i = 0; i < mTiles(); ++i)
      aRegs.push_back(fragmentA(stage, i, kk));
    for (int64_t j = 0; j < nTiles(); j += 2) {
      auto [first, second] = fragmentsB(stage, j, kk);
      bRegs.push_back(first);
      bRegs.push_back(second);
    }
    auto ptxType = plan.operandType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    SmallVector<Value> next;
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        llvm::append_range(next, kforge::mma::mmaSync(b, loc, aRegs[i], bRegs[j], acc.slice((i * nTiles() + j) * 4, 4),
                                                      ptxType, kTileK));
    return next;
  }

  /// One staged tile: the warps' mma.sync steps of 16 along K, or (wgmma) the warpgroup's wgmma.mma_async on
  /// its 64 rows of A and its columns of B (each 128-byte rows of the stage: K-major, its rows or columns; else
  /// their 64-row atoms of K).
  SmallVector<Value> multiplyTile(Value stage, SmallVector<Value> acc) {
    if (!plan.wgmma) {
      for (int64_t kk = 0; kk < plan.blockK; kk += kTileK)
        acc = multiply(stage, kk, acc);
      return acc;
    }
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
    int64_t rowBytes = 128;
    auto address = [&](Value buffer, int64_t rows, Value part, int64_t partRows) -> Value {
      Value bytes = apply2((d0 * rows + d1 * partRows) * rowBytes, stage, part);
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), sum(base, bytes));
    };
    kforge::mma::WgmmaTileLayout layout;
    layout.n = plan.warpN();
    layout.blockK = plan.blockK;
    layout.instructionK = plan.tf32 ? 8 : kTileK; // (32 bytes of K either way)
    layout.aMMajor = !plan.a.kMajor;
    layout.bKMajor = plan.b.kMajor;
    layout.type = plan.tf32                   ? NVVM::WGMMATypes::tf32
                  : plan.operandType.isBF16() ? NVVM::WGMMATypes::bf16
                                              : NVVM::WGMMATypes::f16;
    layout.inFlight = plan.wgmmaInFlight;
    Value warpgroupRow = apply(d0.floorDiv(128 * plan.warpCols), thread);
    Value warpgroupCol = apply(d0.floorDiv(128) % plan.warpCols, thread);
    return kforge::mma::wgmmaMultiply(b, loc, layout, address(aShared, plan.mPadded, warpgroupRow, kWarpgroupRows),
                                      address(bShared, plan.nPadded, warpgroupCol, plan.warpN()), acc);
  }

  /// Accumulator r of tile (i, j) is the GEMM's element (row g + 8 (r / 2), column 2t + r % 2) of the tile,
  /// g = lane / 4, t = lane % 4: its Coord (the pair's second element as the first's column plus 1).
  Coord accCoord(int64_t i, int64_t j, int64_t r) {
    AffineExpr l = getAffineDimExpr(0, ctx), base = getAffineDimExpr(1, ctx);
    Coord at;
    at.row = apply2(base + i * kTileM + l.floorDiv(4) + 8 * (r / 2), lane, rowBase);
    at.col = apply2(base + j * kTileN + (l % 4) * 2, lane, colBase);
    at.colAdd = r % 2;
    return at;
  }

  /// The K loop over S = stages stages filled by cp.async: tiles 0 .. S - 2 in flight before the loop; iteration
  /// t waits for tile t (S - 2 groups may stay pending), meets the block at a barrier (tile t is visible; every
  /// warp is done with tile t - 1), issues tile t + S - 1 into tile t - 1's stage (the last S - 1 iterations
  /// reload the last tile into stages nothing reads again: no branch) and multiplies tile t.
  SmallVector<Value> asyncKLoop(ArrayRef<Value> init) {
    // (A tile's wgmma in flight still reads its stage: the copies run one tile less ahead.)
    int64_t tiles = llvm::divideCeil(plan.k, plan.blockK), ahead = plan.stages - 1 - plan.wgmmaInFlight;
    Value group;
    auto issue = [&](Value kOff, Value stage) {
      SmallVector<Value> tokens;
      copyVectors(/*isA=*/true, kOff, stage, tokens);
      copyVectors(/*isA=*/false, kOff, stage, tokens);
      group = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
    };
    for (int64_t s = 0; s < ahead; ++s)
      issue(index(std::min(s, tiles - 1) * plan.blockK), index(s));
    // nvgpu.device_async_wait names a group, but it lowers to cp.async.wait_group N, which counts the thread's
    // pending groups: the prologue's last group stands for whichever group the count reaches.
    Value prologueGroup = group;
    auto loop = scf::ForOp::create(b, loc, index(0), index(tiles), index(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      AffineExpr t = getAffineDimExpr(0, ctx);
      Value tile = loop.getInductionVar();
      nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, b.getI32IntegerAttr(ahead - 1));
      fenceForWgmma();
      gpu::BarrierOp::create(b, loc);
      Value next = affine::AffineMinOp::create(
          b, loc,
          AffineMap::get(1, 0, {(t + ahead) * plan.blockK, getAffineConstantExpr((tiles - 1) * plan.blockK, ctx)}, ctx),
          ValueRange{tile});
      issue(next, apply((t + ahead) % plan.stages, tile));
      Value stage = apply(t % plan.stages, tile);
      scf::YieldOp::create(b, loc, multiplyTile(stage, SmallVector<Value>(loop.getRegionIterArgs())));
    }
    // No copy may still be writing shared memory when the block's threads leave.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, b.getI32IntegerAttr(0));
    return afterLoop(loop);
  }

  /// The K loop's results once every wgmma has finished.
  SmallVector<Value> afterLoop(scf::ForOp loop) {
    if (plan.wgmmaInFlight)
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(0));
    return SmallVector<Value>(loop.getResults());
  }

  void gemm() {
    SmallVector<Value> acc;
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        for (int64_t r = 0; r < 4; ++r)
          acc.push_back(initialValue(accCoord(i, j, r)));
    if (plan.stages > 2)
      acc = asyncKLoop(acc);
    else
      acc = kforge::twoStageKLoop<Share>(
          b, loc, llvm::divideCeil(plan.k, plan.blockK), plan.blockK, acc,
          [&](Value kOff, Value stage) {
            // (A cp.async copy goes into the stage the previous tile's wgmma, still in flight, may be reading:
            // wait for it first. Element copies go in after this tile's wgmma were issued and waited down to
            // one group, when the previous tile's are done.)
            if (plan.wgmmaInFlight && (plan.a.vectors || plan.b.vectors))
              NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(0));
            return load(kOff, stage);
          },
          [&](const Share &share, Value stage) { store(share, stage); },
          [&](Value stage, SmallVector<Value> acc) { return multiplyTile(stage, std::move(acc)); });
    if (plan.stages == 2 && plan.wgmmaInFlight)
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(0));
    Value target = plan.neighbours.result(plan.c);
    bool masked = plan.masked();
    for (int64_t i = 0; i < mTiles(); ++i)
      for (int64_t j = 0; j < nTiles(); ++j)
        for (int64_t r = 0; r < 4; ++r) {
          Coord coord = accCoord(i, j, r);
          SmallVector<Value> at = positions(coord, /*clamped=*/false);
          // (A masked element's epilogue reads at clamped positions; its value is not stored.)
          SmallVector<Value> read = masked ? positions(coord, /*clamped=*/true) : at;
          Value value = kforge::epilogueChainElement(b, loc, plan.neighbours.epilogue, plan.c,
                                                     acc[(i * nTiles() + j) * 4 + r], outIndices(read));
          Value col = coord.colAdd ? add(coord.col, coord.colAdd) : coord.col;
          storeIf(masked ? stored(coord.row, col, at) : Value(), value, target, outIndices(at));
        }
  }

  MmaImplicitGemmPlan &plan;
  Value thread, lane, rowBase, colBase, aShared, bShared;
};
} // namespace

LogicalResult kforge::implicitGemmToMmaSync(RewriterBase &rewriter, linalg::LinalgOp op,
                                            const ImplicitGemmMmaOptions &options, std::string &why) {
  FailureOr<MmaImplicitGemmPlan> plan = planMma(op, options, why);
  if (failed(plan))
    return failure();
  MmaImplicitGemmEmitter(rewriter, *plan).emit();
  kforge::eraseMatmulAndNeighbours(rewriter, plan->op, plan->neighbours);
  return success();
}
