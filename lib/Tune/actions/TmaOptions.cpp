//===- TmaOptions.cpp - tma, warp_specialize, persistent, overlap -----------===//
//
// The options of Hopper's wgmma form of transform.kforge.matmul_to_mma_sync that fill and schedule its stages:
// the tensor memory accelerator's copies, a producer warp of their own, a loop over tiles, one tile's wgmma in
// flight.
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

} // namespace

void kforge::tune::addTmaOptionActions(ActionDefinitions &definitions) {
  definitions.push_back(std::make_unique<TmaAction>());
  definitions.push_back(std::make_unique<WarpSpecializeAction>());
  definitions.push_back(std::make_unique<PersistentAction>());
  definitions.push_back(std::make_unique<OverlapAction>());
}
