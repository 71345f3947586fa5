//===- KforgeTransformOps.cpp - transform.kforge.* ops --------------------===//
//
// The ops themselves: their verifiers (the checks a script can fail before it runs) and applyToOne, which
// reads the op's attributes and calls the rewrite (Rewrites.h) on its typed target.
//
//===----------------------------------------------------------------------===//

#include "kforge/TransformOps/KforgeTransformOps.h"
#include "kforge/Transforms/ChannelsLast.h"
#include "kforge/Transforms/KernelRequests.h"

#include "Rewrites.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

#define GET_OP_CLASSES
#include "kforge/TransformOps/KforgeTransformOps.cpp.inc"

//===----------------------------------------------------------------------===//
// OutsToEmptyOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::OutsToEmptyOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                 linalg::LinalgOp target,
                                                                 transform::ApplyToEachResultList &results,
                                                                 transform::TransformState &state) {
  if (!target.hasPureTensorSemantics())
    return emitSilenceableError() << "expected a linalg op on tensors";
  rewriter.setInsertionPoint(target);
  for (OpOperand &init : target.getDpsInitsMutable()) {
    if (target.payloadUsesValueFromOperand(&init))
      continue;
    Value current = init.get();
    if (current.getDefiningOp<tensor::EmptyOp>())
      continue;
    auto type = cast<RankedTensorType>(current.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, target.getLoc(), current);
    Value empty = tensor::EmptyOp::create(rewriter, target.getLoc(), sizes, type.getElementType(), type.getEncoding());
    rewriter.modifyOpInPlace(target, [&] { init.set(empty); });
  }
  results.push_back(target);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// NameMatmulOp
//===----------------------------------------------------------------------===//

/// `value` is block argument `arg` of `block`, possibly extended (arith.extf) first.
static bool isArgumentMaybeExtended(Value value, Block &block, unsigned arg) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    value = ext.getIn();
  return value == block.getArgument(arg);
}

/// Why `generic` is not a matmul linalg.matmul can name with its maps, or "".
static std::string notAMatmul(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 || generic.getNumLoops() != 3)
    return "expected two inputs, one output and three loops";
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  if (iterators[0] != utils::IteratorType::parallel || iterators[1] != utils::IteratorType::parallel ||
      iterators[2] != utils::IteratorType::reduction)
    return "expected loops (m, n, k): parallel, parallel, reduction";
  MLIRContext *ctx = generic.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx), k = getAffineDimExpr(2, ctx);
  auto mapOf = [&](AffineExpr row, AffineExpr col) { return AffineMap::get(3, 0, {row, col}, ctx); };
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[2] != mapOf(m, n) || (maps[0] != mapOf(m, k) && maps[0] != mapOf(k, m)) ||
      (maps[1] != mapOf(k, n) && maps[1] != mapOf(n, k)))
    return "expected A read as (m, k) or (k, m), B as (k, n) or (n, k), C written as (m, n)";
  Block &body = *generic.getBody();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return "expected a body out + a * b";
  Value lhs = add.getLhs(), rhs = add.getRhs();
  if (rhs == body.getArgument(2))
    std::swap(lhs, rhs);
  auto mul = rhs.getDefiningOp<arith::MulFOp>();
  if (lhs != body.getArgument(2) || !mul ||
      !((isArgumentMaybeExtended(mul.getLhs(), body, 0) && isArgumentMaybeExtended(mul.getRhs(), body, 1)) ||
        (isArgumentMaybeExtended(mul.getLhs(), body, 1) && isArgumentMaybeExtended(mul.getRhs(), body, 0))))
    return "expected a body out + a * b";
  if (body.getOperations().size() > 6) // a, b extended, the product, the sum and the yield at most
    return "expected a body out + a * b (nothing else)";
  return "";
}

DiagnosedSilenceableFailure transform::NameMatmulOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                linalg::GenericOp target,
                                                                transform::ApplyToEachResultList &results,
                                                                transform::TransformState &state) {
  if (std::string why = notAMatmul(target); !why.empty())
    return emitSilenceableError() << "not a matmul: " << why;
  rewriter.setInsertionPoint(target);
  auto matmul = linalg::MatmulOp::create(rewriter, target.getLoc(), target.getResultTypes(), target.getDpsInputs(),
                                         target.getDpsInits(),
                                         {rewriter.getNamedAttr("indexing_maps", target.getIndexingMaps())});
  rewriter.replaceOp(target, matmul->getResults());
  results.push_back(matmul);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// ConvChannelsLastOp
//===----------------------------------------------------------------------===//

LogicalResult transform::ConvChannelsLastOp::verify() {
  if (getMultiplicand() != 0 && getMultiplicand() != 1)
    return emitOpError() << "multiplicand is 0 (x of the body's out + x * y) or 1 (y), not " << getMultiplicand();
  return success();
}

DiagnosedSilenceableFailure transform::ConvChannelsLastOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                      linalg::LinalgOp target,
                                                                      transform::ApplyToEachResultList &results,
                                                                      transform::TransformState &state) {
  if (!target.hasPureTensorSemantics())
    return emitSilenceableError() << "expected a linalg op on tensors";
  // Checked on the op as it is, so that a failure leaves it untouched (not generalized).
  if (std::string why = kforge::whyNotChannelsLast(target, getMultiplicand()); !why.empty())
    return emitSilenceableError() << "no channels-last copy: " << why;
  auto generic = dyn_cast<linalg::GenericOp>(target.getOperation());
  if (!generic) {
    SmallVector<NamedAttribute> marks(target->getDiscardableAttrs());
    rewriter.setInsertionPoint(target);
    FailureOr<linalg::GenericOp> generalized = linalg::generalizeNamedOp(rewriter, target);
    if (failed(generalized))
      return emitDefiniteFailure() << "could not generalize " << target->getName();
    generic = *generalized;
    for (NamedAttribute mark : marks)
      generic->setAttr(mark.getName(), mark.getValue());
  }
  std::string why;
  FailureOr<linalg::TransposeOp> transpose = kforge::moveChannelsInnermost(rewriter, generic, getMultiplicand(), why);
  if (failed(transpose))
    return emitDefiniteFailure() << "channels-last copy failed after planning: " << why;
  results.push_back(generic);
  results.push_back(*transpose);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// MatmulTransposeBOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::MatmulTransposeBOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                      linalg::MatmulOp target,
                                                                      transform::ApplyToEachResultList &results,
                                                                      transform::TransformState &state) {
  if (!target.hasPureTensorSemantics())
    return emitSilenceableError() << "expected a linalg.matmul on tensors";
  MLIRContext *ctx = target.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx), k = getAffineDimExpr(2, ctx);
  auto mapOf = [&](AffineExpr row, AffineExpr col) { return AffineMap::get(3, 0, {row, col}, ctx); };
  SmallVector<AffineMap> maps = target.getIndexingMapsArray();
  if (maps.size() != 3 || maps[0] != mapOf(m, k) || maps[1] != mapOf(k, n) || maps[2] != mapOf(m, n))
    return emitSilenceableError() << "expected a matmul reading A as (m, k) and B as (k, n)";
  Value a = target.getDpsInputs()[0], b = target.getDpsInputs()[1];
  auto bType = dyn_cast<RankedTensorType>(b.getType());
  if (!bType || !bType.hasStaticShape() || bType.getRank() != 2)
    return emitSilenceableError() << "expected B as a statically shaped 2-D tensor";
  Location loc = target.getLoc();
  rewriter.setInsertionPoint(target);
  Value empty = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{bType.getDimSize(1), bType.getDimSize(0)},
                                        bType.getElementType());
  auto transpose = linalg::TransposeOp::create(rewriter, loc, b, empty, ArrayRef<int64_t>{1, 0});
  SmallVector<Attribute> newMaps = {AffineMapAttr::get(mapOf(m, k)), AffineMapAttr::get(mapOf(n, k)),
                                    AffineMapAttr::get(mapOf(m, n))};
  auto matmul = linalg::MatmulOp::create(rewriter, loc, target->getResultTypes(),
                                         ValueRange{a, transpose->getResult(0)}, target.getDpsInits(),
                                         {rewriter.getNamedAttr("indexing_maps", rewriter.getArrayAttr(newMaps))});
  for (NamedAttribute mark : target->getDiscardableAttrs())
    matmul->setAttr(mark.getName(), mark.getValue());
  rewriter.replaceOp(target, matmul->getResults());
  results.push_back(matmul);
  results.push_back(transpose);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// CopyToLinalgOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::CopyToLinalgOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                  memref::CopyOp target,
                                                                  transform::ApplyToEachResultList &results,
                                                                  transform::TransformState &state) {
  if (!isa<MemRefType>(target.getSource().getType()) || !isa<MemRefType>(target.getTarget().getType()))
    return emitSilenceableError() << "expected a memref.copy between ranked memrefs";
  rewriter.setInsertionPoint(target);
  results.push_back(rewriter.replaceOpWithNewOp<linalg::CopyOp>(target, target.getSource(), target.getTarget()));
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// SetKernelAttributesOp
//===----------------------------------------------------------------------===//

LogicalResult transform::SetKernelAttributesOp::verify() {
  if (!getMinBlocksPerSm() && !getMaxRegisters() && !getStreamingStores() && !getReadOnlyInputs() &&
      !getLoadL2Policy())
    return emitOpError() << "needs at least one of min_blocks_per_sm, max_registers, streaming_stores, "
                            "read_only_inputs and load_l2_policy";
  if (getLoadL2Policy() && *getLoadL2Policy() != "evict_first" && *getLoadL2Policy() != "evict_last")
    return emitOpError() << "load_l2_policy must be \"evict_first\" or \"evict_last\", not \""
                         << *getLoadL2Policy() << "\"";
  // (I64Attr's getters are unsigned: the limits are checked as the signed values written in the script.)
  if (getMinBlocksPerSm() && static_cast<int64_t>(*getMinBlocksPerSm()) <= 0)
    return emitOpError() << "min_blocks_per_sm must be positive";
  if (getMaxRegisters() &&
      (static_cast<int64_t>(*getMaxRegisters()) <= 0 || static_cast<int64_t>(*getMaxRegisters()) > 255))
    return emitOpError() << "max_registers must be in 1..255";
  return success();
}

DiagnosedSilenceableFailure transform::SetKernelAttributesOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                         gpu::LaunchOp target,
                                                                         transform::ApplyToEachResultList &results,
                                                                         transform::TransformState &state) {
  rewriter.modifyOpInPlace(target, [&] {
    if (getMinBlocksPerSmAttr())
      target->setAttr(kforge::requests::kMinBlocksPerSm, getMinBlocksPerSmAttr());
    if (getMaxRegistersAttr())
      target->setAttr(kforge::requests::kMaxRegisters, getMaxRegistersAttr());
    if (getStreamingStores())
      target->setAttr(kforge::requests::kStreamingStores, rewriter.getUnitAttr());
    if (getReadOnlyInputs())
      target->setAttr(kforge::requests::kReadOnlyInputs, rewriter.getUnitAttr());
    if (getLoadL2PolicyAttr())
      target->setAttr(kforge::requests::kLoadL2Policy, getLoadL2PolicyAttr());
  });
  results.push_back(target);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// FuseElementwiseProducersOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure transform::FuseElementwiseProducersOp::applyToOne(
    transform::TransformRewriter &rewriter, Operation *target, transform::ApplyToEachResultList &results,
    transform::TransformState &state) {
  std::string why;
  if (failed(kforge::fuseElementwiseProducers(rewriter, target, why)))
    return emitDefiniteFailure() << why;
  results.push_back(target);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// DistributeRowsToLanesOp
//===----------------------------------------------------------------------===//

LogicalResult transform::DistributeRowsToLanesOp::verify() {
  int64_t lanes = getLanes();
  // Within a warp, a row's lanes must tile the warp (butterfly shuffles over 2, 4, ... 32 lanes); beyond it,
  // whole warps (a 32000-wide row has no power-of-two lane count above 256 that divides it, but 800 does).
  bool withinWarp = lanes >= 2 && lanes <= 32 && llvm::isPowerOf2_64(lanes);
  bool wholeWarps = lanes > 32 && lanes <= 1024 && lanes % 32 == 0;
  if (!withinWarp && !wholeWarps)
    return emitOpError() << "lanes must be a power of 2 from 2 to 32 or a multiple of 32 up to 1024, not " << lanes;
  int64_t vector = getVector();
  if (vector != 1 && vector != 2 && vector != 4)
    return emitOpError() << "vector must be 1, 2 or 4 consecutive columns per lane, not " << vector;
  if (getMoments() && wholeWarps && !llvm::isPowerOf2_64(lanes / 32))
    return emitOpError() << "moments over a row of " << lanes / 32
                         << " warps: the warps must be a power of 2 (their partials merge pairwise)";
  return success();
}

DiagnosedSilenceableFailure transform::DistributeRowsToLanesOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                           scf::ForallOp target,
                                                                           transform::ApplyToEachResultList &results,
                                                                           transform::TransformState &state) {
  kforge::RowsToLanesOptions options;
  options.lanes = getLanes();
  options.vector = getVector();
  options.moments = getMoments();
  std::string why;
  FailureOr<scf::ForallOp> lanes = kforge::distributeRowsToLanes(rewriter, target, options, why);
  if (failed(lanes))
    return emitSilenceableError() << why;
  results.push_back(*lanes);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// MatmulToMmaSyncOp
//===----------------------------------------------------------------------===//

LogicalResult transform::MatmulToMmaSyncOp::verify() {
  // (I64Attr's getters are unsigned: the checks are on the signed values the rewrite takes.)
  int64_t kSteps = getKSteps(), blockK = getBlockK(), asyncStages = getAsyncStages();
  if (kSteps < 1)
    return emitOpError() << "k_steps must be at least 1, not " << kSteps;
  if (blockK < 0)
    return emitOpError() << "block_k must be 0 (not staged) or positive";
  if (asyncStages != 0 && (blockK == 0 || asyncStages < 2))
    return emitOpError() << "async_stages (" << asyncStages
                         << ") must be 0, or at least 2 stages of a staged matmul (block_k > 0)";
  if (getTma() && !getWgmma())
    return emitOpError() << "tma fills wgmma's swizzled stages: it needs wgmma";
  if (getWarpSpecialized() && !getTma())
    return emitOpError() << "warp_specialized gives the TMA copies a producer warp of their own: it needs tma";
  if (int64_t blocks = getPersistentBlocks();
      blocks < 0 || (blocks > 0 && (!getWarpSpecialized() || getStageEpilogue())))
    return emitOpError() << "persistent_blocks must be 0, or positive with warp_specialized and without "
                            "stage_epilogue (whose result tile would share the stages the producer fills for the next "
                            "tile)";
  if (StringRef shared = getClusterMulticast();
      !shared.empty() && (!(shared == "a" || shared == "b") || !getWarpSpecialized() || getPersistentBlocks() > 0))
    return emitOpError() << "cluster_multicast names the operand a pair of blocks shares (\"a\" or \"b\"), with "
                            "warp_specialized and without persistent_blocks";
  if (getWgmmaInFlight() != 0 && (!getWgmma() || getWgmmaInFlight() != 1 || asyncStages < 3))
    return emitOpError() << "wgmma_in_flight must be 0, or 1 with wgmma and at least 3 async_stages (copies run S - "
                            "2 tiles ahead)";
  ArrayRef<int64_t> grid = getWarpGrid();
  if (blockK > 0 && (grid.size() != 2 || grid[0] < 1 || grid[1] < 1))
    return emitOpError() << "expected warp_grid = [rows, columns] of warps";
  if (getTf32() && asyncStages == 0)
    return emitOpError() << "tf32 multiplies f32 operands on the pipelined stages (wgmma's or mma.sync's): it "
                            "needs async_stages";
  // One 128-byte swizzled row of K per tile: 64 16-bit elements, or 32 f32 multiplied as TF32.
  int64_t swizzleRow = getTf32() ? 32 : 64;
  if (getWgmma() && (asyncStages < 2 || blockK != swizzleRow || getLdmatrix()))
    return emitOpError() << "wgmma needs async_stages (at least 2), block_k = " << swizzleRow
                         << " (one 128-byte swizzled row" << (getTf32() ? " of f32" : "") << ") and no ldmatrix";
  if (getSwapAb() && !(getTf32() && getTma()))
    return emitOpError() << "swap_ab reads B's TF32 fragments from its TMA-filled stage into registers: it needs tf32 "
                            "and tma";
  if (getProducerWarpgroup() && !getWarpSpecialized())
    return emitOpError() << "producer_warpgroup makes warp_specialized's producer a warpgroup that gives its registers "
                            "to the consumers: it needs warp_specialized";
  if (getLdmatrix() && blockK == 0)
    return emitOpError() << "ldmatrix reads shared memory: it needs the staged form (block_k > 0)";
  if (getStageEpilogue() && (blockK == 0 || asyncStages == 0))
    return emitOpError() << "stage_epilogue needs async stages in dynamic shared memory that hold the result tile "
                            "(async_stages of a staged matmul)";
  return success();
}

DiagnosedSilenceableFailure transform::MatmulToMmaSyncOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                     linalg::MatmulOp target,
                                                                     transform::ApplyToEachResultList &results,
                                                                     transform::TransformState &state) {
  kforge::MmaSyncOptions options;
  options.kSteps = getKSteps();
  options.blockK = getBlockK();
  options.warpGrid = llvm::to_vector_of<int64_t, 2>(getWarpGrid());
  options.ldmatrix = getLdmatrix();
  options.asyncStages = getAsyncStages();
  options.wgmma = getWgmma();
  options.tma = getTma();
  options.warpSpecialized = getWarpSpecialized();
  options.persistentBlocks = getPersistentBlocks();
  options.clusterMulticast = getClusterMulticast().str();
  options.wgmmaInFlight = getWgmmaInFlight();
  options.stageEpilogue = getStageEpilogue();
  options.tf32 = getTf32();
  options.swapAB = getSwapAb();
  options.producerWarpgroup = getProducerWarpgroup();
  std::string why;
  if (failed(kforge::matmulToMmaSync(rewriter, target, options, why)))
    return emitSilenceableError() << why;
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// MatmulToSimtStagedOp
//===----------------------------------------------------------------------===//

/// The options of the staged SIMT rewrites: a [rows, columns] thread grid, block_k a positive multiple of 4.
static LogicalResult verifySimtStagedOptions(Operation *op, ArrayRef<int64_t> grid, int64_t blockK) {
  if (grid.size() != 2 || grid[0] < 1 || grid[1] < 1)
    return op->emitOpError() << "expected thread_grid = [rows, columns] of threads";
  if (blockK < 1 || blockK % 4)
    return op->emitOpError() << "block_k (" << blockK << ") must be a positive multiple of 4";
  return success();
}

LogicalResult transform::MatmulToSimtStagedOp::verify() {
  // (block_k signed, as the rewrite takes it)
  return verifySimtStagedOptions(*this, getThreadGrid(), static_cast<int64_t>(getBlockK()));
}

DiagnosedSilenceableFailure transform::MatmulToSimtStagedOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                        linalg::MatmulOp target,
                                                                        transform::ApplyToEachResultList &results,
                                                                        transform::TransformState &state) {
  kforge::SimtStagedOptions options;
  options.blockK = getBlockK();
  options.threadGrid = llvm::to_vector_of<int64_t, 2>(getThreadGrid());
  options.asyncB = getAsyncB();
  std::string why;
  if (failed(kforge::matmulToSimtStaged(rewriter, target, options, why)))
    return emitSilenceableError() << why;
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// ImplicitGemmToSimtStagedOp
//===----------------------------------------------------------------------===//

/// copy_order's value as the rewrite's option; none when it names no order.
static std::optional<kforge::ImplicitGemmOptions::CopyOrder> implicitGemmCopyOrder(StringRef order) {
  using Order = kforge::ImplicitGemmOptions::CopyOrder;
  return llvm::StringSwitch<std::optional<Order>>(order)
      .Case("k_groups", Order::KGroups)
      .Case("contiguous", Order::Contiguous)
      .Case("contiguous_longest_k", Order::ContiguousLongestK)
      .Default(std::nullopt);
}

LogicalResult transform::ImplicitGemmToSimtStagedOp::verify() {
  std::optional<kforge::ImplicitGemmOptions::CopyOrder> order = implicitGemmCopyOrder(getCopyOrder());
  if (!order)
    return emitOpError() << "copy_order must be k_groups, contiguous or contiguous_longest_k, not '" << getCopyOrder()
                         << "'";
  if (*order != kforge::ImplicitGemmOptions::CopyOrder::KGroups && !getAsyncCopies())
    return emitOpError() << "copy_order '" << getCopyOrder() << "' orders asynchronous copies: it needs async_copies";
  return verifySimtStagedOptions(*this, getThreadGrid(), static_cast<int64_t>(getBlockK()));
}

DiagnosedSilenceableFailure transform::ImplicitGemmToSimtStagedOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                              linalg::LinalgOp target,
                                                                              transform::ApplyToEachResultList &results,
                                                                              transform::TransformState &state) {
  kforge::ImplicitGemmOptions options;
  options.blockK = getBlockK();
  options.threadGrid = llvm::to_vector_of<int64_t, 2>(getThreadGrid());
  options.serialLoops = llvm::to_vector(getSerialLoops());
  options.asyncCopies = getAsyncCopies();
  options.copyOrder = *implicitGemmCopyOrder(getCopyOrder()); // (checked by the verifier)
  std::string why;
  if (failed(kforge::implicitGemmToSimtStaged(rewriter, target, options, why)))
    return emitSilenceableError() << why;
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// ImplicitGemmToMmaSyncOp
//===----------------------------------------------------------------------===//

LogicalResult transform::ImplicitGemmToMmaSyncOp::verify() {
  ArrayRef<int64_t> grid = getWarpGrid();
  if (grid.size() != 2 || grid[0] < 1 || grid[1] < 1 || grid[0] * grid[1] > 32)
    return emitOpError() << "expected warp_grid = [rows, columns] of warps, at most 32 in all";
  int64_t blockK = getBlockK(); // (signed: I64Attr's getter is unsigned)
  if (blockK < 1 || blockK % 16)
    return emitOpError() << "block_k (" << blockK << ") must be a positive multiple of 16";
  int64_t stages = getStages();
  if (stages < 2 || stages > 8)
    return emitOpError() << "stages (" << stages << ") must be 2 to 8";
  int64_t inFlight = getWgmmaInFlight();
  if (inFlight < 0 || inFlight > 1 || (inFlight && !getWgmma()))
    return emitOpError() << "wgmma_in_flight (" << inFlight << ") must be 0, or 1 with wgmma";
  if (getTf32() && !getWgmma())
    return emitOpError() << "tf32 takes wgmma (the mma.sync path multiplies 16-bit floats)";
  return success();
}

DiagnosedSilenceableFailure transform::ImplicitGemmToMmaSyncOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                           linalg::LinalgOp target,
                                                                           transform::ApplyToEachResultList &results,
                                                                           transform::TransformState &state) {
  kforge::ImplicitGemmMmaOptions options;
  options.blockK = getBlockK();
  options.warpGrid = llvm::to_vector_of<int64_t, 2>(getWarpGrid());
  options.serialLoops = llvm::to_vector(getSerialLoops());
  options.stages = getStages();
  options.wgmma = getWgmma();
  options.wgmmaInFlight = getWgmmaInFlight();
  options.tf32 = getTf32();
  std::string why;
  if (failed(kforge::implicitGemmToMmaSync(rewriter, target, options, why)))
    return emitSilenceableError() << why;
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// GroupBlockOrderOp
//===----------------------------------------------------------------------===//

LogicalResult transform::GroupBlockOrderOp::verify() {
  int64_t rows = getRows(); // (signed: I64Attr's getter is unsigned)
  if (rows < 1)
    return emitOpError() << "rows must be a positive number of block rows, not " << rows;
  return success();
}

DiagnosedSilenceableFailure transform::GroupBlockOrderOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                     gpu::LaunchOp target,
                                                                     transform::ApplyToEachResultList &results,
                                                                     transform::TransformState &state) {
  std::string why;
  FailureOr<gpu::LaunchOp> launch = kforge::groupBlockOrder(rewriter, target, getRows(), why);
  if (failed(launch))
    return emitSilenceableError() << why;
  results.push_back(*launch);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// PrefetchRowsToL2Op
//===----------------------------------------------------------------------===//

LogicalResult transform::PrefetchRowsToL2Op::verify() {
  int64_t ahead = getAhead(); // (signed: I64Attr's getter is unsigned)
  if (ahead < 1)
    return emitOpError() << "ahead must be a positive number of rows, not " << ahead;
  return success();
}

DiagnosedSilenceableFailure transform::PrefetchRowsToL2Op::applyToOne(transform::TransformRewriter &rewriter,
                                                                      gpu::LaunchOp target,
                                                                      transform::ApplyToEachResultList &results,
                                                                      transform::TransformState &state) {
  std::string why;
  FailureOr<gpu::LaunchOp> launch = kforge::prefetchRowsToL2(rewriter, target, getAhead(), why);
  if (failed(launch))
    return emitSilenceableError() << why;
  results.push_back(*launch);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// StashRowsInSharedOp
//===----------------------------------------------------------------------===//

LogicalResult transform::StashRowsInSharedOp::verify() {
  int64_t quarters = getQuarters(); // (signed: I64Attr's getter is unsigned)
  if (quarters < 1 || quarters > 3)
    return emitOpError() << "quarters must be 1, 2 or 3 (of each vector's elements), not " << quarters;
  return success();
}

DiagnosedSilenceableFailure transform::StashRowsInSharedOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                       gpu::LaunchOp target,
                                                                       transform::ApplyToEachResultList &results,
                                                                       transform::TransformState &state) {
  std::string why;
  FailureOr<gpu::LaunchOp> launch = kforge::stashRowsInShared(rewriter, target, getQuarters(), why);
  if (failed(launch))
    return emitSilenceableError() << why;
  results.push_back(*launch);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// PipelineRowsOp
//===----------------------------------------------------------------------===//

LogicalResult transform::PipelineRowsOp::verify() {
  int64_t blocks = getBlocks(); // (signed: I64Attr's getter is unsigned)
  if (blocks < 1)
    return emitOpError() << "blocks must be positive, not " << blocks;
  return success();
}

DiagnosedSilenceableFailure transform::PipelineRowsOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                  gpu::LaunchOp target,
                                                                  transform::ApplyToEachResultList &results,
                                                                  transform::TransformState &state) {
  std::string why;
  FailureOr<gpu::LaunchOp> launch = kforge::pipelineRows(rewriter, target, getBlocks(), why);
  if (failed(launch))
    return emitSilenceableError() << why;
  results.push_back(*launch);
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

namespace {
class KforgeTransformExtension : public transform::TransformDialectExtension<KforgeTransformExtension> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KforgeTransformExtension)
  using Base::Base;

  void init() {
    declareGeneratedDialect<tensor::TensorDialect>();
    declareGeneratedDialect<linalg::LinalgDialect>();
    declareGeneratedDialect<gpu::GPUDialect>();
    declareGeneratedDialect<scf::SCFDialect>();
    declareGeneratedDialect<arith::ArithDialect>();
    declareGeneratedDialect<affine::AffineDialect>();
    declareGeneratedDialect<memref::MemRefDialect>();
    declareGeneratedDialect<vector::VectorDialect>();
    declareGeneratedDialect<LLVM::LLVMDialect>();
    declareGeneratedDialect<NVVM::NVVMDialect>();
    declareGeneratedDialect<nvgpu::NVGPUDialect>();
    declareGeneratedDialect<math::MathDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "kforge/TransformOps/KforgeTransformOps.cpp.inc"
        >();
  }
};
} // namespace

void kforge::registerKforgeTransformExtension(DialectRegistry &registry) {
  registry.addExtensions<KforgeTransformExtension>();
}
