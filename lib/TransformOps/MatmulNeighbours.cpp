//===- MatmulNeighbours.cpp - a bufferized matmul's fill and epilogue -----===//

#include "MatmulNeighbours.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

Value kforge::dynamicSize(Value memref, int64_t d) {
  if (auto subview = memref.getDefiningOp<memref::SubViewOp>())
    return dyn_cast_if_present<Value>(subview.getMixedSizes()[d]);
  if (auto alloc = memref.getDefiningOp<memref::AllocOp>())
    return alloc.getDynamicSizes()[alloc.getType().getDynamicDimIndex(d)];
  return Value();
}

std::optional<int64_t> kforge::constantUpperBound(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return constant;
  auto min = value ? value.getDefiningOp<affine::AffineMinOp>() : affine::AffineMinOp();
  if (!min)
    return std::nullopt;
  std::optional<int64_t> bound;
  for (AffineExpr result : min.getMap().getResults())
    if (auto constant = dyn_cast<AffineConstantExpr>(result))
      bound = bound ? std::min(*bound, constant.getValue()) : constant.getValue();
  return bound;
}

FailureOr<kforge::MatmulTile> kforge::staticMatmulTile(linalg::MatmulOp matmul,
                                                       function_ref<std::string(Type, Type, Type)> elementTypesProblem,
                                                       std::string &why, bool allowTransposed, bool allowPartial) {
  if (!matmul.hasPureBufferSemantics()) {
    why = "expected a linalg.matmul on memrefs";
    return failure();
  }
  MatmulTile tile;
  // The operand layouts, from the maps over (m, n, k): a transposed operand is nn.Linear's weight (or a .T in
  // forward), folded into the maps by kforge-normalize-importer.
  SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
  MLIRContext *ctx = matmul.getContext();
  AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx), dk = getAffineDimExpr(2, ctx);
  auto mapOf = [&](AffineExpr row, AffineExpr col) { return AffineMap::get(3, 0, {row, col}, ctx); };
  bool layoutsKnown = maps.size() == 3 && maps[2] == mapOf(dm, dn) &&
                      (maps[0] == mapOf(dm, dk) || maps[0] == mapOf(dk, dm)) &&
                      (maps[1] == mapOf(dk, dn) || maps[1] == mapOf(dn, dk));
  if (!layoutsKnown) {
    why = "expected a linalg.matmul reading A as M x K or K x M, B as K x N or N x K and writing C as M x N";
    return failure();
  }
  tile.aTransposed = maps[0] == mapOf(dk, dm);
  tile.bTransposed = maps[1] == mapOf(dn, dk);
  if ((tile.aTransposed || tile.bTransposed) && !allowTransposed) {
    why = std::string("this rewrite reads A as M x K and B as K x N; ") + (tile.aTransposed ? "A" : "B") +
          " is transposed (" + (tile.aTransposed ? "K x M" : "N x K") +
          ", e.g. nn.Linear's weight): use the staged SIMT rewrite (stage) or the tiled and vectorized loops";
    return failure();
  }
  tile.matmul = matmul;
  tile.a = matmul.getDpsInputs()[0];
  tile.b = matmul.getDpsInputs()[1];
  tile.c = matmul.getDpsInits()[0];
  auto aType = cast<MemRefType>(tile.a.getType()), bType = cast<MemRefType>(tile.b.getType()),
       cType = cast<MemRefType>(tile.c.getType());
  why = elementTypesProblem(aType.getElementType(), bType.getElementType(), cType.getElementType());
  if (!why.empty())
    return failure();
  if (aType.hasStaticShape() && bType.hasStaticShape() && cType.hasStaticShape()) {
    tile.m = cType.getDimSize(0);
    tile.n = cType.getDimSize(1);
    tile.k = aType.getDimSize(tile.aTransposed ? 0 : 1);
    return tile;
  }
  // A partial tile: M and N may be dynamic (bounded), K must not be (the block tile cuts M and N only).
  int64_t aK = aType.getDimSize(tile.aTransposed ? 0 : 1), bK = bType.getDimSize(tile.bTransposed ? 1 : 0);
  if (!allowPartial || ShapedType::isDynamic(aK) || aK != bK) {
    why = allowPartial ? "expected a static K (a partial tile cuts M and N only)" : "expected static shapes";
    return failure();
  }
  tile.k = aK;
  for (int64_t d : {0, 1}) {
    int64_t &bound = d == 0 ? tile.m : tile.n;
    Value &extent = d == 0 ? tile.mExtent : tile.nExtent;
    bound = cType.getDimSize(d);
    if (!ShapedType::isDynamic(bound))
      continue;
    extent = dynamicSize(tile.c, d);
    std::optional<int64_t> upper = constantUpperBound(extent);
    if (!extent || !upper) {
      why = std::string("expected C's ") + (d == 0 ? "rows" : "columns") +
            " static, or bounded by a constant (a partial block tile's affine.min)";
      return failure();
    }
    bound = *upper;
  }
  return tile;
}

Value kforge::clampToExtent(OpBuilder &b, Location loc, Value i, Value extent) {
  if (!extent)
    return i;
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), s0 = getAffineSymbolExpr(0, ctx);
  return affine::AffineMinOp::create(b, loc, AffineMap::get(1, 1, {d0, s0 - 1}, ctx), ValueRange{i, extent});
}

gpu::LaunchOp kforge::launchOfThreads(Operation *op, int64_t threads) {
  auto launch = op->getParentOfType<gpu::LaunchOp>();
  if (!launch || getConstantIntValue(launch.getBlockSizeX()) != threads ||
      getConstantIntValue(launch.getBlockSizeY()) != 1 || getConstantIntValue(launch.getBlockSizeZ()) != 1)
    return nullptr;
  return launch;
}

int64_t kforge::memrefBytes(MemRefType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

std::string kforge::sharedBuffersProblem(gpu::LaunchOp launch, int64_t bytes) {
  if (bytes > kMaxSharedBytesPerBlock)
    return "take " + std::to_string(bytes) + " bytes of shared memory; a block has at most " +
           std::to_string(kMaxSharedBytesPerBlock);
  if (bytes > kMaxStaticSharedBytes && launch.getDynamicSharedMemorySize())
    return "take " + std::to_string(bytes) +
           " bytes of shared memory, more than static memory holds, and the launch already has dynamic shared memory";
  return "";
}

/// Dynamic shared memory starts 1024-byte aligned (NVVM's lowering); each buffer starts 128-byte aligned in it.
constexpr int64_t kDynamicSharedAlignment = 128;

SmallVector<Value> kforge::sharedBuffers(OpBuilder &b, Location loc, gpu::LaunchOp launch, ArrayRef<MemRefType> types,
                                         bool swizzled) {
  int64_t total = 0;
  for (MemRefType type : types)
    total += memrefBytes(type);
  SmallVector<Value> buffers;
  if (total <= kMaxStaticSharedBytes && !swizzled) {
    for (MemRefType type : types)
      buffers.push_back(launch.addWorkgroupAttribution(type, loc));
    return buffers;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(launch);
  SmallVector<int64_t> offsets;
  int64_t offset = 0;
  for (MemRefType type : types) {
    offsets.push_back(offset);
    offset = llvm::alignTo(offset + memrefBytes(type), swizzled ? 1024 : kDynamicSharedAlignment);
  }
  Value size = arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
  launch.getDynamicSharedMemorySizeMutable().assign(size);
  b.setInsertionPointToStart(&launch.getBody().front());
  Attribute workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(), workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
  for (auto [type, at] : llvm::zip(types, offsets))
    buffers.push_back(memref::ViewOp::create(b, loc, type, base, arith::ConstantIndexOp::create(b, loc, at),
                                             ValueRange{}));
  return buffers;
}

std::optional<int64_t> kforge::innermostStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() || ShapedType::isDynamic(strides.back()))
    return std::nullopt;
  return strides.back();
}

/// An elementwise op that can take `c`'s values from registers (see findMatmulNeighbours).
static bool takesFromRegisters(linalg::GenericOp generic, Value c) {
  int64_t rank = cast<MemRefType>(c.getType()).getRank();
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 || generic.getNumLoops() != rank ||
      generic.getNumParallelLoops() != rank || !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  if (!generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return false;
  bool readsC = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    if (input->get() == c) {
      if (!map.isIdentity())
        return false;
      readsC = true;
    } else if (!isa<MemRefType>(input->get().getType()) && !input->get().getType().isIntOrIndexOrFloat()) {
      return false;
    }
  }
  return readsC;
}

/// The next op after `op` with effects (views of an output, index arithmetic may come between).
static Operation *nextWithEffects(Operation *op) {
  Operation *next = op->getNextNode();
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0)
    next = next->getNextNode();
  return next;
}

/// The op before `op` that has memory effects or regions, skipping pure ones (views of the operands).
static Operation *previousWithEffects(Operation *op) {
  Operation *previous = op->getPrevNode();
  while (previous && isMemoryEffectFree(previous) && previous->getNumRegions() == 0)
    previous = previous->getPrevNode();
  return previous;
}

/// An elementwise op writing `c` (its only output, through the identity) without reading it: its body gives C's
/// initial values element by element.
static bool initialisesC(linalg::GenericOp generic, Value c) {
  int64_t rank = cast<MemRefType>(c.getType()).getRank();
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != c ||
      generic.getNumLoops() != rank || generic.getNumParallelLoops() != rank ||
      !generic.getBody()->getOps<linalg::IndexOp>().empty() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return false;
  return llvm::all_of(generic.getDpsInputOperands(), [&](OpOperand *input) {
    return input->get() != c && generic.getMatchingIndexingMap(input).isProjectedPermutation() &&
           (isa<MemRefType>(input->get().getType()) || input->get().getType().isIntOrIndexOrFloat());
  });
}

kforge::MatmulNeighbours kforge::findMatmulNeighbours(linalg::LinalgOp matmul, bool initOps) {
  MatmulNeighbours found;
  Value c = matmul.getDpsInits()[0];
  // (A batch_matmul's block folded to a matmul has the views of A and B between its fill and its matmul.)
  Operation *previous = previousWithEffects(matmul);
  auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
  if (fill && fill.hasPureBufferSemantics() && fill.getDpsInits().size() == 1 && fill.getDpsInits()[0] == c)
    found.fill = fill;
  auto copy = dyn_cast_or_null<memref::CopyOp>(previous);
  if (initOps && copy && copy.getTarget() == c && c.getDefiningOp<memref::AllocOp>() &&
      cast<MemRefType>(copy.getSource().getType()).getShape() == cast<MemRefType>(c.getType()).getShape())
    found.initCopy = copy;
  auto init = dyn_cast_or_null<linalg::GenericOp>(previous);
  if (initOps && init && initialisesC(init, c))
    found.initGeneric = init;
  Operation *at = matmul;
  while (auto generic = dyn_cast_or_null<linalg::GenericOp>(nextWithEffects(at))) {
    if (!takesFromRegisters(generic, c))
      break;
    if (generic.getDpsInits()[0] == c) { // in place: the chain may go on
      found.epilogue.push_back(generic);
      at = generic;
      continue;
    }
    // Into another buffer: C must be a temporary that nothing else uses.
    auto alloc = c.getDefiningOp<memref::AllocOp>();
    if (!alloc)
      break;
    bool onlyHere = llvm::all_of(alloc->getUsers(), [&](Operation *user) {
      return user == matmul.getOperation() || user == generic.getOperation() ||
             (found.fill && user == found.fill.getOperation()) ||
             (found.initCopy && user == found.initCopy.getOperation()) ||
             (found.initGeneric && user == found.initGeneric.getOperation()) ||
             llvm::is_contained(found.epilogue, dyn_cast<linalg::GenericOp>(user));
    });
    if (!onlyHere)
      break;
    found.epilogue.push_back(generic);
    found.cBuffer = alloc;
    break;
  }
  return found;
}

LogicalResult kforge::stagedSimtBlock(linalg::LinalgOp op, int64_t threads, int64_t stageBytes, bool initOps,
                                      StringRef what, StringRef output, gpu::LaunchOp &launch,
                                      MatmulNeighbours &neighbours, std::string &why) {
  launch = launchOfThreads(op, threads);
  if (!launch) {
    why = (what + " must be in a gpu.launch of " + std::to_string(threads) +
           "x1x1 threads (the grid's): its threads copy the tiles to shared memory together")
              .str();
    return failure();
  }
  if (std::string problem = sharedBuffersProblem(launch, stageBytes); !problem.empty()) {
    why = "two stages of A and B " + problem;
    return failure();
  }
  neighbours = findMatmulNeighbours(op, initOps);
  if (cUsedAfter(op, neighbours.epilogue)) {
    why = (output + " is used after " + what + " by an op that cannot take its values from registers").str();
    return failure();
  }
  return success();
}

bool kforge::cUsedAfter(linalg::LinalgOp matmul, ArrayRef<linalg::GenericOp> epilogue) {
  for (Operation *user : matmul.getDpsInits()[0].getUsers())
    if (user != matmul.getOperation() && !llvm::is_contained(epilogue, dyn_cast<linalg::GenericOp>(user)) &&
        user->getBlock() == matmul->getBlock() && matmul->isBeforeInBlock(user) && !isa<memref::DeallocOp>(user))
      return true;
  return false;
}

void kforge::eraseMatmulAndNeighbours(RewriterBase &rewriter, linalg::LinalgOp matmul,
                                      const MatmulNeighbours &neighbours) {
  for (linalg::GenericOp op : llvm::reverse(neighbours.epilogue))
    rewriter.eraseOp(op);
  rewriter.eraseOp(matmul.getOperation());
  if (neighbours.fill)
    rewriter.eraseOp(neighbours.fill);
  if (neighbours.initCopy)
    rewriter.eraseOp(neighbours.initCopy);
  if (neighbours.initGeneric)
    rewriter.eraseOp(neighbours.initGeneric);
  if (neighbours.cBuffer && neighbours.cBuffer->use_empty())
    rewriter.eraseOp(neighbours.cBuffer);
}

Value kforge::epilogueChainElement(OpBuilder &b, Location loc, ArrayRef<linalg::GenericOp> epilogue, Value c,
                                   Value value, ValueRange position) {
  for (linalg::GenericOp generic : epilogue)
    value = epilogueElement(b, loc, generic, c, value, position);
  return value;
}

Value kforge::epilogueElement(OpBuilder &b, Location loc, linalg::GenericOp epilogue, Value c, Value value,
                              ValueRange position) {
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(input->getOperandNumber());
    if (input->get() == c) {
      map.map(arg, value);
      continue;
    }
    if (!isa<MemRefType>(input->get().getType())) {
      map.map(arg, input->get()); // a scalar input
      continue;
    }
    SmallVector<Value> indices;
    for (AffineExpr result : epilogue.getMatchingIndexingMap(input).getResults())
      indices.push_back(position[cast<AffineDimExpr>(result).getPosition()]);
    map.map(arg, memref::LoadOp::create(b, loc, input->get(), indices));
  }
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}
