//===- StashRowsInShared.cpp - transform.kforge.stash_rows_in_shared -------===//
//
// A row kernel's threads keep part of their row values in shared memory, not registers, while the block
// reduces: fewer registers per thread, so more blocks (rows) fit on a multiprocessor. See the op's description
// in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "MatmulNeighbours.h"
#include "Rewrites.h"

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

namespace {
/// What a stash needs to know about the launch, checked.
struct StashPlan {
  int64_t threads = 0;
  DenseMap<Operation *, int> segment;  ///< The entry block's ops, numbered by segment.
  SmallVector<LiveAcross> live;        ///< In order of definition, each with its slot.
  VectorType shape;                    ///< Their one type.
  int64_t length = 0, stashed = 0;     ///< Elements of each vector, and those stashed (its last ones).
  SmallVector<Operation *> asyncReads; ///< The definitions copied to shared memory by cp.async (block order).
  MemRefType bufferType;               ///< The stash: slots x stashed x threads elements.
  int64_t kept() const { return length - stashed; }
};
} // namespace

/// The vectors of the entry block live across a reduction, in order of definition; one length and element type
/// (a row kernel's lane slices: the first such vector's, returned in `shape`).
static SmallVector<LiveAcross> liveAcross(Block &body, const DenseMap<Operation *, int> &segment, VectorType &shape) {
  SmallVector<LiveAcross> live;
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
  return live;
}

/// Gives each vector a slot; returns how many there are. A vector's slot is free again for a vector defined in
/// the segment of its last use, once that use's reload has read it (the reload comes before its segment's first
/// user, which must come before the new vector's definition: its store follows the definition). A read copied
/// asynchronously may move up its segment (hoistReads): it takes a slot freed in an earlier segment only.
static int64_t assignSlots(MutableArrayRef<LiveAcross> live, Block &body, const DenseMap<Operation *, int> &segment,
                           int64_t kept) {
  struct Slot {
    int lastSegment;
    Operation *lastReloadAt;
  };
  SmallVector<Slot> slots;
  for (LiveAcross &v : live) {
    bool moves = asyncStashable(v.def, kept) != nullptr;
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
  return static_cast<int64_t>(slots.size());
}

/// The launch's stash, checked: a 1-D block of static size, a block-wide reduction in the entry block, vectors
/// live across one, some of whose elements `quarters` stashes, a stash that fits in shared memory.
static FailureOr<StashPlan> planStash(gpu::LaunchOp launch, int64_t quarters, std::string &why) {
  StashPlan plan;
  std::optional<int64_t> threads = getConstantIntValue(launch.getBlockSizeX());
  if (!threads || getConstantIntValue(launch.getBlockSizeY()) != 1 || getConstantIntValue(launch.getBlockSizeZ()) != 1)
    return kforge::reject(why, "expected a launch of a 1-D block of static size");
  plan.threads = *threads;
  Block &body = launch.getBody().front();
  int crossings = 0;
  plan.segment = segmentsOf(body, crossings);
  if (crossings == 0)
    return kforge::reject(why, "the launch's entry block has no block-wide reduction (gpu.all_reduce) or barrier");
  plan.live = liveAcross(body, plan.segment, plan.shape);
  if (plan.live.empty())
    return kforge::reject(why, "no vector of two or more elements is live across a block-wide reduction");
  plan.length = plan.shape.getNumElements();
  plan.stashed = plan.length * quarters / 4;
  if (plan.stashed == 0)
    return kforge::reject(why, "quarters = " + Twine(quarters) + " of a " + Twine(plan.length) +
                                   "-element vector rounds down to no element");
  for (const LiveAcross &v : plan.live)
    if (asyncStashable(v.def, plan.kept()))
      plan.asyncReads.push_back(v.def);
  int64_t slots = assignSlots(plan.live, body, plan.segment, plan.kept());
  plan.bufferType =
      MemRefType::get({slots * plan.stashed * plan.threads}, plan.shape.getElementType(), MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(launch.getContext(), gpu::AddressSpace::Workgroup));
  if (std::string problem = kforge::sharedBuffersProblem(launch, kforge::memrefBytes(plan.bufferType));
      !problem.empty())
    return kforge::reject(why, "the stash of " + Twine(slots) + " x " + Twine(plan.stashed) + " elements x " +
                                   Twine(plan.threads) + " threads would " + problem);
  return plan;
}

namespace {
/// Stashes and reloads the vectors of one plan.
class Stasher {
public:
  Stasher(RewriterBase &rewriter, gpu::LaunchOp launch, StashPlan &plan)
      : rewriter(rewriter), plan(plan), body(launch.getBody().front()), loc(launch.getLoc()) {
    hoistReads(rewriter, body, plan.asyncReads, plan.segment);
    buffer = kforge::sharedBuffers(rewriter, loc, launch, {plan.bufferType}).front();
    thread = launch.getThreadIds().x;
  }

  /// Each vector's stashed elements go to shared memory after its definition and come back before its uses
  /// after each reduction it crosses.
  void run() {
    for (LiveAcross &v : plan.live) {
      rewriter.setInsertionPointAfter(v.def);
      // The elements kept in registers come from `kept` (the vector itself, or a shorter read of the row), the
      // others from the stash; an asynchronous stash (copied from global memory, never in registers) is waited
      // for before it is read.
      Value kept = v.value;
      Value copies;
      if (auto read = asyncStashable(v.def, plan.kept())) {
        kept = copyAsync(read, v.slot, copies);
        // Its uses before the first reduction read it back too.
        v.useSegments.insert(v.defSegment);
      } else {
        store(v);
      }
      for (int s : v.useSegments)
        reload(v, s, kept, copies);
      if (copies)
        rewriter.eraseOp(v.def);
    }
  }

private:
  /// Element k of the stashed part of slot s, this thread's: (s * stashed + k) * threads + thread.
  Value address(int slot, int64_t k) {
    Value offset = arith::ConstantIndexOp::create(rewriter, loc, (slot * plan.stashed + k) * plan.threads);
    return arith::AddIOp::create(rewriter, loc, offset, thread);
  }

  /// The vector's last elements stored into its slot.
  void store(const LiveAcross &v) {
    for (int64_t k = 0; k < plan.stashed; ++k) {
      Value e = vector::ExtractOp::create(rewriter, loc, v.value, plan.kept() + k);
      memref::StoreOp::create(rewriter, loc, e, buffer, ValueRange{address(v.slot, k)});
    }
  }

  /// A read whose last elements are copied from global memory into the slot by cp.async (`copies`, their
  /// group): returns a shorter read of the elements kept in registers.
  Value copyAsync(vector::TransferReadOp read, int slot, Value &copies) {
    Type element = plan.shape.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    Value kept = vector::TransferReadOp::create(rewriter, loc, VectorType::get({plan.kept()}, element), read.getBase(),
                                                read.getIndices(), read.getPadding(), ArrayRef<bool>{true});
    // cp.async wants a source of unit innermost stride (a lane's slice of the row is strided): each element
    // is copied from a one-element view of the underlying buffer at its linear offset.
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, read.getBase());
    Value linear = meta.getOffset();
    for (auto [index, stride] : llvm::zip(read.getIndices(), meta.getStrides()))
      linear = arith::AddIOp::create(rewriter, loc, linear, arith::MulIOp::create(rewriter, loc, index, stride));
    auto sourceType = cast<MemRefType>(read.getBase().getType());
    auto oneElement = MemRefType::get({1}, element, StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {1}),
                                      sourceType.getMemorySpace());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> tokens;
    for (int64_t k = 0; k < plan.stashed; ++k) {
      Value step = arith::ConstantIndexOp::create(rewriter, loc, plan.kept() + k);
      Value at = arith::AddIOp::create(rewriter, loc, linear,
                                       arith::MulIOp::create(rewriter, loc, step, meta.getStrides().back()));
      Value source = memref::ReinterpretCastOp::create(rewriter, loc, oneElement, meta.getBaseBuffer(), at,
                                                       ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
                                                       ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(rewriter, loc, buffer, ValueRange{address(slot, k)}, source,
                                                        ValueRange{zero}, rewriter.getIndexAttr(1),
                                                        /*srcElements=*/Value(), /*bypassL1=*/UnitAttr()));
    }
    copies = nvgpu::DeviceAsyncCreateGroupOp::create(rewriter, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
    return kept;
  }

  /// The whole vector again before its first use in segment `s` (its kept elements and its slot's), for the
  /// uses in that segment.
  void reload(const LiveAcross &v, int s, Value kept, Value copies) {
    Operation *first = firstUserIn(v.value, s, body, plan.segment);
    if (!first)
      return;
    rewriter.setInsertionPoint(first);
    if (copies) {
      // The groups committed after this one by then may still be in flight (a later segment's reload finds
      // them all done).
      // (asyncReads is in block order; the ones before this read are rewritten already.)
      int32_t later = 0;
      if (s == v.defSegment)
        for (Operation *other :
             llvm::drop_begin(plan.asyncReads, llvm::find(plan.asyncReads, v.def) - plan.asyncReads.begin() + 1))
          if (other->isBeforeInBlock(first))
            ++later;
      nvgpu::DeviceAsyncWaitOp::create(rewriter, loc, copies, rewriter.getI32IntegerAttr(later));
    }
    SmallVector<Value> elements;
    DenseSet<Operation *> reloaded;
    for (int64_t i = 0; i < plan.kept(); ++i) {
      auto e = vector::ExtractOp::create(rewriter, loc, kept, i);
      reloaded.insert(e);
      elements.push_back(e);
    }
    for (int64_t k = 0; k < plan.stashed; ++k)
      elements.push_back(memref::LoadOp::create(rewriter, loc, buffer, ValueRange{address(v.slot, k)}));
    Value whole = vector::FromElementsOp::create(rewriter, loc, plan.shape, elements);
    rewriter.replaceUsesWithIf(v.value, whole, [&](OpOperand &use) {
      Operation *top = body.findAncestorOpInBlock(*use.getOwner());
      return !reloaded.contains(use.getOwner()) && top && plan.segment.lookup(top) == s;
    });
  }

  RewriterBase &rewriter;
  StashPlan &plan;
  Block &body;
  Location loc;
  Value thread; ///< The thread's index in the block.
  Value buffer; ///< The stash.
};
} // namespace

FailureOr<gpu::LaunchOp> kforge::stashRowsInShared(RewriterBase &rewriter, gpu::LaunchOp launch, int64_t quarters,
                                                   std::string &why) {
  FailureOr<StashPlan> plan = planStash(launch, quarters, why);
  if (failed(plan))
    return failure();
  Stasher(rewriter, launch, *plan).run();
  return launch;
}
