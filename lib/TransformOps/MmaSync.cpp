//===- MmaSync.cpp - transform.kforge.matmul_to_mma_sync -------------------===//
//
// A warp's bufferized matmul tile computed by tensor-core mma.sync (m16n8k16, bf16/f16 operands, f32
// accumulators), with its fill and its elementwise epilogue folded into the accumulators' registers.
// Upstream's nvgpu.rewrite_matmul_as_mma_sync takes only f16 x f16 -> f16 tiles of exactly one instruction's
// shape, and nvgpu.mma.sync cannot be lowered for bf16 in MLIR 22, so this emits nvvm.mma.sync directly.
// The staged forms (shared memory, cp.async, ldmatrix) are emitted here too, Hopper's wgmma and TMA in
// MmaWgmma.cpp; what a rewrite needs to know and checks first is its plan (MmaPlan.h).
//
//===----------------------------------------------------------------------===//

#include "MmaEmitter.h"
#include "Rewrites.h"
#include "TensorMap.h"

using namespace mlir;
using kforge::innermostStride;
using namespace kforge::mma;

void MmaEmitter::emit() {
  // Warp-specialized, the consumers' K loop and epilogue are one branch, so all of it goes where the epilogue
  // was (after the views it reads, defined between the matmul and it; the matmul's own operands come earlier).
  Operation *epilogue = plan.neighbours.epilogue.empty() ? nullptr : plan.neighbours.epilogue.back().getOperation();
  anchor = plan.warpSpecialized && epilogue ? epilogue : plan.matmul.getOperation();
  b.setInsertionPoint(anchor);
  // Persistent, the launch's body becomes a loop over tiles; what is done once (the lanes' coordinates, the
  // stages, the mbarriers) goes before it.
  if (plan.persistentBlocks > 0) {
    makePersistent();
    b.setInsertionPoint(tileLoop);
  }
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
  if (plan.swapAB) {
    // swap_ab: lane l's rows of B^T g + 8 h (g = l / 4) are the block's columns (g % 4) + 16 (g / 4) + 4 h, and
    // warp w's start at 32 (w / 2) + 8 (w % 2) (a pair of warps covers a 32-column atom of B's stage): a warp's
    // reads of one fragment register then fall in 8 chunks of the swizzled rows (32 banks; plain g + 8 h would
    // take 4 chunks, a 2-way conflict). The accumulators' columns follow (accAt).
    colBase = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, l.floorDiv(32).floorDiv(2) * 32 + l.floorDiv(32) % 2 * 8), ValueRange{thread});
    swapGroup = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l.floorDiv(4) % 4 + l.floorDiv(16) * 16),
                                              ValueRange{lane});
  }
  pair = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (l % 4) * 2), ValueRange{lane});
  quad = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 4), ValueRange{lane});
  aSource = plan.a;
  bSource = plan.b;
  if (plan.warpSpecialized)
    return emitWarpSpecialized();
  SmallVector<Value> accumulators = initialAccumulators();
  SmallVector<Value> results = plan.blockK > 0 ? stagedKLoop(accumulators) : kLoop(accumulators);
  storeResults(results);
}

void MmaEmitter::storeResults(ArrayRef<Value> results) {
  if (!plan.neighbours.epilogue.empty())
    applyEpilogue(results);
  else
    storeAccumulators(results, plan.c);
}

void MmaEmitter::blockBarrier() {
  if (!plan.warpSpecialized) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  // The producer warp is not there (it left after its last copy): named barrier 1 over the consumers alone.
  Value id = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  Value count = arith::ConstantIntOp::create(b, loc, b.getI32Type(), plan.consumerThreads());
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, count, NVVM::BarrierReductionAttr(), Value());
}

SmallVector<Value> MmaEmitter::initialAccumulators() {
  SmallVector<Value> acc;
  Value fillValue = plan.neighbours.fill ? plan.neighbours.fill.getDpsInputs()[0] : Value();
  for (int64_t i = 0; i < mTiles(); ++i)
    for (int64_t j = 0; j < nTiles(); ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e)
          acc.push_back(fillValue ? fillValue
                                  : memref::LoadOp::create(b, loc, plan.c,
                                                           ValueRange{clamp(accAt(i, j, h, e).first, plan.mExtent),
                                                                      clamp(accAt(i, j, h, e).second, plan.nExtent)})
                                        .getResult());
  return acc;
}

/// A TF32 operand as the 32-bit register mma.sync takes it (the f32's bits; the tensor core reads the top 19).
Value MmaEmitter::tf32Register(Value element) { return arith::BitcastOp::create(b, loc, b.getI32Type(), element); }

SmallVector<Value> MmaEmitter::loadA(int64_t i, Value kk) {
  SmallVector<Value> regs;
  if (plan.tf32) { // m16n8k8 .tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
    for (auto [rowHalf, colHalf] : {std::pair{0, 0}, {1, 0}, {0, 1}, {1, 1}}) {
      Value row = add(group, rowBase, i * kTileM + 8 * rowHalf);
      Value col = add(quad, kk, 4 * colHalf);
      regs.push_back(tf32Register(memref::LoadOp::create(b, loc, aSource, ValueRange{row, col})));
    }
    return regs;
  }
  auto pairType = VectorType::get({2}, operandType);
  for (auto [rowHalf, colHalf] : {std::pair{0, 0}, {1, 0}, {0, 1}, {1, 1}}) {
    Value row = add(group, rowBase, i * kTileM + 8 * rowHalf);
    Value col = add(pair, kk, 8 * colHalf);
    regs.push_back(packPair(vector::LoadOp::create(b, loc, pairType, aSource, ValueRange{row, col})));
  }
  return regs;
}

SmallVector<Value> MmaEmitter::loadB(int64_t j, Value kk) {
  SmallVector<Value> regs;
  Value col = add(group, colBase, j * kTileN);
  if (plan.tf32) { // m16n8k8 .tf32: b0 (K t, column g), b1 (K t + 4, column g)
    for (int64_t half = 0; half < 2; ++half) {
      Value k = add(quad, kk, 4 * half);
      Value element = plan.bTransposed ? memref::LoadOp::create(b, loc, bSource, ValueRange{col, k})
                                       : memref::LoadOp::create(b, loc, bSource, ValueRange{k, col});
      regs.push_back(tf32Register(element));
    }
    return regs;
  }
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

SmallVector<Value> MmaEmitter::multiplySteps(Value kBase, int64_t steps, SmallVector<Value> acc) {
  SmallVector<SmallVector<SmallVector<Value>>> aRegs(steps), bRegs(steps);
  for (int64_t step = 0; step < steps; ++step) {
    Value kk = add(kBase, index(0), step * plan.instructionK());
    for (int64_t i = 0; i < mTiles(); ++i)
      aRegs[step].push_back(plan.ldmatrix && inShared ? ldmatrixA(i, kk) : loadA(i, kk));
    // (TF32: ldmatrix cannot transpose 32-bit elements, so a B stored K x N is read element by element.)
    bool bByLdmatrix = plan.ldmatrix && inShared && !(plan.tf32 && !plan.bTransposed);
    for (int64_t j = 0; j < nTiles(); j += bByLdmatrix ? 2 : 1) {
      if (!bByLdmatrix) {
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

std::pair<SmallVector<Value>, SmallVector<Value>> MmaEmitter::ldmatrixBPair(int64_t j, Value kk) {
  AffineExpr l = getAffineDimExpr(0, ctx);
  if (plan.bTransposed) {
    // B as N x K, staged K-major as A is: untransposed matrices (columns 0-7, K 0-7), (0-7, K 8-15),
    // (8-15, K 0-7), (8-15, K 8-15): lane l receives (column l / 4, K 2(l % 4), +1) of each, b0b1 and b2b3
    // of tile j, then of tile j + 1. TF32: K 0-3 and 4-7 (16 bytes each), b0 and b1.
    int64_t half = plan.tf32 ? 4 : 8;
    Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 8 + l.floorDiv(16) * 8), lane);
    Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (l.floorDiv(8) % 2) * half), lane);
    SmallVector<Value> regs = ldmatrix(bSource, add(row, colBase, j * kTileN), add(col, kk, 0), /*transpose=*/false);
    return {{regs[0], regs[1]}, {regs[2], regs[3]}};
  }
  Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l % 8 + (l.floorDiv(8) % 2) * 8), lane);
  Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, l.floorDiv(16) * 8), lane);
  SmallVector<Value> regs = ldmatrix(bSource, add(row, kk, 0), add(col, colBase, j * kTileN), /*transpose=*/true);
  return {{regs[0], regs[1]}, {regs[2], regs[3]}};
}

Value MmaEmitter::threadItem(int64_t first, int64_t last) {
  AffineExpr t = getAffineDimExpr(0, ctx);
  if (first + threads() - 1 > last)
    return affine::AffineMinOp::create(b, loc, AffineMap::get(1, 0, {t + first, getAffineConstantExpr(last, ctx)}, ctx),
                                       ValueRange{thread});
  return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t + first), ValueRange{thread});
}

std::pair<Value, Value> MmaEmitter::vectorPosition(int64_t first, int64_t cols, int64_t rows, int64_t width) {
  AffineExpr t = getAffineDimExpr(0, ctx);
  int64_t perRow = cols / width;
  Value v = threadItem(first, rows * perRow - 1);
  Value row = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, t.floorDiv(perRow)), ValueRange{v});
  Value col = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, (t % perRow) * width), ValueRange{v});
  return {row, col};
}

MmaEmitter::TileShare MmaEmitter::loadTileShare(Value kOff) {
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

void MmaEmitter::storeTileShare(const TileShare &share, Value stage) {
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

Value MmaEmitter::stageView(Value buffer, Value stage) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets = {stage, b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(type.getDimSize(1)),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto viewType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
      {type.getDimSize(1), type.getDimSize(2)}, type, offsets, sizes, strides));
  return memref::SubViewOp::create(b, loc, viewType, buffer, offsets, sizes, strides);
}

void MmaEmitter::allocateStages() {
  Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<MemRefType> types = {stagedAType(plan, operandType, workgroup),
                                   stagedBType(plan, operandType, workgroup)};
  if (plan.tma)
    types.push_back(barriersType(plan, b, workgroup));
  SmallVector<Value> buffers = kforge::sharedBuffers(b, loc, plan.launch, types, /*swizzled=*/plan.wgmma);
  aShared = buffers[0];
  bShared = buffers[1];
  if (plan.tma)
    barriers = buffers[2];
}

SmallVector<Value> MmaEmitter::stagedKLoop(ArrayRef<Value> init) {
  allocateStages();
  if (plan.tma)
    return tmaKLoop(init);
  if (plan.asyncStages > 0)
    return asyncKLoop(init);
  return kforge::twoStageKLoop<TileShare>(
      b, loc, plan.k / plan.blockK, plan.blockK, init, [&](Value kOff, Value) { return loadTileShare(kOff); },
      [&](const TileShare &share, Value stage) { storeTileShare(share, stage); },
      [&](Value stage, SmallVector<Value> acc) {
        aSource = stageView(aShared, stage);
        bSource = stageView(bShared, stage);
        inShared = true;
        return multiplySteps(index(0), plan.blockK / plan.instructionK(), std::move(acc));
      });
}

void MmaEmitter::copyTileAsync(Value kOff, Value stage) {
  SmallVector<Value> tokens;
  // A vector past the data is zero-filled (cp.async with a source size of 0 bytes, or of the elements before
  // the edge) from a clamped, valid address: past K (the last tile of a K that block_k does not divide), zeros
  // add nothing to the products; past M or N (a partial tile), they make rows and columns nothing stores.
  bool partialK = plan.k % plan.blockK != 0;
  auto copy = [&](Value source, ValueRange from, Value shared, ValueRange to, Value elements) {
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(b, loc, shared, to, source, from,
                                                      b.getIndexAttr(plan.copyElements()),
                                                      /*srcElements=*/elements, /*bypassL1=*/b.getUnitAttr()));
  };
  // A whole copy, or 0 elements where `inside` is false (null: always inside, no source size).
  auto wholeOrNone = [&](Value inside) -> Value {
    return inside ? arith::SelectOp::create(b, loc, inside, index(plan.copyElements()), index(0)).getResult() : Value();
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
  int64_t lastKVector = plan.k - plan.copyElements(), lastKRow = plan.k - 1;
  // An operand stored K-major (A as M x K, B as N x K): `extent` rows (M or N) of K, vectors along K, each
  // row whole or past the edge (K-major rows, swizzled for wgmma).
  auto copyKMajor = [&](Value source, Value shared, int64_t rows, Value extent) {
    int64_t width = plan.copyElements();
    for (int64_t r = 0; r < rounds(rows, plan.blockK, width); ++r) {
      auto [row, col] = vectorPosition(r * threads(), plan.blockK, rows, width);
      Value to = plan.wgmma ? swizzled(row, col) : col;
      copy(source, ValueRange{clamp(row, extent), kRead(col, lastKVector)}, shared, ValueRange{stage, row, to},
           wholeOrNone(allOf({kIn(col), within(row, extent)})));
    }
  };
  // An operand stored along M or N (B as K x N, A as K x M): block_k rows of `cols` columns, vectors along the
  // columns; wgmma's stages keep them in 64-column atoms.
  auto copyMNMajor = [&](Value source, Value shared, int64_t cols, Value extent) {
    int64_t width = plan.copyElements();
    for (int64_t r = 0; r < rounds(plan.blockK, cols, width); ++r) {
      auto [row, col] = vectorPosition(r * threads(), cols, plan.blockK, width);
      // Along a partial M or N, the elements of the vector before the edge (none past it, where its start is
      // read from the last whole vector's instead: 16-byte aligned).
      Value kInside = kIn(row);
      Value elements = wholeOrNone(kInside);
      Value readCol = col;
      if (extent) {
        AffineExpr d0 = getAffineDimExpr(0, ctx), s0 = getAffineSymbolExpr(0, ctx);
        Value before = affine::AffineMinOp::create(
            b, loc, AffineMap::get(1, 1, {s0 - d0, getAffineConstantExpr(width, ctx)}, ctx), ValueRange{col, extent});
        before = arith::MaxSIOp::create(b, loc, before, index(0));
        elements = kInside ? arith::SelectOp::create(b, loc, kInside, before, index(0)).getResult() : before;
        readCol = affine::AffineMinOp::create(b, loc, AffineMap::get(1, 1, {d0, (s0 - 1).floorDiv(width) * width}, ctx),
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
  // An operand stored along M or N staged K-major (TF32 wgmma): each element copied alone (4 bytes) to its
  // place in a K-major swizzled row. A warp copies 4 rows of K by 8 columns (4 x 32 contiguous bytes read;
  // the 8 rows it writes have 8 swizzle phases, so its 32 elements land in 32 banks). Consecutive warps take
  // consecutive rows of K first: where the block's warps are a multiple of block_k / 4, a thread keeps its
  // rows of K and its swizzle phase through every round, so its copies differ by constant offsets only.
  auto copyTransposing = [&](Value source, Value shared, int64_t cols, Value extent) {
    AffineExpr e = getAffineDimExpr(0, ctx);
    int64_t kBlocks = plan.blockK / 4, last = cols * plan.blockK - 1;
    for (int64_t r = 0; r < rounds(cols, plan.blockK, /*width=*/1); ++r) {
      // (The last round's extra threads repeat the last element.)
      Value element = threadItem(r * threads(), last);
      auto at = [&](AffineExpr expr) {
        return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, expr), element);
      };
      Value x = at(e.floorDiv(32).floorDiv(kBlocks) * 8 + e % 8);        // M or N: the stage's row
      Value k = at(e.floorDiv(32) % kBlocks * 4 + (e % 32).floorDiv(8)); // K within the tile
      Value inChunk = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx) % 4), k);
      Value to = arith::AddIOp::create(b, loc, swizzled(x, k), inChunk);
      Value inside = allOf({kIn(k), within(x, extent)});
      Value elements = inside ? arith::SelectOp::create(b, loc, inside, index(1), index(0)).getResult() : Value();
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, shared, ValueRange{stage, x, to}, source, ValueRange{kRead(k, lastKRow), clamp(x, extent)},
          b.getIndexAttr(1), elements, /*bypassL1=*/UnitAttr())); // (cp.async.cg copies 16 bytes only)
    }
  };
  if (!plan.aTransposed)
    copyKMajor(plan.a, aShared, plan.m, plan.mExtent);
  else if (plan.aStagedKMajor()) // A as K x M, TF32 wgmma
    copyTransposing(plan.a, aShared, plan.m, plan.mExtent);
  else // A as K x M (wgmma only: it reads an M-major A)
    copyMNMajor(plan.a, aShared, plan.m, plan.mExtent);
  if (plan.bTransposed)
    copyKMajor(plan.b, bShared, plan.n, plan.nExtent);
  else if (plan.bStagedKMajor()) // B as K x N, TF32 wgmma
    copyTransposing(plan.b, bShared, plan.n, plan.nExtent);
  else
    copyMNMajor(plan.b, bShared, plan.n, plan.nExtent);
  lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
}

SmallVector<Value> MmaEmitter::asyncKLoop(ArrayRef<Value> init) {
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
        AffineMap::get(1, 0, {(t + ahead) * plan.blockK, getAffineConstantExpr((tiles - 1) * plan.blockK, ctx)}, ctx),
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
        multiplySteps(index(0), plan.blockK / plan.instructionK(), SmallVector<Value>(loop.getRegionIterArgs()));
    scf::YieldOp::create(b, loc, acc);
  }
  // No copy may still be writing shared memory when the block's threads leave.
  nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, b.getI32IntegerAttr(0));
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> MmaEmitter::multiply(ArrayRef<SmallVector<Value>> aRegs, ArrayRef<SmallVector<Value>> bRegs,
                                        ArrayRef<Value> acc) {
  auto ptxType = plan.tf32 ? NVVM::MMATypes::tf32 : operandType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  SmallVector<Value> next;
  for (int64_t i = 0; i < mTiles(); ++i)
    for (int64_t j = 0; j < nTiles(); ++j)
      llvm::append_range(next, mmaSync(b, loc, aRegs[i], bRegs[j], acc.slice((i * nTiles() + j) * 4, 4), ptxType,
                                       plan.instructionK()));
  return next;
}

void MmaEmitter::storeAccumulators(ArrayRef<Value> values, Value target) {
  if (plan.stageEpilogue)
    return storeThroughShared(values, target);
  for (int64_t i = 0; i < mTiles(); ++i)
    for (int64_t j = 0; j < nTiles(); ++j)
      for (int64_t h = 0; h < 2; ++h) {
        int64_t first = (i * nTiles() + j) * 4 + 2 * h;
        storeAccumulatorPair(values[first], values[first + 1], target, i, j, h, partial());
      }
}

void MmaEmitter::storeAccumulatorPair(Value first, Value second, Value target, int64_t i, int64_t j, int64_t h,
                                      bool guard) {
  if (!plan.swapAB) {
    if (guard)
      return storePartialPair(first, second, target, accRow(i, h), accCol(j, 0));
    return storePair(first, second, target, accRow(i, h), accCol(j, 0));
  }
  // C^T's pair: two rows of one column of C (the lanes of a store take 8 consecutive columns of 4 rows).
  for (auto [e, value] : llvm::enumerate(SmallVector<Value>{first, second})) {
    auto [row, col] = accAt(i, j, h, e);
    Value inside = guard ? allOf({within(row, plan.mExtent), within(col, plan.nExtent)}) : Value();
    guarded(inside, [&] { memref::StoreOp::create(b, loc, value, target, ValueRange{row, col}); });
  }
}

void MmaEmitter::storePartialPair(Value first, Value second, Value target, Value row, Value col) {
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

void MmaEmitter::storeThroughShared(ArrayRef<Value> values, Value target) {
  Type element = cast<MemRefType>(target.getType()).getElementType();
  Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(), workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
  Value tile = memref::ViewOp::create(b, loc, resultTileType(plan, element, workgroup), base, index(0), ValueRange{});
  blockBarrier();
  for (int64_t i = 0; i < mTiles(); ++i)
    for (int64_t j = 0; j < nTiles(); ++j)
      for (int64_t h = 0; h < 2; ++h) {
        int64_t first = (i * nTiles() + j) * 4 + 2 * h;
        storeAccumulatorPair(values[first], values[first + 1], tile, i, j, h, /*guard=*/false);
      }
  blockBarrier();
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

void MmaEmitter::storePair(Value first, Value second, Value target, Value row, Value col) {
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

void MmaEmitter::applyEpilogue(ArrayRef<Value> values) {
  ArrayRef<linalg::GenericOp> epilogue = plan.neighbours.epilogue;
  OpBuilder::InsertionGuard guard(b);
  // After the views of its operands (warp-specialized, emit() put everything there, in the consumers' branch).
  if (!plan.warpSpecialized)
    b.setInsertionPoint(epilogue.back());
  SmallVector<Value> outputs(values.size());
  for (int64_t i = 0; i < mTiles(); ++i)
    for (int64_t j = 0; j < nTiles(); ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e) {
          int64_t slot = (i * nTiles() + j) * 4 + 2 * h + e;
          // (In a partial tile the epilogue's reads are clamped; what they give past the edge is not stored.)
          auto [row, col] = accAt(i, j, h, e);
          outputs[slot] = kforge::epilogueChainElement(b, loc, epilogue, plan.c, values[slot],
                                                       ValueRange{clamp(row, plan.mExtent), clamp(col, plan.nExtent)});
        }
  storeAccumulators(outputs, plan.neighbours.result(plan.c));
}

LogicalResult kforge::matmulToMmaSync(RewriterBase &rewriter, linalg::MatmulOp matmul, const MmaSyncOptions &options,
                                      std::string &why) {
  FailureOr<MmaPlan> plan = planMma(matmul, options, why);
  if (failed(plan))
    return failure();
  MmaEmitter emitter(rewriter, *plan);
  emitter.emit();
  kforge::eraseMatmulAndNeighbours(rewriter, plan->matmul, plan->neighbours);
  emitter.finish();
  return success();
}
