//===- TmaOptions.cpp - tma, warp_specialize, persistent, overlap, multicast ---===//
//
// The options of Hopper's wgmma form of transform.kforge.matmul_to_mma_sync that fill and schedule its stages:
// the tensor memory accelerator's copies, a producer warp of their own, a loop over tiles, one tile's wgmma in
// flight, pairs of blocks sharing an operand's tile.
//
//===----------------------------------------------------------------------===//

#include "MmaOptions.h"

using namespace kforge::tune;

namespace {

class TmaAction : public MmaOptionAction {
public:
  TmaAction()
      : MmaOptionAction(
            ActionSpec{
                "tma",
                "Fill wgmma's stages with Hopper's tensor memory accelerator instead of cp.async: the host builds a "
                "tensor "
                "map of A and of B before the launch (kforge's runtime, cuTensorMapEncodeTiled, 128-byte swizzled); in "
                "the "
                "kernel one thread issues a bulk tensor copy per box (cp.async.bulk.tensor) completing on the stage's "
                "mbarrier, which the block waits on.",
                "the tma option of transform.kforge.matmul_to_mma_sync (nvvm.cp.async.bulk.tensor, nvvm.mbarrier.*; a "
                "call to the runtime's kforge_tensor_map_2d before the launch)",
                {},
                {"gpu"},
                "wgmma before it; A and B function arguments or buffers of the host code with rows a multiple of 16 "
                "bytes"},
            51) {}

  void validate(const ValidationContext &context) const override {
    if (!findSlot(context.schedule, "wgmma"))
      context.problem("precondition", "tma needs wgmma before it (it fills wgmma's swizzled stages)");
  }
  std::string mmaOption(const Action &) const override { return ", tma"; }
};

class WarpSpecializeAction : public MmaOptionAction {
public:
  WarpSpecializeAction()
      : MmaOptionAction(
            ActionSpec{"warp_specialize",
                       "Give the TMA copies a warp of their own: the block gets one more warp (the producer), whose "
                       "first thread fills each stage as soon as every consumer warp is done with it (an empty "
                       "mbarrier per stage, one arrival per warp once the tile's wgmma finished) and the copies "
                       "land (the full mbarrier, as with tma); the warpgroups only wait and multiply, and never meet "
                       "at a block barrier in the K loop. The copies run up to stages tiles ahead.",
                       "the warp_specialized option of transform.kforge.matmul_to_mma_sync (a gpu.launch of the warp "
                       "grid's threads plus 32; a predicated mbarrier.arrive per warp, named barrier 1 for "
                       "stage_epilogue)",
                       {},
                       {"gpu"},
                       "wgmma and tma before it (a matmul, not a convolution)"},
            52) {}

  void validate(const ValidationContext &context) const override {
    if (!findSlot(context.schedule, "tma"))
      context.problem("precondition", "warp_specialize needs wgmma and tma before it (the producer warp issues the "
                                      "TMA copies)");
  }
  std::string mmaOption(const Action &) const override { return ", warp_specialized"; }
};

class PersistentAction : public MmaOptionAction {
public:
  PersistentAction()
      : MmaOptionAction(
            ActionSpec{"persistent",
                       "Launch `blocks` blocks (at most one a tile) that each loop over the output tiles b, b + "
                       "blocks, ... instead of one block a tile: with warp_specialize the producer warp fills the "
                       "next tile's stages while the consumers apply and store this tile's epilogue, and the stages "
                       "and mbarrier phases run on across tiles. `blocks` is the blocks resident at once (one per "
                       "multiprocessor for a 128x256 block, which takes one).",
                       "the persistent_blocks option of transform.kforge.matmul_to_mma_sync (the launch's grid becomes "
                       "min(blocks, tiles) along x and its body a loop over tiles)",
                       {{"blocks",
                         ParamType::Int,
                         {132, 114, 108, 264},
                         {},
                         "blocks launched: the multiprocessors (132 on an H100 SXM or H200, 114 on an H100 PCIe, 108 "
                         "on an A100) or a multiple; besides these, any count from 1 to 65536"}},
                       {"gpu"},
                       "warp_specialize before it and no stage_epilogue (the result tile would share the stages the "
                       "producer fills for the next tile); a 2-D matmul (not a batch)"},
            57) {}

  std::optional<std::string> outOfDomain(int64_t value) const override { return countOutOfDomain(*this, value); }

  void validate(const ValidationContext &context) const override {
    if (!findSlot(context.schedule, "warp_specialize"))
      context.problem("precondition", "persistent needs warp_specialize before it (its producer warp runs ahead into "
                                      "the next tile)");
    else if (findSlot(context.schedule, "stage_epilogue"))
      context.problem("unsupported", "persistent with stage_epilogue: the result tile would share the stages the "
                                     "producer fills for the next tile");
    else if (isBatchMatmul(context.facts))
      context.problem("unsupported", "persistent loops over a 2-D grid of tiles; a batch_matmul's batch takes a "
                                     "grid dimension of its own");
  }
  std::string mmaOption(const Action &action) const override {
    return ", persistent_blocks = " + std::to_string(action.value);
  }
};

/// The operand multicast shares within a pair of blocks: the one whose block tile is larger (B's columns at
/// least A's rows: "b"), so the pair reads less from L2 (128 x 256 blocks sharing B: 64 KB a stage for the pair
/// instead of 96).
static char sharedOperand(const Schedule &schedule, const PayloadFacts &facts) {
  size_t m = matmulRowDim(facts);
  return blockExtent(schedule, facts, m + 1) >= blockExtent(schedule, facts, m) ? 'b' : 'a';
}

class MulticastAction : public MmaOptionAction {
public:
  MulticastAction()
      : MmaOptionAction(
            ActionSpec{"multicast",
                       "Run the blocks in clusters of two that share the larger operand tile (B's when the block "
                       "has at least as many columns as rows, else A's): each block's producer copies half of that "
                       "tile into both blocks' stage by TMA multicast, and a stage is refilled once the consumers of "
                       "both blocks are done with it. The pair reads a third less from L2 (128 x 256 blocks: 64 KB "
                       "a stage instead of 96).",
                       "the cluster_multicast option of transform.kforge.matmul_to_mma_sync (a gpu.launch with "
                       "clusters of 2; multicast cp.async.bulk.tensor, mbarrier arrivals on the peer block by mapa, "
                       "cluster barriers)",
                       {},
                       {"gpu"},
                       "warp_specialize before it and no persistent; a 2-D matmul (not a batch) whose tiles along "
                       "the pair's dimension (M when B is shared, N when A is) are even in number"},
            56) {}

  void validate(const ValidationContext &context) const override {
    const Schedule &schedule = context.schedule;
    const PayloadFacts &facts = context.facts;
    if (!findSlot(schedule, "warp_specialize")) {
      context.problem("precondition", "multicast needs warp_specialize before it (the producer warps issue the "
                                      "multicast copies; the empty mbarriers count both blocks' consumers)");
      return;
    }
    if (findSlot(schedule, "persistent")) {
      context.problem("unsupported", "multicast with persistent: the pair's blocks would have to walk the same "
                                     "tiles' shared operand in step");
      return;
    }
    if (isBatchMatmul(facts)) {
      context.problem("unsupported", "multicast pairs blocks of a 2-D grid of tiles; a batch_matmul's batch takes a "
                                     "grid dimension of its own");
      return;
    }
    size_t m = matmulRowDim(facts);
    char shared = sharedOperand(schedule, facts);
    int64_t rows = blockExtent(schedule, facts, m), cols = blockExtent(schedule, facts, m + 1);
    if (rows <= 0 || cols <= 0 || facts.parallelSizes.size() < m + 2)
      return; // (tile(block) reports it)
    // The pair spans the tiles the other operand moves along: M's for a shared B, N's for a shared A.
    int64_t extent = facts.parallelSizes[shared == 'b' ? m : m + 1], tile = shared == 'b' ? rows : cols;
    int64_t tiles = (extent + tile - 1) / tile;
    if (tiles % 2)
      context.problem("shape", std::string("multicast pairs the blocks along ") + (shared == 'b' ? "M" : "N") +
                                   " (sharing " + (shared == 'b' ? "B" : "A") + "'s tile): its " +
                                   std::to_string(tiles) + " tiles are not an even number");
    // The shared tile splits in two: B as K x N (or A as K x M) in 64-column atoms, an even number of them
    // (TF32 reads both operands K-major, one box each; with swap_ab, B as it lies in 32-column atoms).
    bool atoms = shared == 'b' ? !facts.contractionBTransposed : facts.contractionATransposed;
    int64_t atomColumns = findSlot(schedule, "swap_ab") ? 32 : 64;
    if (atoms && ((shared == 'b' ? cols : rows) / atomColumns) % 2)
      context.problem("shape", std::string("multicast splits ") + (shared == 'b' ? "B" : "A") +
                                   "'s tile between the pair: its " + std::to_string(shared == 'b' ? cols : rows) +
                                   " columns are an odd number of " + std::to_string(atomColumns) +
                                   "-column atoms");
  }
  std::string mmaOptionIn(const Action &, const Schedule &schedule, const PayloadFacts &facts) const override {
    return std::string(", cluster_multicast = \"") + sharedOperand(schedule, facts) + "\"";
  }
};

class OverlapAction : public MmaOptionAction {
public:
  OverlapAction()
      : MmaOptionAction(ActionSpec{"overlap",
                                   "Keep one tile's wgmma in flight: each tile's warpgroup MMAs are waited for one "
                                   "tile later (wgmma.wait_group "
                                   "1), so they overlap the wait for the next tile and the issue of its MMAs; the "
                                   "copies then run stages - 2 "
                                   "tiles ahead.",
                                   "the wgmma_in_flight = 1 option of transform.kforge.matmul_to_mma_sync (on a "
                                   "convolution, of transform.kforge.implicit_gemm_to_mma_sync)",
                                   {},
                                   {"gpu"},
                                   "wgmma and pipeline(3) or more before it; on a convolution, wgmma (its two "
                                   "stages, or pipeline's)"},
                        53) {}

  void validate(const ValidationContext &context) const override {
    const Action *pipeline = findSlot(context.schedule, "pipeline");
    if (stageIsImplicitGemm(context.facts)) { // (a convolution's: two stages, or cp.async ones 3 or more)
      if (!findSlot(context.schedule, "wgmma"))
        context.problem("precondition", "overlap needs wgmma before it (it keeps one tile's wgmma in flight)");
      return;
    }
    if (!findSlot(context.schedule, "wgmma") || !pipeline || pipeline->value < 3)
      context.problem("precondition",
                      "overlap needs wgmma and pipeline(3) or more before it (the copies run stages - 2 tiles ahead)");
  }
  std::string mmaOption(const Action &) const override { return ", wgmma_in_flight = 1"; }
};

class SwapAbAction : public MmaOptionAction {
public:
  SwapAbAction()
      : MmaOptionAction(
            ActionSpec{"swap_ab",
                       "TF32 A @ B with B as it lies (K x N), no transpose: the warpgroups compute C^T = B^T A^T, as "
                       "CUTLASS's register-sourced kernels do. TMA copies both operands as they lie; each thread "
                       "reads its fragments of B from the stage into registers (wgmma's register A operand, which "
                       "needs no K-major layout) and A's K-major stage is the instruction's B (m64nMk8, M the "
                       "block's rows). The warps stand side by side: tile(thread) of the block's rows by 16 "
                       "columns, 64 columns per warpgroup; the epilogue takes each element at its transposed place.",
                       "the swap_ab option of transform.kforge.matmul_to_mma_sync (wgmma.mma_async with A from "
                       "registers, as inline PTX: the NVVM op takes descriptors only)",
                       {},
                       {"gpu"},
                       "wgmma, tma and tf32 before it; a linalg.matmul reading A as M x K and B as K x N (no "
                       "transpose_b); tile(thread) of the block's rows (a multiple of 16, at most 256) by 16 "
                       "columns, the block's columns a multiple of 64, at most 256"},
            58) {}

  void validate(const ValidationContext &context) const override {
    const Schedule &schedule = context.schedule;
    const PayloadFacts &facts = context.facts;
    if (!findSlot(schedule, "tma") || !findSlot(schedule, "tf32")) {
      context.problem("precondition", "swap_ab needs wgmma, tma and tf32 before it (it reads B's TF32 fragments "
                                      "from its TMA-filled stage into registers)");
      return;
    }
    if (stageIsImplicitGemm(facts) || facts.contractionOp != "linalg.matmul")
      context.problem("unsupported", "swap_ab rewrites a linalg.matmul's wgmma form; this payload's contraction is " +
                                         (facts.contractionOp.empty() ? std::string("none") : facts.contractionOp));
    else if (facts.contractionATransposed || facts.contractionBTransposed || findSlot(schedule, "transpose_b"))
      context.problem("unsupported", "swap_ab reads A as M x K and B as K x N (a plain A @ B); this matmul reads " +
                                         std::string(facts.contractionATransposed ? "A as K x M" : "B as N x K") +
                                         " (TF32 wgmma with tma takes B as N x K as it lies: drop swap_ab)");
  }
  std::string mmaOption(const Action &) const override { return ", swap_ab"; }
};

class ProducerWarpgroupAction : public MmaOptionAction {
public:
  ProducerWarpgroupAction()
      : MmaOptionAction(
            ActionSpec{"producer_warpgroup",
                       "Make warp_specialize's producer a whole warpgroup that gives its registers to the "
                       "consumers, as CUTLASS's warp-specialized kernels do: the block gets 128 threads more than its "
                       "warp grid (not 32), the kernel is compiled for the block's whole register file (.maxnreg), "
                       "the producer warpgroup lowers its registers to 40 (setmaxnreg.dec) and the consumer "
                       "warpgroups raise theirs to what that leaves (setmaxnreg.inc: 232 a thread for two "
                       "warpgroups, where a lone producer warp leaves the block's 9 warps at most 168). For tiles "
                       "whose accumulators and fragments do not fit otherwise (swap_ab's 256 x 128).",
                       "the producer_warpgroup option of transform.kforge.matmul_to_mma_sync (nvvm.setmaxregister; "
                       "the launch's kforge.max_registers request, which becomes the kernel's .maxnreg)",
                       {},
                       {"gpu"},
                       "warp_specialize before it; no max_registers or occupancy (the kernel's register bound is "
                       "what setmaxnreg shares out)"},
            59) {}

  void validate(const ValidationContext &context) const override {
    const Schedule &schedule = context.schedule;
    if (!findSlot(schedule, "warp_specialize"))
      context.problem("precondition", "producer_warpgroup needs warp_specialize before it (it makes the producer warp "
                                      "a warpgroup)");
    else if (findSlot(schedule, "max_registers") || findSlot(schedule, "occupancy"))
      context.problem("unsupported", "producer_warpgroup compiles the kernel for the block's whole register file and "
                                     "shares it out by setmaxnreg: it does not combine with max_registers or "
                                     "occupancy, which bound the kernel's registers themselves");
  }
  std::string mmaOption(const Action &) const override { return ", producer_warpgroup"; }
};

} // namespace

void kforge::tune::addTmaOptionActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<TmaAction>());
  definitions.push_back(std::make_unique<WarpSpecializeAction>());
  definitions.push_back(std::make_unique<PersistentAction>());
  definitions.push_back(std::make_unique<OverlapAction>());
  definitions.push_back(std::make_unique<MulticastAction>());
  definitions.push_back(std::make_unique<SwapAbAction>());
  definitions.push_back(std::make_unique<ProducerWarpgroupAction>());
}
