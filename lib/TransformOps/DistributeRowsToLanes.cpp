//===- DistributeRowsToLanes.cpp - transform.kforge.distribute_rows_to_lanes ===//
//
// A thread's row program spread over lanes: cyclic (or vector-wide) columns per lane, reductions as per-lane
// partials combined by shuffles (and, beyond a warp, over the block), a layernorm's moments in one round. See
// the op's description in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "Rewrites.h"

#include "kforge/Transforms/RowMoments.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

/// The gpu.subgroup_reduce kind that combines partials of a reduction whose combiner is `combiner`.
static std::optional<gpu::AllReduceOperation> laneCombiner(Operation *combiner) {
  if (isa<arith::AddFOp, arith::AddIOp>(combiner))
    return gpu::AllReduceOperation::ADD;
  if (isa<arith::MulFOp, arith::MulIOp>(combiner))
    return gpu::AllReduceOperation::MUL;
  if (isa<arith::MaximumFOp>(combiner))
    return gpu::AllReduceOperation::MAXIMUMF;
  if (isa<arith::MinimumFOp>(combiner))
    return gpu::AllReduceOperation::MINIMUMF;
  if (isa<arith::MaxNumFOp>(combiner))
    return gpu::AllReduceOperation::MAXNUMF;
  if (isa<arith::MinNumFOp>(combiner))
    return gpu::AllReduceOperation::MINNUMF;
  return std::nullopt;
}

/// How a row reduction's partials combine: within a lane (its vector's partials) and over the lanes.
struct RowReductionKind {
  vector::CombiningKind inLane;
  gpu::AllReduceOperation overLanes;
};

/// The single combiner op of a one-output linalg reduction, if its init is a fill with the combiner's neutral
/// element (partials that each start there combine exactly).
static FailureOr<RowReductionKind> rowReductionKind(linalg::LinalgOp op, std::string &why) {
  if (op.getNumDpsInits() != 1) {
    why = "a row reduction with more than one output";
    return failure();
  }
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) || combiners.size() != 1) {
    why = "a row reduction whose combiner is not a single op";
    return failure();
  }
  std::optional<gpu::AllReduceOperation> kind = laneCombiner(combiners.front());
  std::optional<vector::CombiningKind> inLane = linalg::getCombinerOpKind(combiners.front());
  if (!kind || !inLane) {
    why = "a row reduction whose combiner (" + combiners.front()->getName().getStringRef().str() +
          ") gpu.subgroup_reduce has no kind for";
    return failure();
  }
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners.front());
  Attribute value;
  if (!fill || !neutral || !matchPattern(fill.getInputs()[0], m_Constant(&value)) || value != *neutral) {
    why = "a row reduction that does not start from its combiner's neutral element (a linalg.fill)";
    return failure();
  }
  return RowReductionKind{*inLane, *kind};
}

/// Merges each lane's (sum, centred sum of squares) with its butterfly partners' over `width` lanes (offsets 1,
/// 2, ... width / 2), each side holding `count` elements at offset 1 (twice as many at each next offset): Chan
/// et al.'s pairwise update for equal counts n, q = q_a + q_b + ((s_b - s_a) / n)^2 n / 2, s = s_a + s_b. Both
/// partners compute the same values (the operations are symmetric in a and b), so every lane ends with the
/// totals over its group of `width` lanes.
static void mergeMomentsByShuffles(OpBuilder &b, Location loc, Value &sum, Value &squares, int64_t width,
                                   int64_t count) {
  Type f = sum.getType();
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult(); };
  auto real = [&](double v) { return arith::ConstantOp::create(b, loc, FloatAttr::get(f, v)).getResult(); };
  for (int64_t offset = 1; offset < width; offset *= 2, count *= 2) {
    Value otherSum = gpu::ShuffleOp::create(b, loc, sum, i32(offset), i32(32), gpu::ShuffleMode::XOR).getShuffleResult();
    Value otherSquares =
        gpu::ShuffleOp::create(b, loc, squares, i32(offset), i32(32), gpu::ShuffleMode::XOR).getShuffleResult();
    Value delta = arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, otherSum, sum), real(double(count)));
    Value spread = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, delta, delta), real(count / 2.0));
    squares = arith::AddFOp::create(b, loc, arith::AddFOp::create(b, loc, squares, otherSquares), spread);
    sum = arith::AddFOp::create(b, loc, sum, otherSum);
  }
}

/// Beyond a warp, after each warp's merge: lane 0 of each warp writes the warp's (sum, squares) to shared memory
/// (two buffers of one value per warp, allocated at the start of the function that holds `forall`, which the
/// GPU mapping turns into the kernel's workgroup memory); after one barrier every lane reads pair (lane mod
/// warps) and the `warps` pairs, `count` elements each, merge by shuffles. Each buffer is written once per block
/// (one row per block), so one barrier suffices.
static void mergeMomentsOverWarps(RewriterBase &rewriter, Location loc, scf::ForallOp forall, Value lane,
                                  int64_t warps, Value &sum, Value &squares, int64_t count) {
  auto func = forall->getParentOfType<FunctionOpInterface>();
  auto bufferType = MemRefType::get({warps}, sum.getType(), MemRefLayoutAttrInterface(),
                                    gpu::AddressSpaceAttr::get(rewriter.getContext(), gpu::AddressSpace::Workgroup));
  Value sums, squareSums;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&func.getFunctionBody().front());
    sums = memref::AllocOp::create(rewriter, loc, bufferType);
    squareSums = memref::AllocOp::create(rewriter, loc, bufferType);
  }
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); };
  Value laneInWarp = arith::RemUIOp::create(rewriter, loc, lane, index(32));
  Value warp = arith::DivUIOp::create(rewriter, loc, lane, index(32));
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, laneInWarp, index(0));
  auto ifFirst = scf::IfOp::create(rewriter, loc, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(ifFirst.thenBlock());
    memref::StoreOp::create(rewriter, loc, sum, sums, ValueRange{warp});
    memref::StoreOp::create(rewriter, loc, squares, squareSums, ValueRange{warp});
  }
  gpu::BarrierOp::create(rewriter, loc);
  Value slot = arith::RemUIOp::create(rewriter, loc, laneInWarp, index(warps));
  sum = memref::LoadOp::create(rewriter, loc, sums, ValueRange{slot});
  squares = memref::LoadOp::create(rewriter, loc, squareSums, ValueRange{slot});
  mergeMomentsByShuffles(rewriter, loc, sum, squares, warps, count);
}

/// The lane's sum of squared deviations of its columns `slices` (one per column of its vector, shaped and
/// indexed like `rowSum`'s input and init) from `mean`.
static Value laneSquaredDeviations(OpBuilder &b, Location loc, linalg::GenericOp rowSum, ArrayRef<Value> slices,
                                   Value mean) {
  auto initType = cast<RankedTensorType>(rowSum.getResult(0).getType());
  Value total;
  for (Value slice : slices) {
    // The lane's init is one element per row (1x...x1), whatever the forall's row-sum init was.
    SmallVector<int64_t> shape(initType.getRank(), 1);
    auto type = RankedTensorType::get(shape, initType.getElementType());
    Value zero = arith::ConstantOp::create(b, loc, FloatAttr::get(type.getElementType(), 0.0));
    Value init = linalg::FillOp::create(b, loc, zero, tensor::EmptyOp::create(b, loc, shape, type.getElementType()).getResult())
                     .getResult(0);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{slice}, ValueRange{init}, rowSum.getIndexingMapsArray(),
        rowSum.getIteratorTypesArray(), [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value deviation = arith::SubFOp::create(nb, nl, args[0], mean);
          Value squared = arith::MulFOp::create(nb, nl, deviation, deviation);
          linalg::YieldOp::create(nb, nl, ValueRange{arith::AddFOp::create(nb, nl, squared, args[1]).getResult()});
        });
    SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
    Value part = tensor::ExtractOp::create(b, loc, generic.getResult(0), zeros);
    total = total ? arith::AddFOp::create(b, loc, total, part).getResult() : part;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// The checks: what the row program is, before any change
//===----------------------------------------------------------------------===//

namespace {
/// The row program of a thread-level forall, as the checks found it.
struct RowProgram {
  int64_t rows = 0;       ///< The forall's iterations.
  int64_t width = 0;      ///< N: the row ops' last loop.
  int64_t stride = 0;     ///< lanes x vector: lane l owns columns l * vector + j + k * stride (j < vector).
  int64_t perLane = 0;    ///< Columns of a lane's slice: N / stride (ragged: the most any lane has, N / stride rounded up).
  /// N is not a multiple of stride: the first N % stride lanes own one column more than the others (each lane's
  /// slice is sized by its own count, a dynamic size: the loops over it are bounded, nothing is masked).
  bool ragged = false;
  bool blockWide = false; ///< More than 32 lanes: reductions over the whole block.
  /// With `moments`: the row sums whose centred values are squared and summed, each with its chain, and the
  /// squares that only that chain used (not cloned: the moments' merge gives the sum of squares).
  DenseMap<Operation *, kforge::RowMoments> momentsOfSum;
  DenseSet<Operation *> skippedSquares;
};
} // namespace

/// Whether an inserted tensor is a row statistic (1x...x1, e.g. a row sum).
static bool isStatistic(RankedTensorType type) {
  return llvm::all_of(type.getShape(), [](int64_t d) { return d == 1; });
}

/// Whether `op` is a row op: a linalg op on tensors whose last loop has `width` iterations and the others one.
static bool isRowOp(Operation *op, int64_t width) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics())
    return false;
  SmallVector<int64_t> loops = linalgOp.getStaticLoopRanges();
  return !loops.empty() && loops.back() == width &&
         llvm::all_of(ArrayRef(loops).drop_back(), [](int64_t r) { return r == 1; });
}

/// The row width: the last loop of the linalg ops over a row (their other loops have one iteration); 0 when
/// there is none.
static FailureOr<int64_t> rowWidth(scf::ForallOp forall, std::string &why) {
  int64_t width = 0;
  for (Operation &op : forall.getBody()->without_terminator()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics() || linalgOp.getNumLoops() < 2)
      continue;
    SmallVector<int64_t> loops = linalgOp.getStaticLoopRanges();
    if (loops.back() <= 1 || llvm::any_of(ArrayRef(loops).drop_back(), [](int64_t r) { return r != 1; }))
      continue;
    if (width && loops.back() != width)
      return kforge::reject(why,
                            "the row ops have different widths (" + Twine(width) + ", " + Twine(loops.back()) + ")");
    width = loops.back();
  }
  return width;
}

/// What the forall inserts: whole unit-stride rows (1x...xN), or row statistics (1x...x1).
static LogicalResult checkInserts(scf::ForallOp forall, int64_t width, std::string &why) {
  for (Operation &op : forall.getTerminator().getYieldingOps()) {
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(op);
    RankedTensorType type = insert ? insert.getSourceType() : RankedTensorType();
    if (!insert || !type.hasStaticShape() || type.getRank() < 1 ||
        !llvm::all_of(insert.getStaticStrides(), [](int64_t s) { return s == 1; }) ||
        !(isStatistic(type) || (type.getShape().back() == width &&
                                llvm::all_of(type.getShape().drop_back(), [](int64_t d) { return d == 1; }))))
      return kforge::reject(why, "expected the forall to insert whole unit-stride rows (1x...xN) or row statistics "
                                 "(1x...x1)");
  }
  return success();
}

/// With `moments`: the row sums whose centred values are squared and summed, each with its chain.
static LogicalResult matchMoments(scf::ForallOp forall, RowProgram &program, std::string &why) {
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (!isRowOp(&op, program.width))
      continue;
    std::optional<kforge::RowMoments> m = kforge::matchRowMoments(cast<linalg::LinalgOp>(&op));
    if (!m || !isRowOp(m->sumSquares, program.width) || (m->square && !isRowOp(m->square, program.width)) ||
        !isRowOp(m->centre, program.width))
      continue;
    program.momentsOfSum[&op] = *m;
    if (m->square)
      program.skippedSquares.insert(m->square);
  }
  if (program.momentsOfSum.empty())
    return kforge::reject(why, "moments: the row program has no row sum whose centred values (x - sum / N) are "
                               "squared and summed (a layernorm's mean and variance)");
  return success();
}

/// The forall's row program, checked: one induction variable from 0 with step 1, a static number of rows (one
/// beyond a warp), row ops of one width that `stride` divides, whole rows or statistics inserted, reductions
/// from their neutral element.
static FailureOr<RowProgram> matchRowProgram(scf::ForallOp forall, const kforge::RowsToLanesOptions &options,
                                             std::string &why) {
  if (forall.getRank() != 1 || !forall.isNormalized())
    return kforge::reject(why, "expected an scf.forall with one induction variable from 0, step 1");
  RowProgram program;
  std::optional<int64_t> rows = getConstantIntValue(forall.getMixedUpperBound()[0]);
  if (!rows)
    return kforge::reject(why, "expected a static number of rows");
  program.rows = *rows;
  // Beyond a warp, the lanes of a row combine their partials over the whole block (gpu.all_reduce: shuffles,
  // then shared memory across the warps), so the block must hold that one row and nothing else.
  program.blockWide = options.lanes > 32;
  if (program.blockWide && program.rows != 1)
    return kforge::reject(why, "lanes = " + Twine(options.lanes) +
                                   " spreads a row over several warps, reduced over the whole block: the forall "
                                   "must have one row, not " +
                                   Twine(program.rows));
  FailureOr<int64_t> width = rowWidth(forall, why);
  if (failed(width))
    return failure();
  program.width = *width;
  program.stride = options.lanes * options.vector;
  if (program.width == 0)
    return kforge::reject(why, "expected a row of at least one column");
  program.ragged = program.width % program.stride != 0;
  // A ragged row: a lane's columns are one strided slice of its own length; with vector columns per lane the
  // lane's vectors would be cut at the row's end, and the moments' merge weighs every lane's partial equally.
  if (program.ragged && (options.vector > 1 || options.moments))
    return kforge::reject(
        why, "the row width (" + Twine(program.width) + ") is not a multiple of " + Twine(options.lanes) + " lanes" +
                 (options.vector > 1 ? " x " + std::to_string(options.vector) + " columns" : std::string()) +
                 (options.vector > 1 ? ": a row that is not is distributed one column at a time (no vector)"
                                     : ": a row that is not is distributed without moments"));
  program.perLane = llvm::divideCeil(program.width, program.stride);
  if (failed(checkInserts(forall, program.width, why)))
    return failure();
  // Every row reduction starts from its combiner's neutral element.
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (!isRowOp(&op, program.width))
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(&op);
    if (linalgOp.getIteratorTypesArray().back() == utils::IteratorType::reduction &&
        failed(rowReductionKind(linalgOp, why)))
      return failure();
  }
  if (options.moments && failed(matchMoments(forall, program, why)))
    return failure();
  return program;
}

//===----------------------------------------------------------------------===//
// The rewrite: a forall over (rows, lanes), the old body cloned into it with row ops on strided slices
//===----------------------------------------------------------------------===//

namespace {
/// Builds the forall over (rows, lanes) for one checked row program.
class LaneDistributor {
public:
  LaneDistributor(RewriterBase &rewriter, scf::ForallOp forall, const kforge::RowsToLanesOptions &options,
                  const RowProgram &program)
      : rewriter(rewriter), forall(forall), options(options), program(program), loc(forall.getLoc()),
        maps(options.vector) {}

  /// The new forall, which replaces the old one; failure (nothing changed but the functions' moments buffers)
  /// when the body turns out not to be a row program after all.
  FailureOr<scf::ForallOp> run(std::string &why) {
    createLanesForall();
    for (Operation &op : forall.getBody()->without_terminator()) {
      if (isRowOp(&op, program.width)) {
        distributeRowOp(op);
        continue;
      }
      for (Value operand : op.getOperands())
        if (strided.contains(maps[0].lookupOrDefault(operand)))
          return abandon(why, "an op that is not a row op uses a row value: " + op.getName().getStringRef());
      Operation *clone = rewriter.clone(op, maps[0]);
      for (auto [old, now] : llvm::zip(op.getResults(), clone->getResults()))
        mapEverywhere(old, now);
    }
    if (failed(insertResults(why)))
      return failure();
    rewriter.replaceOp(forall, lanesForall.getResults());
    return lanesForall;
  }

private:
  /// The new forall over (rows, lanes), mapped to threads y and x, and the mappings of the old body's values.
  void createLanesForall() {
    rewriter.setInsertionPoint(forall);
    MLIRContext *ctx = rewriter.getContext();
    ArrayAttr mapping = rewriter.getArrayAttr({gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimY),
                                               gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)});
    lanesForall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(program.rows), rewriter.getIndexAttr(options.lanes)},
        forall.getOutputs(), mapping);
    lane = lanesForall.getInductionVars()[1];
    // One mapping per column j of a lane's vector: row values are the lane's j-th slice in maps[j]; every
    // other value is the same in all of them.
    for (IRMapping &map : maps) {
      map.map(forall.getInductionVars()[0], lanesForall.getInductionVars()[0]);
      for (auto [from, to] : llvm::zip(forall.getRegionIterArgs(), lanesForall.getRegionIterArgs()))
        map.map(from, to);
    }
    rewriter.setInsertionPoint(lanesForall.getTerminator());
  }

  /// Gives up: the new forall goes, the old one stays.
  LogicalResult abandon(std::string &why, const Twine &reason) {
    rewriter.eraseOp(lanesForall);
    return kforge::reject(why, reason);
  }

  void mapEverywhere(Value from, Value to) {
    for (IRMapping &map : maps)
      map.map(from, to);
  }

  /// Column j of the lane's vector in the row: lane * vector + j (+ `base`). Created once per (j, base): a
  /// row's slice and its insert must use the same value to bufferize in place.
  OpFoldResult laneColumn(int64_t j, OpFoldResult base) {
    auto [it, inserted] = columns.try_emplace({j, base.getOpaqueValue()});
    if (inserted) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(lanesForall.getBody());
      if (auto v = dyn_cast<Value>(base); v && v.getParentBlock() == lanesForall.getBody())
        rewriter.setInsertionPointAfterValue(v);
      AffineExpr d0 = rewriter.getAffineDimExpr(0), d1 = rewriter.getAffineDimExpr(1);
      it->second = affine::makeComposedFoldedAffineApply(rewriter, loc, d0 + d1 * options.vector + j,
                                                         {base, OpFoldResult(lane)});
    }
    return it->second;
  }

  /// How many columns the lane's j-th slice holds: perLane, or in a ragged row the lane's own count,
  /// ceil((N - (lane * vector + j)) / stride) (created once, at the start of the forall's body).
  OpFoldResult laneCount(int64_t j) {
    if (!program.ragged)
      return rewriter.getIndexAttr(program.perLane);
    auto [it, inserted] = counts.try_emplace(j);
    if (inserted) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(lanesForall.getBody());
      AffineExpr l = rewriter.getAffineDimExpr(0);
      it->second = affine::makeComposedFoldedAffineApply(
          rewriter, loc, (l * -options.vector + (program.width + program.stride - 1 - j)).floorDiv(program.stride),
          {OpFoldResult(lane)});
    }
    return it->second;
  }

  /// `value` (mapped) with dimension `dim` cut to the lane's j-th slice (offset lane * vector + j, stride
  /// lanes * vector).
  Value laneSlice(Value value, int64_t dim, int64_t j) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0)),
        strides(type.getRank(), rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    offsets[dim] = laneColumn(j, rewriter.getIndexAttr(0));
    // A row of the forall's output (a unit-stride slice of a shared output, same rank): sliced from the
    // shared output itself, so that the op's write and the lane's insert are one slice and bufferize in
    // place (slices of the row would each be copied: bufferization cannot tell the lanes' columns apart).
    auto row = value.getDefiningOp<tensor::ExtractSliceOp>();
    auto iterArg = row ? dyn_cast<BlockArgument>(row.getSource()) : BlockArgument();
    if (iterArg && iterArg.getOwner() == lanesForall.getBody() && iterArg.getArgNumber() >= 2 &&
        row.getSourceType().getRank() == type.getRank() && row.hasUnitStride()) {
      SmallVector<OpFoldResult> rowOffsets = row.getMixedOffsets();
      offsets = rowOffsets;
      offsets[dim] = laneColumn(j, rowOffsets[dim]);
      value = iterArg;
    }
    sizes[dim] = laneCount(j);
    strides[dim] = rewriter.getIndexAttr(program.stride);
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, value, offsets, sizes, strides);
    strided.insert(slice);
    return slice;
  }

  /// A row op, once per column of the lane's vector on the lane's slices; a reduction's partials are then
  /// combined within the lane and over the lanes.
  void distributeRowOp(Operation &op) {
    if (program.skippedSquares.contains(&op))
      return; // only the centred sum of squares used them, and the moments' merge gives it
    if (auto it = sumOfSquaresTotal.find(&op); it != sumOfSquaresTotal.end()) {
      auto type = cast<RankedTensorType>(op.getResult(0).getType());
      mapEverywhere(op.getResult(0),
                    tensor::FromElementsOp::create(rewriter, loc, type, ValueRange{it->second}).getResult());
      return;
    }
    auto linalgOp = cast<linalg::LinalgOp>(&op);
    bool reduction = linalgOp.getIteratorTypesArray().back() == utils::IteratorType::reduction;
    SmallVector<Value> laneInputs; // a moments row sum's input slices, one per column of the lane's vector
    // A reduction's partials per result, over the vector.
    SmallVector<SmallVector<Value>> partials(op.getNumResults());
    for (int64_t j = 0; j < options.vector; ++j) {
      SmallVector<Value> operands = laneOperands(linalgOp, j, reduction);
      if (program.momentsOfSum.contains(&op))
        laneInputs.push_back(operands.front());
      SmallVector<Type> resultTypes;
      for (Value init : ValueRange(operands).take_back(linalgOp.getNumDpsInits()))
        resultTypes.push_back(init.getType());
      Operation *laneOp = mlir::clone(rewriter, &op, resultTypes, operands);
      for (auto [i, old, now] : llvm::enumerate(op.getResults(), laneOp->getResults())) {
        if (!reduction) {
          strided.insert(now);
          maps[j].map(old, now);
          continue;
        }
        auto type = cast<RankedTensorType>(now.getType());
        SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(rewriter, loc, 0));
        partials[i].push_back(tensor::ExtractOp::create(rewriter, loc, now, zeros));
      }
    }
    if (reduction)
      combineReduction(linalgOp, partials, laneInputs);
  }

  /// The operands of a row op's clone for column j of the lane's vector: row values as the lane's j-th slices;
  /// a reduction's init a fresh fill of its own.
  SmallVector<Value> laneOperands(linalg::LinalgOp linalgOp, int64_t j, bool reduction) {
    IRMapping &map = maps[j];
    unsigned rowLoop = linalgOp.getNumLoops() - 1;
    SmallVector<Value> operands;
    for (OpOperand &operand : linalgOp->getOpOperands()) {
      Value value = map.lookupOrDefault(operand.get());
      if (reduction && linalgOp.isDpsInit(&operand)) {
        // Each lane's partial accumulates in a tensor of its own, never in the forall's output (where the
        // lanes would all write one element: a row sum's init is a slice of the row-sum output).
        auto fill = operand.get().getDefiningOp<linalg::FillOp>(); // checked: the neutral element
        auto type = cast<RankedTensorType>(value.getType());
        Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
        operands.push_back(
            linalg::FillOp::create(rewriter, loc, map.lookupOrDefault(fill.getInputs()[0]), empty).getResult(0));
        continue;
      }
      AffineMap indexing = linalgOp.getMatchingIndexingMap(&operand);
      std::optional<unsigned> dim = indexing.getResultPosition(rewriter.getAffineDimExpr(rowLoop));
      if (dim && !strided.contains(value))
        value = laneSlice(value, *dim, j);
      operands.push_back(value);
    }
    return operands;
  }

  /// The lane's partial over its columns (its vector's partials combined); the lanes combine theirs, and every
  /// lane holds the total.
  void combineReduction(linalg::LinalgOp linalgOp, ArrayRef<SmallVector<Value>> partials, ArrayRef<Value> laneInputs) {
    std::string unused;
    RowReductionKind kinds = *rowReductionKind(linalgOp, unused); // checked
    auto moments = program.momentsOfSum.find(linalgOp);
    for (auto [old, columnPartials] : llvm::zip(linalgOp->getResults(), partials)) {
      Value partial = columnPartials.front();
      for (Value next : ArrayRef(columnPartials).drop_front())
        partial = vector::makeArithReduction(rewriter, loc, kinds.inLane, next, partial);
      Value total;
      if (moments != program.momentsOfSum.end())
        total = mergeMoments(moments->second, partial, laneInputs);
      else
        total = combineOverLanes(partial, kinds.overLanes);
      auto type = cast<RankedTensorType>(old.getType());
      mapEverywhere(old, tensor::FromElementsOp::create(rewriter, loc, type, ValueRange{total}).getResult());
    }
  }

  /// The lanes' partials combined: by shuffles within a warp (clustered below 32 lanes), over the block beyond.
  Value combineOverLanes(Value partial, gpu::AllReduceOperation kind) {
    if (program.blockWide) {
      // Every thread of the block is a lane of the one row and reaches this point: uniform.
      return gpu::AllReduceOp::create(rewriter, loc, partial,
                                      gpu::AllReduceOperationAttr::get(rewriter.getContext(), kind),
                                      /*uniform=*/true)
          .getResult();
    }
    std::optional<uint32_t> cluster;
    if (options.lanes < 32)
      cluster = static_cast<uint32_t>(options.lanes);
    return gpu::SubgroupReduceOp::create(rewriter, loc, partial, kind, /*uniform=*/false, cluster);
  }

  /// A moments row sum over the lanes: the lane's squared deviations from its own mean, then (sum, squares)
  /// merged over the lanes; returns the sum and records the squares for the chain's sum of squares.
  Value mergeMoments(const kforge::RowMoments &moments, Value partial, ArrayRef<Value> laneInputs) {
    int64_t perLaneCount = program.perLane * options.vector;
    Value mean = arith::DivFOp::create(
        rewriter, loc, partial,
        arith::ConstantOp::create(rewriter, loc, FloatAttr::get(partial.getType(), double(perLaneCount))));
    Value squares = laneSquaredDeviations(rewriter, loc, moments.sum, laneInputs, mean);
    Value total = partial;
    mergeMomentsByShuffles(rewriter, loc, total, squares, std::min<int64_t>(options.lanes, 32), perLaneCount);
    if (program.blockWide)
      mergeMomentsOverWarps(rewriter, loc, forall, lane, options.lanes / 32, total, squares, perLaneCount * 32);
    sumOfSquaresTotal[moments.sumSquares] = squares;
    return total;
  }

  /// Each lane inserts its columns of the row; a row statistic (the same in every lane after the shuffles) is
  /// inserted by lane 0 alone: the other lanes insert an empty slice, so no two lanes write one element.
  LogicalResult insertResults(std::string &why) {
    rewriter.setInsertionPointToStart(lanesForall.getTerminator().getBody());
    for (Operation &op : forall.getTerminator().getYieldingOps()) {
      auto insert = cast<tensor::ParallelInsertSliceOp>(op);
      SmallVector<OpFoldResult> offsets = insert.getMixedOffsets();
      for (OpFoldResult &o : offsets)
        if (auto v = dyn_cast<Value>(o))
          o = maps[0].lookupOrDefault(v);
      rewriter.setInsertionPoint(lanesForall.getTerminator());
      if (isStatistic(insert.getSourceType())) {
        if (failed(insertStatistic(insert, offsets, why)))
          return failure();
        continue;
      }
      if (failed(insertRow(insert, offsets, why)))
        return failure();
    }
    return success();
  }

  /// A row statistic, inserted by lane 0 (the others insert an empty slice).
  LogicalResult insertStatistic(tensor::ParallelInsertSliceOp insert, ArrayRef<OpFoldResult> offsets,
                                std::string &why) {
    Value source = maps[0].lookupOrDefault(insert.getSource());
    if (strided.contains(source))
      return abandon(why, "an inserted row statistic is a lane's slice");
    Value dest = maps[0].lookup(insert.getDest());
    SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0),
          one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane, zero);
    Value count = arith::SelectOp::create(rewriter, loc, first, one, zero);
    int64_t rank = insert.getSourceType().getRank();
    SmallVector<OpFoldResult> at(rank, rewriter.getIndexAttr(0)), unit(rank, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> pieceSizes = unit;
    pieceSizes.back() = count;
    Value piece = tensor::ExtractSliceOp::create(rewriter, loc, source, at, pieceSizes, unit);
    sizes.back() = count;
    rewriter.setInsertionPointToEnd(lanesForall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, insert.getLoc(), piece, dest, offsets, sizes,
                                          insert.getMixedStrides());
    return success();
  }

  /// A whole row: each lane inserts its `vector` strided slices of columns.
  LogicalResult insertRow(tensor::ParallelInsertSliceOp insert, ArrayRef<OpFoldResult> offsets, std::string &why) {
    Value dest = maps[0].lookup(insert.getDest());
    for (int64_t j = 0; j < options.vector; ++j) {
      Value source = maps[j].lookupOrDefault(insert.getSource());
      if (!strided.contains(source))
        return abandon(why, "an inserted row is not computed by row ops");
      rewriter.setInsertionPoint(lanesForall.getTerminator());
      SmallVector<OpFoldResult> columnOffsets(offsets), columnSizes = insert.getMixedSizes(),
                                                        columnStrides = insert.getMixedStrides();
      columnOffsets.back() = laneColumn(j, offsets.back());
      columnSizes.back() = laneCount(j);
      columnStrides.back() = rewriter.getIndexAttr(program.stride);
      rewriter.setInsertionPointToEnd(lanesForall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(rewriter, insert.getLoc(), source, dest, columnOffsets, columnSizes,
                                            columnStrides);
    }
    return success();
  }

  RewriterBase &rewriter;
  scf::ForallOp forall;
  const kforge::RowsToLanesOptions &options;
  const RowProgram &program;
  Location loc;
  scf::ForallOp lanesForall;
  Value lane;                  ///< The new forall's lane index.
  SmallVector<IRMapping> maps; ///< Per column j of a lane's vector.
  DenseSet<Value> strided;     ///< Values of the new body that hold a lane's columns only.
  DenseMap<std::pair<int64_t, void *>, OpFoldResult> columns; ///< laneColumn's values.
  DenseMap<int64_t, OpFoldResult> counts;                      ///< laneCount's values (ragged rows).
  DenseMap<Operation *, Value> sumOfSquaresTotal;             ///< Filled when a moments chain's row sum is lowered.
};
} // namespace

FailureOr<scf::ForallOp> kforge::distributeRowsToLanes(RewriterBase &rewriter, scf::ForallOp forall,
                                                       const RowsToLanesOptions &options, std::string &why) {
  FailureOr<RowProgram> program = matchRowProgram(forall, options, why);
  if (failed(program))
    return failure();
  return LaneDistributor(rewriter, forall, options, *program).run(why);
}
