//===- TensorCoreProposals.cpp - the heuristic's tensor-core schedules --- ===//
//
// mma.sync, staged, ldmatrix, pipelined and Hopper wgmma schedules for bf16/f16 matmuls, first for their payloads.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace kforge::tune;
using namespace kforge::tune::search;
using llvm::StringRef;

namespace kforge::tune::search {

/// Whether the pipelined tensor-core forms can take partial tiles of this matmul: their cp.async copies are 16
/// bytes, so the rows they copy (A's, K long; B's, N long or K long when B is N x K) start on whole 8-element
/// vectors; what lies past M, N or K is zero-filled.
static bool partialTilesFit(const PayloadFacts &facts, int64_t n) {
  return facts.contractionK % 8 == 0 && (facts.contractionBTransposed || n % 8 == 0);
}

/// The most a block may pad a loop it does not divide (the partial last tile computes the whole block): 1/8 of
/// the loop. A dividing block wastes nothing; a prime-sized loop gets the largest block within this bound.
static constexpr double kMaxPartialWaste = 0.125;

/// Whether a bm x bn block suits an m x n matmul: it divides both, or (partial tiles allowed) it is in the tile
/// domain (powers of two: a size that does not divide its loop must be one) and pads neither loop by more than
/// kMaxPartialWaste.
static bool blockFits(int64_t m, int64_t n, int64_t bm, int64_t bn, bool partialOk) {
  if (m % bm == 0 && n % bn == 0)
    return true;
  auto fits = [](int64_t extent, int64_t block) {
    if (extent % block == 0)
      return true;
    double padded = double((extent + block - 1) / block * block) / double(extent);
    return llvm::isPowerOf2_64(block) && padded <= 1 + kMaxPartialWaste;
  };
  return partialOk && fits(m, bm) && fits(n, bn);
}

/// The share of the grid's block slots (whole waves of one block a multiprocessor) that a bm x bn block tiling of
/// an m x n output fills with work inside the output: 1 when the blocks divide it and fill their last wave.
static double wavesFilled(int64_t m, int64_t n, int64_t bm, int64_t bn, const HardwareProfile &profile) {
  int64_t sms = std::max<int64_t>(1, profile.multiprocessors);
  int64_t blocks = llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn);
  return double(m) * double(n) / (double(llvm::divideCeil(blocks, sms) * sms) * double(bm * bn));
}

/// Tensor-core proposals for sizes the fixed blocks do not divide (e.g. 2000x3000, K = 1000; primes): pipelined
/// mma.sync on the largest blocks of whole 16x8 instruction tiles that divide M and N, or that pad neither by
/// more than kMaxPartialWaste (their last tile partial: copies zero-filled and stores skipped past the edge),
/// warp tiles of 16 or 32 rows by up to 64 columns, 4 to 32 warps; the last tile of K zero-filled when block_k
/// does not divide it. `tiles` adds a batch_matmul's leading 1.
void addIrregularMmaProposals(const PayloadFacts &facts, const HardwareProfile &profile, int64_t m, int64_t n,
                              llvm::function_ref<std::vector<int64_t>(std::vector<int64_t>)> tiles,
                              llvm::function_ref<std::string(Schedule, std::string, std::string)> add) {
  bool partialOk = partialTilesFit(facts, n);
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t bm = 128; bm >= 16; bm -= 16)
    for (int64_t bn = 256; bn >= 8; bn -= 8)
      if (blockFits(m, n, bm, bn, partialOk))
        blocks.push_back({bm, bn});
  // Ranked by the useful share of the work the grid does (padding past the edges, and the idle multiprocessors
  // of the last wave, one block each) times the block's arithmetic intensity (bm bn / (bm + bn): products per
  // operand element staged), so a large block that leaves half a wave idle does not outrank a smaller one.
  auto score = [&](std::pair<int64_t, int64_t> block) {
    auto [bm, bn] = block;
    return wavesFilled(m, n, bm, bn, profile) * double(bm * bn) / double(bm + bn);
  };
  std::stable_sort(blocks.begin(), blocks.end(), [&](const auto &x, const auto &y) { return score(x) > score(y); });
  // Blocks of 4 to 32 warps; an output too small for any (M or N under a block: 100 x 100) takes blocks of
  // fewer warps rather than nothing.
  auto warpTile = [](int64_t bm, int64_t bn) {
    int64_t wm = bm % 32 == 0 ? 32 : 16, wn = 0;
    for (int64_t c = 64; c >= 8 && !wn; c -= 8)
      if (bn % c == 0)
        wn = c;
    return std::pair<int64_t, int64_t>{wm, wn};
  };
  auto warpsOf = [&](std::pair<int64_t, int64_t> block) {
    auto [wm, wn] = warpTile(block.first, block.second);
    return (block.first / wm) * (block.second / wn);
  };
  int64_t fewestWarps =
      llvm::any_of(blocks, [&](auto block) { return warpsOf(block) >= 4 && warpsOf(block) <= 32; }) ? 4 : 1;
  int proposed = 0;
  for (auto [bm, bn] : blocks) {
    auto [wm, wn] = warpTile(bm, bn);
    int64_t warps = (bm / wm) * (bn / wn);
    if (warps < fewestWarps || warps > 32)
      continue;
    Schedule v;
    v.push_back(tile("block", tiles({bm, bn})));
    v.push_back(tile("thread", tiles({wm, wn})));
    v.push_back(intAction("mma", 1));
    v.push_back(intAction("stage", 64));
    if (wn % 16 == 0)
      v.push_back(Action{"ldmatrix"});
    v.push_back(intAction("pipeline", 3));
    addRequiredFusions(v, facts, profile, /*always=*/true);
    add(v, "",
        "heuristic: tensor cores on " + std::to_string(bm) + "x" + std::to_string(bn) + " blocks that " +
            (m % bm == 0 && n % bn == 0 ? "divide the matmul" : "leave partial tiles at its edges") +
            ", 3 cp.async stages of 64 of K");
    if (++proposed == 3)
      break;
  }
}

/// A wgmma schedule: the block and warp tiles (16 rows by the block's columns), one swizzled row of K per stage
/// (block_k: 64 16-bit elements or 32 f32), `stages` filled by cp.async or TMA, one tile's wgmma in flight or not.
static Schedule wgmmaSchedule(std::vector<int64_t> block, std::vector<int64_t> warp, int64_t blockK, int64_t stages,
                              bool tma, bool overlap, bool warpSpecialized = false, int64_t persistentBlocks = 0) {
  Schedule v;
  v.push_back(tile("block", std::move(block)));
  v.push_back(tile("thread", std::move(warp)));
  v.push_back(intAction("mma", 1));
  v.push_back(intAction("stage", blockK));
  v.push_back(intAction("pipeline", stages));
  v.push_back(Action{"wgmma"});
  if (tma)
    v.push_back(Action{"tma"});
  if (tma && warpSpecialized)
    v.push_back(Action{"warp_specialize"});
  if (overlap)
    v.push_back(Action{"overlap"});
  if (tma && warpSpecialized && persistentBlocks > 0)
    v.push_back(intAction("persistent", persistentBlocks));
  return v;
}

/// TF32 for an fp32 matmul the request allows it for (--allow-tf32). On Hopper, when B is N x K (nn.Linear's
/// weight: TF32 wgmma reads both operands K-major), the wgmma forms of the bf16 proposals below with stages of
/// 32 f32 of K (one 128-byte swizzled row) and the tf32 option; then, on any tensor-core GPU and for B either
/// way, mma.sync m16n8k8 on the pipelined stages (fragments read element by element). Partial tiles as the
/// bf16 forms take them: TMA and cp.async zero-fill past the edges (K a multiple of 4: whole 16-byte rows).
static void addTf32Proposals(const PayloadFacts &facts, const HardwareProfile &profile,
                             llvm::function_ref<std::string(Schedule, std::string, std::string)> add) {
  bool hopper = profile.chip.empty() || StringRef(profile.chip).starts_with("sm_90");
  int64_t m = facts.parallelSizes[0], n = facts.parallelSizes[1];
  struct Warpgroup {
    std::vector<int64_t> block;
    int64_t stages;
    bool tma, overlap, stageEpilogue = false, warpSpecialized = false, multicast = false;
  };
  // Each stage is (rows + columns) x 128 bytes: 128x256 over 4 stages is 192 KB of the 227 KB a block may have.
  // First the form the 16-bit gemms measured fastest (a producer warp issuing the TMA copies, the result through
  // shared memory: addTensorCoreProposals below), on 128 x 256 blocks; the 16-bit and TF32 forms differ only in
  // the instruction's K and in the elements a 128-byte swizzled row holds. On an H100 in session 62 it tied the
  // best TF32 form on the 4096^3 Linear (0.390 against 0.389 ms; docs/perf/tensorcores-h200.md "Session 62").
  // Then the forms of the TF32 table ("TF32": 128x256, 4 cp.async stages, overlap the best there).
  // First of all, that form in clusters of two blocks sharing B's tile by TMA multicast: on an H100 (fixed
  // kernels, two rounds; results/benchmarks-h100/2026-12-07/s63-call-2, -3) 0.358 ms against 0.392 without on
  // the 4096^3 Linear, 3.11-3.16 against 3.24-3.25 at 8192^3.
  std::vector<Warpgroup> warpgroups = {{{128, 256}, 4, true, true, true, true, true},
                                       {{128, 256}, 4, true, true, true, true},
                                       {{128, 256}, 4, true, true},
                                       {{128, 128}, 4, true, true},
                                       {{128, 256}, 3, true, false},
                                       {{128, 256}, 4, false, true},
                                       {{128, 256}, 4, true, true, false, true},
                                       {{64, 128}, 4, true, true},
                                       {{128, 128}, 3, false, false},
                                       {{256, 128}, 4, true, true, true, true}};
  // 256 x 128 first where its grid fills the waves better (as for the 16-bit forms).
  if (wavesFilled(m, n, 256, 128, profile) > wavesFilled(m, n, 128, 256, profile) + 0.05)
    std::stable_partition(warpgroups.begin(), warpgroups.end(), [](const Warpgroup &w) { return w.block[0] == 256; });
  // B as K x N (a plain A @ B): the first three forms on an N x K copy of B made by a kernel of its own
  // (transpose_b: a read and a write of B, against mma.sync's forms below, whose B fragments are read element by
  // element: 0.43x of cuBLAS TF32 at 4096^3 on an H100, docs/perf/tensorcores-h200.md "TF32").
  // The cp.async forms take either operand as it lies: their copies transpose it element by element into the
  // K-major stages (4-byte cp.async; no kernel of its own, no second pass over B). Correct but slow on an H100
  // (session 65: 0.688 ms at 4096^3 against 0.408 for transpose_b and the multicast form; 4x the copy
  // instructions, no tile shared between blocks), so they come after the transpose_b forms; for A as K x M
  // (no transpose_b) they are the only TF32 wgmma forms.
  bool kMajor = facts.contractionBTransposed && !facts.contractionATransposed;
  bool copyB = !facts.contractionBTransposed && transposeBApplies(facts);
  // A plain A @ B (A as M x K, B as K x N): swap_ab's forms, C^T = B^T A^T with B's fragments through registers
  // (no transpose kernel, both operands by TMA as they lie), 4 stages, one tile's wgmma in flight, the result
  // through shared memory, the warps side by side. First 256 x 128 blocks without a producer warp (two
  // warpgroups of m64n256k8: 128 accumulators and 32 fragment registers a thread, 171 registers, which ptxas
  // gives 8 warps); with a producer warp the 9 warps get at most 168 and ptxas serializes the wgmma (it says so),
  // so the warp-specialized forms (which multicast needs) make the producer a warpgroup that gives its registers
  // to the consumers (producer_warpgroup: 232 a thread): 256 x 128 in pairs sharing A's tile, then 128 x 128
  // (122 registers without it). (128 x 256 takes four consumer warpgroups: 112 registers a thread even with the
  // producer's, and ptxas serializes its wgmma.) They come first: on an H100 (session 67, two processes) the
  // 4096^3 A @ B's best was the first, 0.357-0.359 ms against cuBLAS TF32's 0.345-0.347 (transpose_b's best
  // 0.410, sessions 64-66), the 8192^3's the second, 2.996 ms against transpose_b's 3.240.
  bool swapAB = hopper && !facts.contractionATransposed && !facts.contractionBTransposed &&
                facts.contractionOp == "linalg.matmul";
  auto addSwapAB = [&] {
    struct Swapped {
      std::vector<int64_t> block;
      bool warpSpecialized, multicast, producerWarpgroup = false;
    };
    for (const Swapped &w :
         std::vector<Swapped>{{{256, 128}, false, false}, {{256, 128}, true, true, true}, {{128, 128}, true, true}}) {
      if (!blockFits(m, n, w.block[0], w.block[1], /*partialOk=*/true))
        continue;
      Schedule v = wgmmaSchedule(w.block, {w.block[0], 16}, /*blockK=*/32, /*stages=*/4, /*tma=*/true,
                                 /*overlap=*/true, w.warpSpecialized);
      v.push_back(Action{"stage_epilogue"});
      if (w.multicast)
        v.push_back(Action{"multicast"});
      v.push_back(Action{"tf32"});
      v.push_back(Action{"swap_ab"});
      if (w.producerWarpgroup)
        v.push_back(Action{"producer_warpgroup"});
      addRequiredFusions(v, facts, profile, /*always=*/true);
      add(v, "",
          "heuristic: TF32 wgmma (allowed by the request) computing C^T = B^T A^T (swap_ab: B's fragments from its "
          "stage into registers, no transpose) on " +
              std::to_string(w.block[0]) + "x" + std::to_string(w.block[1]) + " blocks, 4 TMA stages" +
              (w.warpSpecialized ? " from a producer warp" : "") +
              ", one tile's wgmma in flight, the result stored through shared memory" +
              (w.multicast ? ", in clusters of two blocks sharing a tile by TMA multicast" : "") +
              (w.producerWarpgroup ? ", the producer a warpgroup giving its registers to the consumers" : ""));
    }
  };
  int copied = 0;
  if (swapAB)
    addSwapAB();
  for (const Warpgroup &w : warpgroups) {
    bool transposing = !kMajor && !w.tma, viaCopy = !kMajor && w.tma && copyB && copied < 3;
    if (!hopper || (!kMajor && !transposing && !viaCopy) ||
        !blockFits(m, n, w.block[0], w.block[1], /*partialOk=*/true))
      continue;
    Schedule v = wgmmaSchedule(w.block, {16, w.block[1]}, /*blockK=*/32, w.stages, w.tma, w.overlap, w.warpSpecialized);
    if (w.stageEpilogue)
      v.push_back(Action{"stage_epilogue"});
    if (w.multicast)
      v.push_back(Action{"multicast"});
    v.push_back(Action{"tf32"});
    addRequiredFusions(v, facts, profile, /*always=*/true);
    if (viaCopy) {
      v.insert(v.begin(), Action{"transpose_b"});
      ++copied;
    }
    add(v, "",
        "heuristic: TF32 wgmma (allowed by the request) on " + std::to_string(w.block[0]) + "x" +
            std::to_string(w.block[1]) + " blocks, " + std::to_string(w.stages) +
            " swizzled stages of 32 f32 of K filled by " + (w.tma ? "TMA" : "cp.async") +
            (w.warpSpecialized ? " from a producer warp" : "") + (w.overlap ? ", one tile's wgmma in flight" : "") +
            (w.stageEpilogue ? ", the result stored through shared memory" : "") +
            (w.multicast ? ", in clusters of two blocks sharing B's tile by TMA multicast" : "") +
            (viaCopy ? ", on B copied N x K" : "") +
            (transposing
                 ? std::string(", the stages' copies transposing ") + (!facts.contractionATransposed  ? "B"
                                                                       : facts.contractionBTransposed ? "A"
                                                                                                      : "A and B")
                 : ""));
  }
  // mma.sync: blocks of 4-8 warps, each warp 32-64 rows by 32-64 columns (16-32 m16n8k8 tiles); stages of 32 f32
  // of K (A's rows 36 f32 apart, B's N + 8: no bank conflict on the fragments' reads). Its fragments read A as
  // M x K only.
  if (facts.contractionATransposed)
    return;
  struct Pipelined {
    std::vector<int64_t> block, warp;
    int64_t blockK, stages;
  };
  for (const Pipelined &p : std::vector<Pipelined>{{{128, 128}, {64, 32}, 32, 3},
                                                   {{128, 128}, {32, 64}, 32, 3},
                                                   {{128, 256}, {64, 64}, 32, 3},
                                                   {{64, 128}, {32, 32}, 32, 4},
                                                   {{128, 128}, {64, 32}, 16, 4}}) {
    if (!blockFits(m, n, p.block[0], p.block[1], /*partialOk=*/facts.contractionBTransposed || n % 4 == 0))
      continue;
    Schedule v;
    v.push_back(tile("block", p.block));
    v.push_back(tile("thread", p.warp));
    v.push_back(intAction("mma", 1));
    v.push_back(intAction("stage", p.blockK));
    v.push_back(intAction("pipeline", p.stages));
    v.push_back(Action{"tf32"});
    addRequiredFusions(v, facts, profile, /*always=*/true);
    std::string parent = add(v, "",
                             "heuristic: TF32 mma.sync (allowed by the request) on " + std::to_string(p.block[0]) +
                                 "x" + std::to_string(p.block[1]) + " blocks of " + std::to_string(p.warp[0]) + "x" +
                                 std::to_string(p.warp[1]) + " warp tiles, " + std::to_string(p.stages) +
                                 " cp.async stages of " + std::to_string(p.blockK) + " f32 of K");
    // A's fragments (and B's, when it is N x K) by ldmatrix: one instruction for what took four loads.
    Schedule withLdmatrix = v;
    auto stage = llvm::find_if(withLdmatrix, [](const Action &a) { return a.kind == "stage"; });
    withLdmatrix.insert(stage + 1, Action{"ldmatrix"});
    add(withLdmatrix, parent, "add ldmatrix (A's TF32 fragments, 8 rows of 4 f32 per matrix)");
  }
}

/// The schedule with group_blocks(8) where a grouped block order may pay: several waves of blocks over operands
/// that L2 cannot hold (row by row each wave reads all of B), e.g. an 8192^3 gemm of 256 x 128 tiles (2048
/// blocks, 132 at once on an H100: about 133 MB a wave instead of 280, test/Tune/group-blocks.test). "Several":
/// at least 4 waves of one block a multiprocessor (a 4096^3 gemm's 512 blocks of 256 x 128 are 3.9).
static std::optional<Schedule> withGroupedOrder(Schedule v, const PayloadFacts &facts, const HardwareProfile &profile) {
  const Action *block = slot(v, "tile", "block");
  if (!block || profile.l2Bytes <= 0 || facts.bytes <= profile.l2Bytes)
    return std::nullopt;
  int64_t blocks = 1, tiledLoops = 0;
  for (size_t d = 0; d < facts.parallelSizes.size() && d < block->sizes.size(); ++d)
    if (block->sizes[d] > 0) {
      int64_t count = llvm::divideCeil(facts.parallelSizes[d], block->sizes[d]);
      blocks *= count;
      tiledLoops += count > 1;
    }
  if (tiledLoops < 2 || blocks < 4 * static_cast<int64_t>(profile.multiprocessors))
    return std::nullopt;
  v.push_back(intAction("group_blocks", 8));
  return v;
}

/// The tensor-core schedules the heuristic tries first for a bf16/f16 matmul (SIMT code runs it at a few
/// percent of the GPU's bf16 rate): mma.sync tiles, staged, with ldmatrix, pipelined, then wgmma. For an fp32
/// matmul only under --allow-tf32: the TF32 wgmma forms.
void addTensorCoreProposals(const PayloadFacts &facts, const HardwareProfile &profile,
                            llvm::function_ref<std::string(Schedule, std::string, std::string)> addProposal) {
  // The first form (the one measured fastest) again with its blocks in groups of 8 block rows, where that may
  // pay; not yet measured on a GPU, so only once.
  bool groupedFirst = false;
  auto addThenGrouped = [&](Schedule v, std::string parent, std::string why) {
    std::string hash = addProposal(v, parent, why);
    if (!groupedFirst && !hash.empty()) {
      groupedFirst = true;
      if (std::optional<Schedule> grouped = withGroupedOrder(v, facts, profile))
        addProposal(*grouped, hash,
                    "add group_blocks(8) (the blocks in groups of 8 block rows: the operands L2 cannot hold "
                    "shared by the blocks resident at once)");
    }
    return hash;
  };
  llvm::function_ref<std::string(Schedule, std::string, std::string)> add = addThenGrouped;
  if (gpu(profile) && tf32Applies(facts))
    return addTf32Proposals(facts, profile, add);
  // Tensor cores first for a bf16/f16 matmul: SIMT code runs it at a few percent of the GPU's bf16 rate. Warp
  // tiles of 32-64 rows and columns (4-16 mma.sync tiles, 32-64 accumulators per lane) in blocks of 4-8 warps.
  if (!gpu(profile) || !mmaApplies(facts))
    return;
  // A batch_matmul's forms take one batch per block (its tiles get a leading 1) and must be staged.
  size_t rowDim = matmulRowDim(facts);
  bool batch = rowDim > 0;
  int64_t m = facts.parallelSizes[rowDim], n = facts.parallelSizes[rowDim + 1];
  auto tiles = [&](std::vector<int64_t> sizes) {
    if (batch)
      sizes.insert(sizes.begin(), 1);
    return sizes;
  };
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> mmaTiles = {
      {{128, 128}, {32, 64}}, {{64, 64}, {32, 32}},  {{128, 128}, {64, 32}},
      {{128, 64}, {32, 32}},  {{64, 128}, {32, 32}}, {{128, 256}, {64, 64}}};
  // Measurements: docs/perf/heuristic.md (addTensorCoreProposals).
  struct Pipelined {
    std::vector<int64_t> block, warp;
    int64_t blockK, stages;
  };
  const std::vector<Pipelined> pipelined = {{{128, 128}, {32, 64}, 64, 3}, {{128, 128}, {32, 64}, 32, 4},
                                            {{128, 256}, {64, 64}, 32, 3}, {{256, 128}, {64, 64}, 32, 3},
                                            {{128, 128}, {64, 64}, 64, 3}, {{64, 64}, {32, 32}, 64, 3}};
  // The pipelined forms take partial tiles (copies zero-filled, stores skipped past the edge).
  bool partialOk = partialTilesFit(facts, n);
  auto addPipelined = [&] {
    for (const Pipelined &p : pipelined) {
      if (!blockFits(m, n, p.block[0], p.block[1], partialOk))
        continue;
      Schedule v;
      v.push_back(tile("block", tiles(p.block)));
      v.push_back(tile("thread", tiles(p.warp)));
      v.push_back(intAction("mma", 1));
      v.push_back(intAction("stage", p.blockK));
      v.push_back(Action{"ldmatrix"});
      v.push_back(intAction("pipeline", p.stages));
      addRequiredFusions(v, facts, profile, /*always=*/true);
      std::string parent = add(v, "",
                               "heuristic: tensor cores, " + std::to_string(p.stages) + " stages of " +
                                   std::to_string(p.blockK) + " of K filled by cp.async, ldmatrix");
      // Measurements: docs/perf/heuristic.md (addTensorCoreProposals).
      if (&p == &pipelined.front()) {
        v.push_back(Action{"stage_epilogue"});
        add(v, parent, "add stage_epilogue (the result stored through shared memory in 16-byte rows)");
      }
    }
  };
  // Hopper's warpgroup MMA first (sm_90a): pipelined, 128-byte swizzled stages of 64 of K, 64 rows per warpgroup
  // by the block's columns; their stages filled by cp.async or by TMA (tma), each tile's wgmma waited for at once
  // or one tile later (overlap). Measurements: docs/perf/heuristic.md (addTensorCoreProposals).
  struct Warpgroup {
    std::vector<int64_t> block;
    int64_t stages;
    bool tma, overlap, stageEpilogue = false, warpSpecialized = false, persistent = false, multicast = false;
  };
  // (Only on Hopper, sm_90: elsewhere wgmma does not exist; an unknown chip gets them too.)
  bool hopper = profile.chip.empty() || StringRef(profile.chip).starts_with("sm_90");
  // First, a producer warp issuing the TMA copies (warp_specialize) with the result through shared memory: on an
  // H100 (fixed kernels, two rounds; results/benchmarks-h100/2026-12-07/s61-call-2) 0.189 ms on the 4096^3 bf16
  // gemm against 0.215 for the cp.async form next, 0.212 warp-specialized without stage_epilogue; the fastest
  // of five forms on all six bf16/f16 gemm tasks there (the 2000 x 3000 x 1000 one 0.035 against 0.051). Its
  // 256 x 128 blocks (four consumer warpgroups of 64 x 128) before 128 x 256: in session 62's searches on an H100
  // (results/benchmarks-h100/2026-12-07/s62-call-1..3) the faster of the two on the 4096^3 bf16 and f16 gemms,
  // the 8192^3 bf16 one and the gemm + bias + relu (0.184 against 0.189 ms, 0.189 against 0.190, 1.480 against
  // 1.554, 0.186 against 0.192); 128 x 256 first where its grid fills the waves better (below).
  std::vector<Warpgroup> warpgroups = {{{256, 128}, 4, true, true, true, true},
                                       // 128 x 256 in clusters of two blocks sharing B's tile by TMA
                                       // multicast (issue 34): on an H100 (fixed kernels, two rounds;
                                       // results/benchmarks-h100/2026-12-07/s63-call-2, -4) 0.185 ms against
                                       // 0.190 without on the 4096^3 bf16 gemm, a tie in f16 (0.189); 256 x
                                       // 128 sharing A's was slower than without (0.188 against 0.183)
                                       {{128, 256}, 4, true, true, true, true, false, true},
                                       {{128, 256}, 4, true, true, true, true},
                                       {{128, 256}, 4, false, true},
                                       {{128, 128}, 3, false, false},
                                       // warp-specialized with the lanes' own stores; and one block a
                                       // multiprocessor looping over tiles (persistent: incorrect on its one
                                       // GPU run, fixed since, not run again: docs/perf/tensorcores-h200.md)
                                       {{128, 256}, 4, true, true, false, true},
                                       {{128, 256}, 4, true, true, false, true, true},
                                       {{64, 128}, 4, true, true},
                                       {{128, 128}, 3, true, false},
                                       {{128, 256}, 3, true, false},
                                       {{128, 256}, 4, true, true},
                                       {{128, 128}, 4, false, true},
                                       // the result through shared memory: 16-byte row stores
                                       {{128, 256}, 4, false, true, true},
                                       // four warpgroups of 64 x 128 (the same stages, tile and occupancy)
                                       // (the 4093 x 4099 Linear on the H100 above: warp-specialized 0.348 ms
                                       // against 0.381 for cp.async)
                                       {{256, 128}, 4, false, true},
                                       {{256, 128}, 4, true, true}};
  // 256 x 128 blocks first where their grid leaves fewer multiprocessors idle than 128 x 256's: the two take the
  // same shared memory (one block a multiprocessor with 4 stages) and do the same work a block, so the one whose
  // blocks fill whole waves better is the faster (a 4093 x 4099 Linear: 32 x 17 blocks of 128 x 256 are 4.1
  // waves of 132, 16 x 33 of 256 x 128 are 4.0). Elsewhere the measured order above stands.
  if (wavesFilled(m, n, 256, 128, profile) > wavesFilled(m, n, 128, 256, profile) + 0.05)
    std::stable_partition(warpgroups.begin(), warpgroups.end(), [](const Warpgroup &w) { return w.block[0] == 256; });
  else if (wavesFilled(m, n, 128, 256, profile) > wavesFilled(m, n, 256, 128, profile) + 0.05)
    std::rotate(warpgroups.begin(), warpgroups.begin() + 1, warpgroups.begin() + 3); // (both 128 x 256 forms first)
  bool first = true;
  for (const Warpgroup &w : warpgroups) {
    // (A K that 64 does not divide: the last tile's copies past K are zero-filled.)
    if (!hopper || !blockFits(m, n, w.block[0], w.block[1], partialOk) || facts.contractionK % 8)
      continue;
    // (Persistent: one block a multiprocessor, which a 128x256 block with 4 stages fills. Not for a batch: its
    // grid has a batch dimension.)
    if (w.persistent && (profile.multiprocessors <= 0 || batch))
      continue;
    // (Multicast pairs the blocks of a 2-D grid: not for a batch.)
    if (w.multicast && batch)
      continue;
    Schedule v = wgmmaSchedule(tiles(w.block), tiles({16, w.block[1]}), /*blockK=*/64, w.stages, w.tma, w.overlap,
                               w.warpSpecialized, w.persistent ? profile.multiprocessors : 0);
    if (w.stageEpilogue)
      v.push_back(Action{"stage_epilogue"});
    if (w.multicast)
      v.push_back(Action{"multicast"});
    addRequiredFusions(v, facts, profile, /*always=*/true);
    std::string parent =
        add(v, "",
            "heuristic: Hopper wgmma on " + std::to_string(w.block[0]) + "x" + std::to_string(w.block[1]) +
                " blocks, " + std::to_string(w.stages) + " swizzled stages of 64 of K filled by " +
                (w.tma ? "TMA" : "cp.async") + (w.warpSpecialized ? " from a producer warp" : "") +
                (w.persistent ? ", one block a multiprocessor looping over tiles" : "") +
                (w.overlap ? ", one tile's wgmma in flight" : "") +
                (w.stageEpilogue ? ", the result stored through shared memory" : "") +
                (w.multicast ? ", in clusters of two blocks sharing an operand's tile by TMA multicast" : ""));
    // The first form that fits, also with its result through shared memory, next: where the output is large
    // against the work (a short K: a 1x1 convolution's 256 channels) its lanes' 4-8 byte stores weigh. On the
    // bf16 1x1 convolution task (64x128 blocks, TMA, overlap; an H100, one search) 0.0308 ms with it against
    // 0.0356 without; a later search that never tried it stopped at 0.035 after 57 trials (docs/perf/heuristic.md).
    // A wrong guess costs a trial.
    if (first && !parent.empty() && !w.stageEpilogue) {
      first = false;
      v.push_back(Action{"stage_epilogue"});
      add(v, parent, "add stage_epilogue (the result stored through shared memory in 16-byte rows)");
    }
  }
  int tried = 0;
  if (m % 64 || n % 64)
    addIrregularMmaProposals(facts, profile, m, n, tiles, add);
  if (batch) {
    addPipelined(); // the unstaged and register-staged forms below are for a plain matmul
    return;
  }
  for (const auto &[block, warp] : mmaTiles) {
    if (m % block[0] || n % block[1])
      continue;
    Schedule v;
    v.push_back(tile("block", block));
    v.push_back(tile("thread", warp));
    v.push_back(intAction("mma", 1));
    addRequiredFusions(v, facts, profile, /*always=*/true);
    add(v, "", "heuristic: tensor cores (mma.sync) on these block and warp tiles");
    // The same tiles with A and B staged through shared memory (32 of K per tile, two stages): the loads
    // straight from global memory are what bounds the unstaged kernel (docs/perf/tensorcores-h200.md).
    if (tried < 3) {
      Schedule staged = v;
      staged.push_back(intAction("stage", 32));
      std::string stagedHash =
          add(staged, "", "heuristic: tensor cores, A and B staged in shared memory (32 of K per tile)");
      staged.push_back(Action{"ldmatrix"});
      add(staged, stagedHash, "add ldmatrix (fragments four 8x8 matrices per instruction)");
      // 64 of K per tile: half the barriers; the two stages (72 KB at 128x128) are dynamic shared memory.
      if (tried < 2) {
        Schedule deeper = v;
        deeper.push_back(intAction("stage", 64));
        deeper.push_back(Action{"ldmatrix"});
        add(deeper, "", "heuristic: tensor cores, staged 64 of K per tile (dynamic shared memory), ldmatrix");
      }
    }
    if (++tried == 1)
      addPipelined(); // right after the fastest tile's register-staged forms: the next step up
  }
}

} // namespace kforge::tune::search
