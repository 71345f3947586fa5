//===- StashRowsInShared.cpp - transform.kforge.stash_rows_in_shared -------===//
//
// A row kernel's threads keep part of their row values in shared memory, not registers, while the block
// reduces: fewer registers per thread, so more blocks (rows) fit on a multiprocessor. See the op's description
// in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "kforge/TransformOps/KforgeTransformOps.h"

#include "MatmulNeighbours.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <set>

using namespace mlir;

namespace {
/// A vector of the launch's entry block that is used after a block-wide reduction that follows its definition.
struct LiveAcross {
  Value value;
  Operation *def;            ///< its defining op (in the entry block)
  int defSegment;            ///< the segment (ops between two reductions) of the definition
  std::set<int> useSegments; ///< the later segments with uses
  int slot = -1;
};
} // namespace

/// The entry block's ops, numbered by segment: a block-wide reduction (or barrier) ends its segment.
static DenseMap<Operation *, int> segmentsOf(Block &body, int &crossings) {
  DenseMap<Operation *, int> segment;
  crossings = 0;
  for (Operation &op : body) {
    segment[&op] = crossings;
    if (isa<gpu::AllReduceOp, gpu::BarrierOp>(op))
      ++crossings;
  }
  return segment;
}

/// The first op of segment `s` (in the entry block) that uses `value`, directly or in its regions.
static Operation *firstUserIn(Value value, int s, Block &body, const DenseMap<Operation *, int> &segment) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (top && segment.lookup(top) == s && (!first || top->isBeforeInBlock(first)))
      first = top;
  }
  return first;
}

/// A read of global memory whose last elements can go to shared memory by cp.async instead (never
/// held in registers): a 1-D, unmasked, in-bounds transfer_read along the innermost dimension of a memref not
/// in shared memory, of 4-byte elements (one cp.async each), with `kept` elements left for registers.
static vector::TransferReadOp asyncStashable(Operation *def, int64_t kept) {
  auto read = dyn_cast<vector::TransferReadOp>(def);
  if (!read || kept < 1 || read.getMask() || !read.getPermutationMap().isMinorIdentity() ||
      read.getVectorType().getRank() != 1 || llvm::any_of(read.getInBoundsValues(), [](bool b) { return !b; }))
    return nullptr;
  auto source = dyn_cast<MemRefType>(read.getBase().getType());
  if (!source || gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(source) ||
      source.getElementTypeBitWidth() != 32)
    return nullptr;
  return read;
}

/// Moves the async-stashable reads of each segment (with the pure ops computing their operands) up to the
/// segment's first use of any of them, so that all their copies are in flight before the first wait (in the
/// order the row ops come, each read's wait would otherwise come before the next read).
static void hoistReads(RewriterBase &rewriter, Block &body, ArrayRef<Operation *> reads,
                       const DenseMap<Operation *, int> &segment) {
  DenseMap<int, Operation *> firstUse;
  for (Operation *read : reads) {
    int s = segment.lookup(read);
    if (Operation *user = firstUserIn(read->getResult(0), s, body, segment))
      if (!firstUse.count(s) || user->isBeforeInBlock(firstUse[s]))
        firstUse[s] = user;
  }
  for (Operation *read : reads) {
    auto it = firstUse.find(segment.lookup(read));
    if (it == firstUse.end() || read->isBeforeInBlock(it->second))
      continue;
    Operation *at = it->second;
    // The ops after `at` that the read needs: they move with it, pure ones only.
    SetVector<Operation *> slice;
    SmallVector<Operation *> work{read};
    bool movable = true;
    while (!work.empty() && movable) {
      Operation *op = work.pop_back_val();
      if (!slice.insert(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && def->getBlock() == &body && at->isBeforeInBlock(def)) {
          movable &= isPure(def);
          work.push_back(def);
        }
    }
    if (!movable)
      continue;
    SmallVector<Operation *> ordered(slice.begin(), slice.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    for (Operation *op : ordered)
      rewriter.moveOpBefore(op, at);
  }
}

LogicalResult transform::StashRowsInSharedOp::verify() {
  if (getQuarters() < 1 || getQuarters() > 3)
    return emitOpError() << "quarters must be 1, 2 or 3 (of each vector's elements), not " << getQuarters();
  return success();
}

DiagnosedSilenceableFailure transform::StashRowsInSharedOp::applyToOne(transform::TransformRewriter &rewriter,
                                                                      Operation *target,
                                                                      transform::ApplyToEachResultList &results,
                                                                      transform::TransformState &state) {
  auto launch = dyn_cast<gpu::LaunchOp>(target);
  if (!launch)
    return emitSilenceableError() << "expected a gpu.launch";
  std::optional<int64_t> threads = getConstantIntValue(launch.getBlockSizeX());
  if (!threads || getConstantIntValue(launch.getBlockSizeY()) != 1 || getConstantIntValue(launch.getBlockSizeZ()) != 1)
    return emitSilenceableError() << "expected a launch of a 1-D block of static size";
  Block &body = launch.getBody().front();
  int crossings = 0;
  DenseMap<Operation *, int> segment = segmentsOf(body, crossings);
  if (crossings == 0)
    return emitSilenceableError() << "the launch's entry block has no block-wide reduction (gpu.all_reduce) or barrier";

  // The vectors live across a reduction, in order of definition; one length and element type (a row kernel's
  // lane slices: the first such vector's).
  SmallVector<LiveAcross> live;
  VectorType shape;
  for (Operation &op : body)
    for (Value result : op.getResults()) {
      auto type = dyn_cast<VectorType>(result.getType());
      if (!type || type.getRank() != 1 || type.isScalable() || type.getNumElements() < 2 ||
          !type.getElementType().isIntOrFloat() || (shape && type != shape))
        continue;
      LiveAcross candidate{result, &op, segment.lookup(&op), {}};
      for (Operation *user : result.getUsers())
        if (Operation *top = body.findAncestorOpInBlock(*user); top && segment.lookup(top) > candidate.defSegment)
          candidate.useSegments.insert(segment.lookup(top));
      if (candidate.useSegments.empty())
        continue;
      shape = type;
      live.push_back(candidate);
    }
  if (live.empty())
    return emitSilenceableError() << "no vector of two or more elements is live across a block-wide reduction";
  int64_t length = shape.getNumElements(), stashed = length * static_cast<int64_t>(getQuarters()) / 4;
  if (stashed == 0)
    return emitSilenceableError() << "quarters = " << getQuarters() << " of a " << length
                                  << "-element vector rounds down to no element";
  SmallVector<Operation *> asyncReads;
  for (const LiveAcross &v : live)
    if (asyncStashable(v.def, length - stashed))
      asyncReads.push_back(v.def);

  // Slots: a vector's slot is free again for a vector defined in the segment of its last use, once that use's
  // reload has read it (the reload comes before its segment's first user, which must come before the new
  // vector's definition: its store follows the definition).
  struct Slot {
    int lastSegment;
    Operation *lastReloadAt;
  };
  SmallVector<Slot> slots;
  // (A read copied asynchronously may move up its segment, hoistReads below: it takes a slot freed in an
  // earlier segment only.)
  for (LiveAcross &v : live) {
    bool moves = asyncStashable(v.def, length - stashed) != nullptr;
    for (auto [i, slot] : llvm::enumerate(slots))
      if (slot.lastSegment < v.defSegment ||
          (!moves && slot.lastSegment == v.defSegment &&
           (slot.lastReloadAt == v.def || slot.lastReloadAt->isBeforeInBlock(v.def)))) {
        v.slot = static_cast<int>(i);
        break;
      }
    int last = *v.useSegments.rbegin();
    Slot now{last, firstUserIn(v.value, last, body, segment)};
    if (v.slot < 0) {
      v.slot = static_cast<int>(slots.size());
      slots.push_back(now);
    } else {
      slots[v.slot] = now;
    }
  }
  Type element = shape.getElementType();
  int64_t words = static_cast<int64_t>(slots.size()) * stashed * *threads;
  auto bufferType = MemRefType::get({words}, element, MemRefLayoutAttrInterface(),
                                    gpu::AddressSpaceAttr::get(getContext(), gpu::AddressSpace::Workgroup));
  if (std::string problem = kforge::sharedBuffersProblem(launch, kforge::memrefBytes(bufferType)); !problem.empty())
    return emitSilenceableError() << "the stash of " << slots.size() << " x " << stashed << " elements x " << *threads
                                  << " threads would " << problem;

  Location loc = launch.getLoc();
  hoistReads(rewriter, body, asyncReads, segment);
  Value buffer = kforge::sharedBuffers(rewriter, loc, launch, {bufferType}).front();
  Value thread = launch.getThreadIds().x;
  // Element k of the stashed part of slot s, this thread's: (s * stashed + k) * threads + thread.
  auto address = [&](int slot, int64_t k) -> Value {
    Value offset = arith::ConstantIndexOp::create(rewriter, loc, (slot * stashed + k) * *threads);
    return arith::AddIOp::create(rewriter, loc, offset, thread);
  };
  for (LiveAcross &v : live) {
    rewriter.setInsertionPointAfter(v.def);
    // The elements kept in registers come from `kept` (the vector itself, or a shorter read of the row), the
    // others from the stash; an asynchronous stash (copied from global memory, never in registers) is waited
    // for before it is read.
    Value kept = v.value;
    Value copies;
    if (auto read = asyncStashable(v.def, length - stashed)) {
      kept = vector::TransferReadOp::create(rewriter, loc, VectorType::get({length - stashed}, element),
                                            read.getBase(), read.getIndices(), read.getPadding(),
                                            ArrayRef<bool>{true});
      // cp.async wants a source of unit innermost stride (a lane's slice of the row is strided): each element
      // is copied from a one-element view of the underlying buffer at its linear offset.
      auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, read.getBase());
      Value linear = meta.getOffset();
      for (auto [index, stride] : llvm::zip(read.getIndices(), meta.getStrides()))
        linear = arith::AddIOp::create(rewriter, loc, linear, arith::MulIOp::create(rewriter, loc, index, stride));
      auto sourceType = cast<MemRefType>(read.getBase().getType());
      auto oneElement = MemRefType::get({1}, element, StridedLayoutAttr::get(getContext(), ShapedType::kDynamic, {1}),
                                        sourceType.getMemorySpace());
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      SmallVector<Value> tokens;
      for (int64_t k = 0; k < stashed; ++k) {
        Value step = arith::ConstantIndexOp::create(rewriter, loc, length - stashed + k);
        Value at = arith::AddIOp::create(rewriter, loc, linear,
                                         arith::MulIOp::create(rewriter, loc, step, meta.getStrides().back()));
        Value source = memref::ReinterpretCastOp::create(rewriter, loc, oneElement, meta.getBaseBuffer(), at,
                                                         ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
                                                         ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(rewriter, loc, buffer, ValueRange{address(v.slot, k)},
                                                          source, ValueRange{zero}, rewriter.getIndexAttr(1),
                                                          /*srcElements=*/Value(), /*bypassL1=*/UnitAttr()));
      }
      copies = nvgpu::DeviceAsyncCreateGroupOp::create(rewriter, loc,
                                                       nvgpu::DeviceAsyncTokenType::get(getContext()), tokens);
      // Its uses before the first reduction read it back too.
      v.useSegments.insert(v.defSegment);
    } else {
      for (int64_t k = 0; k < stashed; ++k) {
        Value e = vector::ExtractOp::create(rewriter, loc, v.value, length - stashed + k);
        memref::StoreOp::create(rewriter, loc, e, buffer, ValueRange{address(v.slot, k)});
      }
    }
    for (int s : v.useSegments) {
      Operation *first = firstUserIn(v.value, s, body, segment);
      if (!first)
        continue;
      rewriter.setInsertionPoint(first);
      if (copies) {
        // The groups committed after this one by then may still be in flight (a later segment's reload finds
        // them all done).
        // (asyncReads is in block order; the ones before this read are rewritten already.)
        int32_t later = 0;
        if (s == v.defSegment)
          for (Operation *other : llvm::drop_begin(asyncReads, llvm::find(asyncReads, v.def) - asyncReads.begin() + 1))
            if (other->isBeforeInBlock(first))
              ++later;
        nvgpu::DeviceAsyncWaitOp::create(rewriter, loc, copies, rewriter.getI32IntegerAttr(later));
      }
      SmallVector<Value> elements;
      DenseSet<Operation *> reload;
      for (int64_t i = 0; i < length - stashed; ++i) {
        auto e = vector::ExtractOp::create(rewriter, loc, kept, i);
        reload.insert(e);
        elements.push_back(e);
      }
      for (int64_t k = 0; k < stashed; ++k)
        elements.push_back(memref::LoadOp::create(rewriter, loc, buffer, ValueRange{address(v.slot, k)}));
      Value whole = vector::FromElementsOp::create(rewriter, loc, shape, elements);
      rewriter.replaceUsesWithIf(v.value, whole, [&](OpOperand &use) {
        Operation *top = body.findAncestorOpInBlock(*use.getOwner());
        return !reload.contains(use.getOwner()) && top && segment.lookup(top) == s;
      });
    }
    if (copies)
      rewriter.eraseOp(v.def);
  }
  results.push_back(launch);
  return DiagnosedSilenceableFailure::success();
}

void transform::StashRowsInSharedOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getTargetMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}
