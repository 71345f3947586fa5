//===- PipelineRows.cpp - transform.kforge.pipeline_rows -------------------===//
//
// A row kernel's blocks loop over rows and copy the next row into shared memory (cp.async) while they reduce,
// normalise and write the current one. See the op's description in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "MatmulNeighbours.h"
#include "Rewrites.h"
#include "RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {
/// The row of a kernel input a block reads, and the reads of it (directly or through subviews of the row).
struct RowRead {
  memref::SubViewOp row;
  SmallVector<memref::SubViewOp> slices;
  SmallVector<vector::TransferReadOp> reads;
};
} // namespace

/// Whether `view` is row [block_id x] of a kernel input with rows one after another (identity layout).
static bool isInputRow(memref::SubViewOp view, gpu::LaunchOp launch, const DenseSet<Value> &written) {
  return kforge::isBlockRow(view, launch, written) &&
         cast<MemRefType>(view.getSource().getType()).getLayout().isIdentity();
}

namespace {
/// A launch whose blocks can loop over rows, checked.
struct RowPipeline {
  int64_t rows = 0;                    ///< The grid's blocks: one row each.
  Operation *firstReduction = nullptr; ///< The entry block's first gpu.all_reduce: the row is read before it.
  RowRead row;
  MemRefType bufferType; ///< The row's copy in shared memory (1 x N).
  int64_t rowBytes = 0;
};
} // namespace

/// Adds `user` of the row (or of a slice of it) to its reads, or says why it cannot be one: only unmasked,
/// unpermuted transfer_reads before the first reduction (after which the next row's copy overwrites it).
static std::string addRead(RowPipeline &pipeline, Block &body, Operation *user) {
  auto read = dyn_cast<vector::TransferReadOp>(user);
  if (!read)
    return "the row is used by " + user->getName().getStringRef().str() +
           ", not only by subviews and vector.transfer_read";
  if (read.getMask() || !read.getPermutationMap().isMinorIdentity())
    return "a masked or permuted read of the row";
  Operation *top = body.findAncestorOpInBlock(*read);
  if (!top || !top->isBeforeInBlock(pipeline.firstReduction))
    return "the row is read after the block's first reduction (where the next row's copy overwrites it)";
  pipeline.row.reads.push_back(read);
  return "";
}

/// The row of a kernel input the launch reads at [block_id x, 0], and its reads (directly or through subviews).
static LogicalResult findRow(gpu::LaunchOp launch, RowPipeline &pipeline, std::string &why) {
  Block &body = launch.getBody().front();
  DenseSet<Value> written = kforge::writtenRoots(launch);
  SmallVector<RowRead> found;
  for (Operation &op : body)
    if (auto view = dyn_cast<memref::SubViewOp>(op); view && isInputRow(view, launch, written))
      found.push_back({view, {}, {}});
  if (found.empty())
    return kforge::reject(why, "the launch reads no row of a kernel input at [block_id x, 0] (sizes [1, N], unit "
                               "strides, identity layout, not written by the kernel)");
  if (found.size() > 1)
    return kforge::reject(why, "the launch reads rows of " + Twine(found.size()) + " inputs; pipeline_rows copies one");
  pipeline.row = found.front();
  for (Operation *user : pipeline.row.row->getUsers()) {
    std::string problem;
    if (auto slice = dyn_cast<memref::SubViewOp>(user)) {
      pipeline.row.slices.push_back(slice);
      for (Operation *sliceUser : slice->getUsers())
        if (problem = addRead(pipeline, body, sliceUser); !problem.empty())
          break;
    } else {
      problem = addRead(pipeline, body, user);
    }
    if (!problem.empty())
      return kforge::reject(why, problem);
  }
  return success();
}

/// The launch's row pipeline, checked: a 1-D grid of at least `blocks` rows and a 1-D block (static sizes), a
/// block-wide reduction, one input's row read before it, a row of whole 16-byte pieces that fits in shared
/// memory.
static FailureOr<RowPipeline> planRowPipeline(gpu::LaunchOp launch, int64_t blocks, std::string &why) {
  RowPipeline pipeline;
  std::optional<int64_t> rows = getConstantIntValue(launch.getGridSizeX());
  std::optional<int64_t> threads = getConstantIntValue(launch.getBlockSizeX());
  if (!rows || getConstantIntValue(launch.getGridSizeY()) != 1 || getConstantIntValue(launch.getGridSizeZ()) != 1 ||
      !threads || getConstantIntValue(launch.getBlockSizeY()) != 1 || getConstantIntValue(launch.getBlockSizeZ()) != 1)
    return kforge::reject(why, "expected a launch of a 1-D grid and a 1-D block of static sizes");
  pipeline.rows = *rows;
  if (blocks > *rows)
    return kforge::reject(why, "blocks = " + Twine(blocks) + " is more than the launch's " + Twine(*rows) + " rows");
  for (Operation &op : launch.getBody().front())
    if (isa<gpu::AllReduceOp>(op)) {
      pipeline.firstReduction = &op;
      break;
    }
  if (!pipeline.firstReduction)
    return kforge::reject(why, "the launch's entry block has no block-wide reduction (gpu.all_reduce)");
  // The row, and its reads: all before the first reduction, after which the next row's copy overwrites it.
  if (failed(findRow(launch, pipeline, why)))
    return failure();
  auto inputType = cast<MemRefType>(pipeline.row.row.getSource().getType());
  int64_t width = inputType.getDimSize(1), elementBytes = inputType.getElementTypeBitWidth() / 8;
  if (elementBytes == 0 || (width * elementBytes) % 16 != 0)
    return kforge::reject(why, "the row (" + Twine(width) + " elements) is not a whole number of 16-byte pieces");
  pipeline.rowBytes = width * elementBytes;
  pipeline.bufferType = MemRefType::get({1, width}, inputType.getElementType(), MemRefLayoutAttrInterface(),
                                        gpu::AddressSpaceAttr::get(launch.getContext(), gpu::AddressSpace::Workgroup));
  if (std::string problem = kforge::sharedBuffersProblem(launch, kforge::memrefBytes(pipeline.bufferType));
      !problem.empty())
    return kforge::reject(why, "a copy of the row would " + problem);
  return pipeline;
}

namespace {
/// Turns one checked launch into blocks that loop over rows, the next row copied into shared memory while the
/// current one is reduced.
class RowPipeliner {
public:
  RowPipeliner(RewriterBase &rewriter, gpu::LaunchOp launch, RowPipeline &pipeline, int64_t blocks)
      : rewriter(rewriter), launch(launch), pipeline(pipeline), blocks(blocks), body(launch.getBody().front()),
        loc(launch.getLoc()), ctx(rewriter.getContext()), input(pipeline.row.row.getSource()) {}

  void run() {
    // The ops of the body, to move into the loop; the block index they use, to become the loop's row.
    SmallVector<Operation *> original;
    for (Operation &op : body.without_terminator())
      original.push_back(&op);
    SmallVector<Value> blockIds{launch.getBlockIds().x};
    launch.getBody().walk([&](gpu::BlockIdOp id) {
      if (id.getDimension() == gpu::Dimension::x)
        blockIds.push_back(id.getResult());
    });
    createGridAndBuffers();
    rewriter.setInsertionPoint(body.getTerminator());
    Value first = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x);
    copyFirstRow(first);
    scf::ForOp loop = rowLoop(first);
    Value current = loop.getInductionVar();
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (Operation *op : original)
      rewriter.moveOpBefore(op, yield);
    for (Value id : blockIds)
      rewriter.replaceUsesWithIf(id, current, [&](OpOperand &use) { return loop->isAncestor(use.getOwner()); });
    readFromBuffer();
    // Once every thread has read the row (a barrier after the first reduction), the next row's copy starts.
    rewriter.setInsertionPointAfter(pipeline.firstReduction);
    gpu::BarrierOp::create(rewriter, loc);
    Value next = arith::AddIOp::create(rewriter, loc, current, grid);
    Value exists = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, next, index(pipeline.rows));
    onFirstThread(exists, [&] { copyRow(next); });
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), v).getResult(); }
  Value sharedPointer(Value memref) {
    Value address = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                               memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, memref));
    return LLVM::IntToPtrOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx, 3), address);
  }

  /// The launch's grid becomes `blocks`; the row's buffer and its mbarrier in shared memory.
  void createGridAndBuffers() {
    rewriter.setInsertionPoint(launch);
    grid = arith::ConstantIndexOp::create(rewriter, loc, blocks);
    rewriter.modifyOpInPlace(launch, [&] { launch.getGridSizeXMutable().assign(grid); });
    auto barrierType = MemRefType::get({1}, rewriter.getI64Type(), MemRefLayoutAttrInterface(),
                                       gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    SmallVector<Value> buffers = kforge::sharedBuffers(rewriter, loc, launch, {pipeline.bufferType, barrierType});
    buffer = buffers[0];
    barrier = buffers[1];
  }

  /// `then` on thread 0 alone.
  void onFirstThread(Value also, llvm::function_ref<void()> then) {
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, launch.getThreadIds().x, index(0));
    if (also)
      first = arith::AndIOp::create(rewriter, loc, first, also);
    auto branch = scf::IfOp::create(rewriter, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    then();
  }

  /// Thread 0 copies row `at` into the buffer: one bulk copy (TMA, cp.async.bulk) of the whole row, completing
  /// on the mbarrier, told first how many bytes to expect. The generic proxy's reads of the buffer (ordered
  /// before by a barrier) come before the async proxy's writes (the proxy fence).
  void copyRow(Value at) {
    Value bar = sharedPointer(barrier);
    NVVM::FenceProxyOp::create(rewriter, loc, NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    NVVM::MBarrierArriveExpectTxOp::create(rewriter, loc, /*res=*/Type(), bar, i32(pipeline.rowBytes),
                                           NVVM::MemScopeKindAttr(), BoolAttr(), /*predicate=*/Value());
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, input);
    Value offset = arith::MulIOp::create(rewriter, loc, at, index(pipeline.rowBytes));
    Value address = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                               arith::AddIOp::create(rewriter, loc, base, offset));
    Value generic = LLVM::IntToPtrOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx), address);
    Value global = LLVM::AddrSpaceCastOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx, 1), generic);
    // The destination in the shared::cluster window (a block without a cluster is a cluster of one, its
    // shared::cta addresses valid there): PTX's cp.async.bulk.shared::cluster.global, which sm_90 has.
    Value destination =
        LLVM::AddrSpaceCastOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx, 7), sharedPointer(buffer));
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(rewriter, loc, destination, global, bar, i32(pipeline.rowBytes),
                                                     /*multicastMask=*/Value(), /*l2CacheHint=*/Value());
  }

  /// Thread 0 initialises the mbarrier and copies the block's first row; no thread waits on the mbarrier
  /// before that (a barrier).
  void copyFirstRow(Value first) {
    onFirstThread(Value(), [&] {
      NVVM::MBarrierInitOp::create(rewriter, loc, sharedPointer(barrier), i32(1), /*predicate=*/Value());
      // The initialised mbarrier is visible to the async proxy (the TMA unit) before the first copy.
      NVVM::FenceMbarrierInitOp::create(rewriter, loc);
      copyRow(first);
    });
    gpu::BarrierOp::create(rewriter, loc);
  }

  /// The loop over the block's rows first, first + blocks, ...: the i-th (i = (row - first) / blocks) waits
  /// for the mbarrier's phase i, parity i % 2.
  scf::ForOp rowLoop(Value first) {
    return scf::ForOp::create(
        rewriter, loc, first, index(pipeline.rows), grid, ValueRange{},
        [&](OpBuilder &b, Location l, Value current, ValueRange) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(b.getInsertionBlock());
          Value i = arith::DivUIOp::create(rewriter, l, arith::SubIOp::create(rewriter, l, current, first), grid);
          Value parity = arith::IndexCastOp::create(rewriter, l, rewriter.getI32Type(),
                                                    arith::AndIOp::create(rewriter, l, i, index(1)));
          NVVM::MBarrierTryWaitParityOp::create(rewriter, l, sharedPointer(barrier), parity, i32(10000000));
          // LLVM sees no write of the buffer in the loop (the bulk copy writes through a shared::cluster pointer
          // it does not take for an alias) and would hoist the row's loads out of it: a compiler-level memory
          // barrier keeps them here.
          LLVM::InlineAsmOp::create(rewriter, l, TypeRange{}, ValueRange{}, "", "~{memory}",
                                    /*has_side_effects=*/true,
                                    /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
                                    LLVM::AsmDialectAttr(), ArrayAttr());
          scf::YieldOp::create(rewriter, l);
        });
  }

  /// The row's reads from the buffer instead of the input.
  void readFromBuffer() {
    RowRead &row = pipeline.row;
    for (memref::SubViewOp slice : row.slices) {
      rewriter.setInsertionPoint(slice);
      auto copy = memref::SubViewOp::create(rewriter, slice.getLoc(), buffer, slice.getMixedOffsets(),
                                            slice.getMixedSizes(), slice.getMixedStrides());
      rewriter.replaceAllUsesWith(slice.getResult(), copy.getResult());
    }
    rewriter.replaceAllUsesWith(row.row.getResult(), buffer);
    for (vector::TransferReadOp read : row.reads)
      readElements(read);
    for (memref::SubViewOp slice : row.slices)
      rewriter.eraseOp(slice);
    rewriter.eraseOp(row.row);
  }

  /// A read of the buffer, element by element (memref.load): a loop-invariant vector.transfer_read of a buffer
  /// the loop writes only through the bulk copy's pointer would be hoisted out of the loop
  /// (kforge-forward-vector-transfers); the backend merges a lane's adjacent elements into 16-byte shared loads
  /// again.
  void readElements(vector::TransferReadOp read) {
    rewriter.setInsertionPoint(read);
    Location at = read.getLoc();
    SmallVector<Value> indices(read.getIndices()), elements;
    ArrayRef<int64_t> shape = read.getVectorType().getShape();
    int64_t leading = static_cast<int64_t>(indices.size() - shape.size()); // the vector's dims are the last ones
    for (int64_t e = 0; e < read.getVectorType().getNumElements(); ++e) {
      SmallVector<Value> elementIndices = indices;
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1, rest = e; d >= 0; rest /= shape[d], --d)
        if (int64_t coordinate = rest % shape[d])
          elementIndices[leading + d] = arith::AddIOp::create(rewriter, at, indices[leading + d], index(coordinate));
      elements.push_back(memref::LoadOp::create(rewriter, at, read.getBase(), elementIndices));
    }
    rewriter.replaceOp(read, vector::FromElementsOp::create(rewriter, at, read.getVectorType(), elements));
  }

  RewriterBase &rewriter;
  gpu::LaunchOp launch;
  RowPipeline &pipeline;
  int64_t blocks;
  Block &body;
  Location loc;
  MLIRContext *ctx;
  Value input;           ///< The kernel input whose rows are copied (the row's view is gone once read from the copy).
  Value grid;            ///< The new grid size: `blocks`, the loop's step.
  Value buffer, barrier; ///< The row's copy and its mbarrier.
};
} // namespace

FailureOr<gpu::LaunchOp> kforge::pipelineRows(RewriterBase &rewriter, gpu::LaunchOp launch, int64_t blocks,
                                              std::string &why) {
  FailureOr<RowPipeline> pipeline = planRowPipeline(launch, blocks, why);
  if (failed(pipeline))
    return failure();
  RowPipeliner(rewriter, launch, *pipeline, blocks).run();
  return launch;
}
