//===- MmaWgmma.cpp - matmul_to_mma_sync on Hopper: wgmma and TMA -------------===//
//
// The Hopper half of the mma emitter (MmaEmitter.h): warpgroup MMA (wgmma.mma_async m64nNk16) reading 128-byte
// swizzled stages through shared-memory descriptors, and the K loop whose stages the tensor memory accelerator
// fills (one thread issues the bulk tensor copies, completing on each stage's mbarrier).
//
//===----------------------------------------------------------------------===//

#include "MmaEmitter.h"
#include "TensorMap.h"

#include "kforge/Transforms/KernelAssembly.h"
#include "kforge/Transforms/KernelRequests.h"

using namespace mlir;
using namespace kforge::mma;

SmallVector<Value> MmaEmitter::afterWgmmaLoop(scf::ForOp loop) {
  if (plan.wgmmaInFlight > 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(0));
  return SmallVector<Value>(loop.getResults());
}

Value MmaEmitter::sharedPointer(Value buffer, Value bytes) {
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 3), sharedByteAddress(buffer, bytes));
}

Value MmaEmitter::scaled(Value v, int64_t factor) {
  AffineExpr d = getAffineDimExpr(0, ctx);
  return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d * factor), ValueRange{v});
}

void MmaEmitter::issueTileTma(Value kOff, Value stage) {
  int64_t rowBytes = 128; // a swizzled row: 64 16-bit elements or 32 f32
  int64_t aStageBytes = plan.m * rowBytes, bStageBytes = plan.n * plan.blockK * plan.elementBytes();
  Value bar = barrier(stage);
  NVVM::MBarrierArriveExpectTxOp::create(b, loc, /*res=*/Type(), bar, i32(aStageBytes + bStageBytes),
                                         NVVM::MemScopeKindAttr(), BoolAttr(), /*predicate=*/Value());
  // The copies' destination is in the shared::cluster window (a block without a cluster is a cluster of
  // one, its shared::cta addresses valid there), as PTX's cp.async.bulk.tensor.shared::cluster takes it.
  // cluster_multicast: the shared operand's copies go to both blocks of the pair (mask 0b11: cluster ranks 0
  // and 1), each completing on the mbarrier at the same place in each block; each block copies its half.
  auto copy = [&](Value map, Value shared, ValueRange coordinates, bool multicast = false) {
    Value destination = LLVM::AddrSpaceCastOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 7), shared);
    Value descriptor = LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), map);
    Value mask = multicast ? arith::ConstantIntOp::create(b, loc, b.getI16Type(), 3).getResult() : Value();
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, destination, descriptor, coordinates, bar, /*im2colOffsets=*/ValueRange{}, mask,
        /*l2CacheHint=*/Value(), NVVM::TMALoadModeAttr(), BoolAttr(), NVVM::CTAGroupKindAttr(),
        /*predicate=*/Value());
  };
  if (plan.multicast)
    issueSharedHalf(kOff, stage, copy);
  if (plan.multicast != 'a')
    issueBoxesOf(/*isA=*/true, kOff, stage, copy);
  if (plan.multicast != 'b')
    issueBoxesOf(/*isA=*/false, kOff, stage, copy);
}

void MmaEmitter::issueBoxesOf(bool isA, Value kOff, Value stage, CopyBox copy) {
  int64_t rowBytes = 128, atom = plan.swizzleRow();
  int64_t aStageBytes = plan.m * rowBytes, bStageBytes = plan.n * plan.blockK * plan.elementBytes();
  // Coordinates are innermost first: (column, row).
  if (isA) {
    if (!plan.aTransposed) {
      copy(aMap, sharedPointer(aShared, scaled(stage, aStageBytes)),
           {i32(add(plan.aGlobal.col, kOff, 0)), i32(plan.aGlobal.row)}, false);
      return;
    }
    for (int64_t a = 0; a < plan.m / atom; ++a) { // A as K x M: one box per 64-column atom of M, as B's along N
      Value at = add(scaled(stage, aStageBytes), index(a * plan.blockK * rowBytes), 0);
      copy(aMap, sharedPointer(aShared, at),
           {i32(add(plan.aGlobal.col, index(0), a * atom)), i32(add(plan.aGlobal.row, kOff, 0))}, false);
    }
    return;
  }
  if (plan.bTransposed) { // B as N x K: one box as A's (N rows x 64 of K)
    copy(bMap, sharedPointer(bShared, scaled(stage, bStageBytes)),
         {i32(add(plan.bGlobal.col, kOff, 0)), i32(plan.bGlobal.row)}, false);
    return;
  }
  for (int64_t a = 0; a < plan.n / atom; ++a) {
    Value at = add(scaled(stage, bStageBytes), index(a * plan.blockK * rowBytes), 0);
    copy(bMap, sharedPointer(bShared, at),
         {i32(add(plan.bGlobal.col, index(0), a * atom)), i32(add(plan.bGlobal.row, kOff, 0))}, false);
  }
}

void MmaEmitter::issueSharedHalf(Value kOff, Value stage, CopyBox copy) {
  bool isA = plan.multicast == 'a';
  int64_t rowBytes = 128, atom = plan.swizzleRow(), boxes = plan.sharedBoxes();
  int64_t stageBytes = isA ? plan.m * rowBytes : plan.n * plan.blockK * plan.elementBytes();
  Value map = isA ? aMap : bMap, buffer = isA ? aShared : bShared;
  const kforge::GlobalTile &global = isA ? plan.aGlobal : plan.bGlobal;
  AffineExpr s = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  if (boxes == 1) {
    // One box of the tile's rows (A as M x K, B as N x K) along K: this block copies rows [r h, (r + 1) h) of
    // it, h = rows / 2 (whole 8-row swizzle atoms: the swizzle, by address, is the same at that offset).
    int64_t half = (isA ? plan.m : plan.n) / 2;
    Value at = affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, s * stageBytes + r * (half * rowBytes)),
                                             ValueRange{stage, clusterRank});
    Value row =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, s + r * half), ValueRange{global.row, clusterRank});
    copy(map, sharedPointer(buffer, at), {i32(add(global.col, kOff, 0)), i32(row)}, true);
    return;
  }
  // One box per 64-column atom (A as K x M, B as K x N): this block copies atoms [r n, (r + 1) n), n = boxes / 2.
  for (int64_t h = 0; h < boxes / 2; ++h) {
    Value atomIndex =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, s * (boxes / 2) + h), ValueRange{clusterRank});
    Value at = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(2, 0, s * stageBytes + r * (plan.blockK * rowBytes)), ValueRange{stage, atomIndex});
    Value column =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, s + r * atom), ValueRange{global.col, atomIndex});
    copy(map, sharedPointer(buffer, at), {i32(column), i32(add(global.row, kOff, 0))}, true);
  }
}

void MmaEmitter::onFirstThread(llvm::function_ref<void()> then) {
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, index(0));
  auto branch = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  then();
}

void MmaEmitter::createTensorMaps() {
  // (cluster_multicast with one box of the shared operand: each block copies half its rows.)
  int64_t aRows = plan.aTransposed ? plan.blockK : plan.m, bRows = plan.bTransposed ? plan.n : plan.blockK;
  if (plan.multicast && plan.sharedBoxes() == 1)
    (plan.multicast == 'a' ? aRows : bRows) /= 2;
  aMap = kforge::createTensorMap2d(b, loc, plan.launch, plan.aGlobal.global, aRows, plan.swizzleRow());
  bMap = kforge::createTensorMap2d(b, loc, plan.launch, plan.bGlobal.global, bRows, plan.swizzleRow());
}

SmallVector<Value> MmaEmitter::tmaKLoop(ArrayRef<Value> init) {
  int64_t stages = plan.asyncStages, tiles = plan.tiles(), ahead = plan.prefetch();
  createTensorMaps();
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

void MmaEmitter::emitWarpSpecialized() {
  allocateStages();
  createTensorMaps();
  if (plan.multicast)
    formClusters();
  int64_t stages = plan.asyncStages, consumerWarps = plan.consumerThreads() / 32;
  // (cluster_multicast: a stage is empty once the consumer warps of both blocks are done with it.)
  int64_t releases = plan.multicast ? 2 * consumerWarps : consumerWarps;
  onFirstThread([&] {
    for (int64_t s = 0; s < stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, barrier(index(s)), i32(1), /*predicate=*/Value());
      NVVM::MBarrierInitOp::create(b, loc, emptyBarrier(index(s)), i32(releases), /*predicate=*/Value());
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  // The only barrier of the whole block: the mbarriers are initialised before anyone waits on them (in a
  // cluster, before the other block's multicast copies and arrivals reach them: the pair meets).
  if (plan.multicast)
    clusterBarrier(/*aligned=*/true);
  else
    gpu::BarrierOp::create(b, loc);
  // The role by the warp's index as lane 0 has it (shfl.sync): a value ptxas sees is the same across the warp,
  // as CUTLASS picks its warpgroups' roles. Under a branch it cannot prove uniform, ptxas serializes the wgmma
  // ("serialized due to program dependence on compiler-inserted WG.AR in divergent path", seen on the 256x128
  // and partial-tile forms).
  Value warp = i32(affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx).floorDiv(32)),
                                                 ValueRange{thread}));
  Value warpOfLane0 = NVVM::ShflOp::create(b, loc, b.getI32Type(), i32(-1), warp, i32(0), i32(31),
                                           NVVM::ShflKindAttr::get(ctx, NVVM::ShflKind::idx), UnitAttr());
  Value consumer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warpOfLane0, i32(plan.consumerThreads() / 32));
  Value producer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, index(plan.consumerThreads()));
  if (tileLoop)
    b.setInsertionPoint(anchor); // (in the loop over tiles)
  auto roles = scf::IfOp::create(b, loc, consumer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    if (!tileLoop) // (persistent: once, before the consumers' loop over tiles; splitTileLoopByRole)
      rebalanceRegisters(/*consumers=*/true);
    storeResults(consumerKLoop(initialAccumulators()));
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    if (!tileLoop)
      rebalanceRegisters(/*consumers=*/false);
    guarded(producer, [&] { producerKLoop(); });
  }
  // producer_warpgroup: the kernel is compiled for the block's whole register file (.maxnreg), which
  // setmaxnreg shares out; below that, the consumers' setmaxnreg.inc would wait forever for registers.
  if (plan.producerWarpgroup)
    plan.launch->setAttr(kforge::requests::kMaxRegisters, b.getI64IntegerAttr(plan.kernelRegisters()));
  if (tileLoop) {
    rolesBranch = roles;
    consumerRole = consumer;
  }
}

void MmaEmitter::rebalanceRegisters(bool consumers) {
  if (!plan.producerWarpgroup)
    return;
  // Each warpgroup runs its own setmaxnreg (all its warps: the producer warpgroup's idle warps too).
  auto action = consumers ? NVVM::SetMaxRegisterAction::increase : NVVM::SetMaxRegisterAction::decrease;
  NVVM::SetMaxRegisterOp::create(b, loc, consumers ? plan.consumerRegisters() : plan.producerRegisters(), action);
}

void MmaEmitter::formClusters() {
  gpu::LaunchOp launch = plan.launch;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(launch);
    Value one = index(1), two = index(2);
    launch.getClusterSizeXMutable().assign(plan.clusterDim == 0 ? two : one);
    launch.getClusterSizeYMutable().assign(plan.clusterDim == 1 ? two : one);
    launch.getClusterSizeZMutable().assign(one);
  }
  // A launch with clusters has six more region arguments after the 12 of its blocks and threads (the cluster's
  // ids and sizes), before the workgroup attributions.
  Block &body = launch.getBody().front();
  for (unsigned i = 0; i < 6; ++i)
    body.insertArgument(gpu::LaunchOp::kNumConfigRegionAttributes + i, b.getIndexType(), loc);
  // A cluster's blocks are consecutive along its dimension (clusters of 2 x 1 or 1 x 2): its rank is the block
  // index's parity there.
  Value id = plan.clusterDim == 0 ? launch.getBlockIds().x : launch.getBlockIds().y;
  clusterRank =
      affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx) % 2), ValueRange{id});
  // The pair meets again before either block exits: no arrival reaches an exited block's mbarrier.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  clusterBarrier(/*aligned=*/false);
}

void MmaEmitter::clusterBarrier(bool aligned) {
  UnitAttr alignedAttr = aligned ? b.getUnitAttr() : UnitAttr();
  NVVM::ClusterArriveOp::create(b, loc, alignedAttr);
  NVVM::ClusterWaitOp::create(b, loc, alignedAttr);
}

void MmaEmitter::finish() {
  if (tileLoop)
    splitTileLoopByRole(rolesBranch, consumerRole);
}

void MmaEmitter::splitTileLoopByRole(scf::IfOp roles, Value consumer) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(tileLoop);
  auto outer = scf::IfOp::create(b, loc, consumer, /*withElseRegion=*/true);
  tileLoop->moveBefore(outer.thenBlock()->getTerminator());
  b.setInsertionPoint(outer.elseBlock()->getTerminator());
  IRMapping mapping;
  b.clone(*tileLoop, mapping);
  // Each loop keeps its role's branch, inlined where the branch was.
  auto keep = [](scf::IfOp branch, bool thenSide) {
    Block *from = thenSide ? branch.thenBlock() : branch.elseBlock();
    branch->getBlock()->getOperations().splice(Block::iterator(branch), from->getOperations(), from->begin(),
                                               std::prev(from->end()));
    branch.erase();
  };
  auto producerRoles = cast<scf::IfOp>(mapping.lookup(roles.getOperation()));
  keep(roles, /*thenSide=*/true);
  keep(producerRoles, /*thenSide=*/false);
  // producer_warpgroup: each role's registers once, before its loop over tiles.
  b.setInsertionPointToStart(outer.thenBlock());
  rebalanceRegisters(/*consumers=*/true);
  b.setInsertionPointToStart(outer.elseBlock());
  rebalanceRegisters(/*consumers=*/false);
}

void MmaEmitter::producerKLoop() {
  int64_t stages = plan.asyncStages;
  auto loop = scf::ForOp::create(b, loc, index(0), index(plan.tiles()), index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  AffineExpr t = getAffineDimExpr(0, ctx);
  Value tile = loop.getInductionVar(), loaded = sequence(tile);
  Value stage = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t % stages), ValueRange{loaded});
  // Filling n = t / S of a stage (t counting every tile loaded) needs the consumers done with fill n - 1: the
  // empty mbarrier's phase n - 1, of parity (n + 1) % 2. For n = 0 that is the phase before a fresh mbarrier's
  // first, which counts as complete.
  Value parity =
      affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (t.floorDiv(stages) + 1) % 2), ValueRange{loaded});
  NVVM::MBarrierTryWaitParityOp::create(b, loc, emptyBarrier(stage), i32(parity), i32(kTryWaitTicks));
  issueTileTma(scaled(tile, plan.blockK), stage);
}

SmallVector<Value> MmaEmitter::consumerKLoop(ArrayRef<Value> init) {
  int64_t stages = plan.asyncStages, inFlight = plan.wgmmaInFlight;
  auto loop = scf::ForOp::create(b, loc, index(0), index(plan.tiles()), index(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    AffineExpr t = getAffineDimExpr(0, ctx);
    Value tile = loop.getInductionVar(), loaded = sequence(tile);
    Value stage = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t % stages), ValueRange{loaded});
    Value parity =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t.floorDiv(stages) % 2), ValueRange{loaded});
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier(stage), i32(parity), i32(kTryWaitTicks));
    SmallVector<Value> acc = wgmmaTile(stage, SmallVector<Value>(loop.getRegionIterArgs()));
    // wgmmaTile waited until at most `inFlight` tiles' wgmma run: tile t - inFlight's are done, and (a
    // warpgroup's wgmma finishing together) so are its warp's reads of that stage. One arrival per warp.
    Value release = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));
    if (inFlight > 0)
      release = arith::AndIOp::create(b, loc, release,
                                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, tile, index(inFlight)));
    // (The stage index wraps below 0 at t < inFlight, where nothing arrives.)
    Value done =
        affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (t - inFlight) % stages), ValueRange{loaded});
    arriveIf(release, emptyBarrier(done));
    if (plan.multicast)
      arriveOnPeerIf(release, emptyBarrier(done));
    scf::YieldOp::create(b, loc, acc);
  }
  SmallVector<Value> results = afterWgmmaLoop(loop);
  // Persistent, the producer fills these stages again for the block's next tile: the tiles still in flight at
  // the loop's end are done now (afterWgmmaLoop waited for every wgmma); their warps release them too.
  if (tileLoop)
    for (int64_t j = 1; j <= inFlight; ++j) {
      Value last = sequence(index(plan.tiles() - j));
      Value done = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx) % stages),
                                                 ValueRange{last});
      arriveIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0)), emptyBarrier(done));
    }
  return results;
}

void MmaEmitter::arriveIf(Value condition, Value mbarrier) {
  Type i32Type = b.getI32Type();
  Value predicate = arith::ExtUIOp::create(b, loc, i32Type, condition);
  Value address = LLVM::PtrToIntOp::create(b, loc, i32Type, mbarrier);
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{predicate, address}, kforge::kPredicatedMbarrierArrive,
                            "r,r,~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
}

void MmaEmitter::arriveOnPeerIf(Value condition, Value mbarrier) {
  Type i32Type = b.getI32Type();
  Value predicate = arith::ExtUIOp::create(b, loc, i32Type, condition);
  Value address = LLVM::PtrToIntOp::create(b, loc, i32Type, mbarrier);
  Value peer = i32(affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, 1 - getAffineDimExpr(0, ctx)),
                                                 ValueRange{clusterRank}));
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{predicate, address, peer},
                            kforge::kPredicatedPeerMbarrierArrive, "r,r,r,~{memory}", /*has_side_effects=*/true,
                            /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                            ArrayAttr());
}

Value MmaEmitter::sequence(Value t) {
  if (!round)
    return t;
  AffineExpr tile = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  return affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, r * plan.tiles() + tile), ValueRange{t, round});
}

void MmaEmitter::makePersistent() {
  gpu::LaunchOp launch = plan.launch;
  int64_t tiles = plan.gridX * plan.gridY, blocks = std::min(plan.persistentBlocks, tiles);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(launch);
    launch.getGridSizeXMutable().assign(index(blocks));
    launch.getGridSizeYMutable().assign(index(1));
  }
  Block &body = launch.getBody().front();
  SmallVector<Operation *> moved;
  for (Operation &op : body.without_terminator())
    moved.push_back(&op);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&body);
  Value blockX = launch.getBlockIds().x;
  tileLoop = scf::ForOp::create(b, loc, blockX, index(tiles), index(blocks));
  for (Operation *op : moved)
    op->moveBefore(tileLoop.getBody()->getTerminator());
  b.setInsertionPointToStart(tileLoop.getBody());
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  Value tile = tileLoop.getInductionVar();
  Value column = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d0 % plan.gridX), ValueRange{tile});
  Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d0.floorDiv(plan.gridX)), ValueRange{tile});
  round =
      affine::AffineApplyOp::create(b, loc, AffineMap::get(2, 0, (d0 - d1).floorDiv(blocks)), ValueRange{tile, blockX});
  Value gridX = index(plan.gridX), gridY = index(plan.gridY);
  // The body's block ids and grid sizes are the tile's and the grid's as launched before.
  auto inBody = [&](OpOperand &use) {
    Operation *owner = use.getOwner();
    return tileLoop->isProperAncestor(owner) && owner != column.getDefiningOp() && owner != row.getDefiningOp() &&
           owner != round.getDefiningOp();
  };
  blockX.replaceUsesWithIf(column, inBody);
  launch.getBlockIds().y.replaceUsesWithIf(row, inBody);
  launch.getGridSize().x.replaceUsesWithIf(gridX, inBody);
  launch.getGridSize().y.replaceUsesWithIf(gridY, inBody);
  // So are the ids and sizes the body reads with gpu.block_id and gpu.grid_dim (as the block mapping writes
  // them): left alone, every round of a block would compute the tile of its launch position (seen on an H100:
  // 97% of the output unwritten).
  SmallVector<Operation *> reads;
  tileLoop.getBody()->walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::GridDimOp>(op))
      reads.push_back(op);
  });
  for (Operation *op : reads) {
    gpu::Dimension dimension = isa<gpu::BlockIdOp>(op) ? cast<gpu::BlockIdOp>(op).getDimension()
                                                        : cast<gpu::GridDimOp>(op).getDimension();
    bool blockId = isa<gpu::BlockIdOp>(op);
    Value replacement = dimension == gpu::Dimension::x   ? (blockId ? column : gridX)
                        : dimension == gpu::Dimension::y ? (blockId ? row : gridY)
                                                         : Value();
    if (!replacement)
      continue; // (z: the grid is 1 along z, as it was)
    b.replaceOp(op, replacement);
  }
}

Value kforge::mma::wgmmaDescriptor(OpBuilder &b, Location loc, Value address, int64_t leadingBytes,
                                   int64_t strideBytes) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };
  Value start = arith::ShRUIOp::create(b, loc, arith::AndIOp::create(b, loc, address, constant(0x3FFFF)), constant(4));
  int64_t fixed = ((leadingBytes >> 4) << 16) | ((strideBytes >> 4) << 32) | (int64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, constant(fixed));
}

Value MmaEmitter::sharedAddress(Value buffer, Value stage, int64_t stageBytes, Value part, int64_t partBytes) {
  AffineExpr s0 = getAffineSymbolExpr(0, ctx), s1 = getAffineSymbolExpr(1, ctx);
  Value bytes = affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 2, s0 * stageBytes + s1 * partBytes),
                                              ValueRange{stage, part});
  return sharedByteAddress(buffer, bytes);
}

Value MmaEmitter::sharedByteAddress(Value buffer, Value bytes) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), add(base, bytes, 0));
}

SmallVector<Value> MmaEmitter::wgmmaTile(Value stage, SmallVector<Value> acc) {
  if (plan.swapAB)
    return wgmmaTileSwapped(stage, std::move(acc));
  AffineExpr t = getAffineDimExpr(0, ctx);
  Value group = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t.floorDiv(128)), ValueRange{thread});
  int64_t rowBytes = 128; // a swizzled row: 64 16-bit elements or 32 f32
  int64_t aStageBytes = plan.m * rowBytes, bStageBytes = plan.n * plan.blockK * plan.elementBytes();
  // The warpgroup's 64 rows of A (64 x 128 bytes each group; A as K x M: its 64-column atom of M, block_k
  // rows of 128 bytes) and the whole of B's stage.
  Value aStart =
      sharedAddress(aShared, stage, aStageBytes, group, plan.aStagedKMajor() ? 64 * rowBytes : plan.blockK * rowBytes);
  Value bStart = sharedAddress(bShared, stage, bStageBytes, index(0), 0);
  WgmmaTileLayout layout;
  layout.n = plan.n;
  layout.blockK = plan.blockK;
  layout.instructionK = plan.instructionK();
  layout.aMMajor = !plan.aStagedKMajor();
  layout.bKMajor = plan.bStagedKMajor();
  layout.type = plan.tf32              ? NVVM::WGMMATypes::tf32
                : operandType.isBF16() ? NVVM::WGMMATypes::bf16
                                       : NVVM::WGMMATypes::f16;
  layout.inFlight = plan.wgmmaInFlight;
  return wgmmaMultiply(b, loc, layout, aStart, bStart, acc);
}

SmallVector<Value> MmaEmitter::wgmmaTileSwapped(Value stage, SmallVector<Value> acc) {
  int64_t rowBytes = 128, atom = plan.swizzleRow(), steps = plan.blockK / plan.instructionK();
  // The instruction's B: A's stage whole (the block's M rows of 32 f32 of K, K-major, 8-row groups 1024 bytes
  // apart), 32 bytes along its rows per step of 8 of K.
  Value aStart = sharedAddress(aShared, stage, plan.m * rowBytes, index(0), 0);
  // Lane l of warp w reads its rows g (+ 8) of the warp's 16 rows of B^T (the block's columns swapColumn(0)
  // and (1)) at K t (+ 4) of each step: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4), as
  // mma.sync m16n8k8's A. In B's stage, column c is in atom c / 32 at chunk (c % 32) / 4 ^ (k % 8) of row k;
  // a warp's 32 reads of one register fall in 8 chunks of 4 rows of K (32 banks).
  AffineExpr d = getAffineDimExpr(0, ctx);
  // A wgmma reads its register operand until a wait_group covers it (PTX: writing those registers before is
  // undefined), and this tile's loads write the registers the previous tile's wgmma read (the same values of the
  // loop body): with a tile in flight, it is waited for here, after the wait for this tile's stage, before the
  // loads. (On an H100 without this wait every trial with overlap was wrong: relative L2 error 0.49.)
  if (plan.wgmmaInFlight > 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(0));
  SmallVector<SmallVector<Value>> fragments(steps);
  for (int64_t rowHalf = 0; rowHalf < 2; ++rowHalf) {
    Value column = swapColumn(rowHalf);
    Value atomIndex = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d.floorDiv(atom)), column);
    Value inAtom = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d % atom), column);
    Value inChunk = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, d % 4), column);
    for (int64_t kHalf = 0; kHalf < 2; ++kHalf)
      for (int64_t step = 0; step < steps; ++step) {
        Value k = add(quad, index(0), step * plan.instructionK() + 4 * kHalf);
        Value at = arith::AddIOp::create(b, loc, swizzled(k, inAtom), inChunk);
        Value element = memref::LoadOp::create(b, loc, bShared, ValueRange{stage, atomIndex, k, at});
        fragments[step].push_back(element);
      }
  }
  // (Pushed (g, t), (g, t + 4), (g + 8, t), (g + 8, t + 4) per step: PTX's order is a0 a1 a2 a3.)
  Type f32 = b.getF32Type(), i32Type = b.getI32Type(), i64 = b.getI64Type();
  int64_t count = int64_t(acc.size()); // m / 2: the instruction's N is the block's rows
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(count, f32));
  std::string assembly = kforge::wgmmaTf32RegisterA(plan.m);
  std::string constraints = kforge::wgmmaTf32RegisterAConstraints(plan.m);
  Value scaleD = arith::ConstantIntOp::create(b, loc, i32Type, 1);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t step = 0; step < steps; ++step) {
    const SmallVector<Value> &f = fragments[step];
    SmallVector<Value> operands(acc.begin(), acc.end());
    for (Value element : {f[0], f[2], f[1], f[3]})
      operands.push_back(tf32Register(element));
    Value address = arith::AddIOp::create(b, loc, aStart, arith::ConstantIntOp::create(b, loc, i64, step * 32));
    operands.push_back(wgmmaDescriptor(b, loc, address, /*leadingBytes=*/16, /*strideBytes=*/8 * rowBytes));
    operands.push_back(scaleD);
    auto wgmma = LLVM::InlineAsmOp::create(b, loc, structType, operands, assembly, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
    for (int64_t i = 0; i < count; ++i)
      acc[i] = LLVM::ExtractValueOp::create(b, loc, wgmma.getResult(0), ArrayRef<int64_t>{i});
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(plan.wgmmaInFlight));
  return acc;
}

SmallVector<Value> kforge::mma::wgmmaMultiply(OpBuilder &b, Location loc, const WgmmaTileLayout &layout, Value aStart,
                                              Value bStart, ArrayRef<Value> acc) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  SmallVector<Type> fields(acc.size(), f32);
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  int64_t rowBytes = 128; // a swizzled row: 64 16-bit elements or 32 f32
  Value packed = LLVM::UndefOp::create(b, loc, structType);
  for (auto [i, v] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, v, ArrayRef<int64_t>{int64_t(i)});
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Type i64 = b.getI64Type();
  // One instruction's K along a K-major row: 16 bf16/f16 or 8 tf32, 32 bytes either way.
  int64_t stepK = layout.instructionK, stepBytes = 32;
  for (int64_t step = 0; step < layout.blockK / stepK; ++step) {
    // A as K x M is M-major like B as K x N (16 of K: two 8-row groups; the instruction transposes it).
    Value aAddress = arith::AddIOp::create(
        b, loc, aStart,
        arith::ConstantIntOp::create(b, loc, i64, layout.aMMajor ? step * 16 * rowBytes : step * stepBytes));
    // B as N x K is K-major like A (32 bytes along its rows per step; the instruction does not transpose it).
    Value bAddress = arith::AddIOp::create(
        b, loc, bStart,
        arith::ConstantIntOp::create(b, loc, i64, layout.bKMajor ? step * stepBytes : step * 16 * rowBytes));
    Value descA = layout.aMMajor ? wgmmaDescriptor(b, loc, aAddress, /*leadingBytes=*/layout.blockK * rowBytes,
                                                   /*strideBytes=*/8 * rowBytes)
                                 : wgmmaDescriptor(b, loc, aAddress, /*leadingBytes=*/16, /*strideBytes=*/8 * rowBytes);
    Value descB = layout.bKMajor ? wgmmaDescriptor(b, loc, bAddress, /*leadingBytes=*/16, /*strideBytes=*/8 * rowBytes)
                                 : wgmmaDescriptor(b, loc, bAddress, /*leadingBytes=*/layout.blockK * rowBytes,
                                                   /*strideBytes=*/8 * rowBytes);
    packed = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, packed, descA, descB, NVVM::MMAShapeAttr::get(ctx, 64, layout.n, stepK),
        NVVM::WGMMATypesAttr::get(ctx, layout.type), NVVM::WGMMATypesAttr::get(ctx, layout.type),
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::MMALayoutAttr::get(ctx, layout.aMMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(ctx, layout.bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row),
        /*satfinite=*/NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // Wait for this tile's wgmma, or (in flight) for the previous tile's: this one's may still run while the
  // next tile is awaited and its wgmma issued; they accumulate into the same registers in order.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, uint64_t(layout.inFlight));
  SmallVector<Value> next;
  for (int64_t i = 0; i < int64_t(acc.size()); ++i)
    next.push_back(LLVM::ExtractValueOp::create(b, loc, packed, ArrayRef<int64_t>{i}));
  return next;
}
