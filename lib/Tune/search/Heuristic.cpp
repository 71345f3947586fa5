//===- Heuristic.cpp - hardware-aware first guesses ------------------ ===//
//
// The heuristic policy's proposals, in order.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>

using namespace kforge::tune;
using namespace kforge::tune::search;
using llvm::StringRef;
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <map>

namespace kforge::tune::search {

namespace {

/// What the heuristic's rules share: the payload, the machine, the ranked tile configurations, the proposals so
/// far, and the best-ranked configuration fully scheduled (the base the later variants extend).
struct Heuristic {
  Heuristic(const PayloadFacts &facts, const HardwareProfile &profile)
      : facts(facts), profile(profile), contraction(!facts.contractionOp.empty() && facts.parallelSizes.size() >= 2),
        configs(contraction ? contractionConfigs(facts, profile) : rowConfigs(facts, profile)) {}

  /// Adds a proposal made valid with the fusions it needs; its hash, or empty when invalid or proposed before.
  std::string add(Schedule s, std::string parentHash, std::string step) {
    addRequiredFusions(s, facts, profile, /*always=*/true);
    sortByPhase(s);
    if (!valid(s, facts, profile) || !seen.insert(scheduleHash(s)).second)
      return std::string();
    Proposal p;
    p.schedule = s;
    p.policy = "heuristic";
    p.parentHash = std::move(parentHash);
    p.step = std::move(step);
    out.push_back(std::move(p));
    return scheduleHash(s);
  }

  const PayloadFacts &facts;
  const HardwareProfile &profile;
  const bool contraction;
  const std::vector<TileConfig> configs;
  std::vector<Proposal> out;
  llvm::StringSet<> seen;
  Schedule best;        ///< The best-ranked configuration, fully scheduled.
  std::string bestHash; ///< Its proposal's hash (empty when it was invalid).
};

/// Rows over lanes (coalesced columns, shuffle reductions) for rows that are reduced on the GPU, first: a
/// thread per row (the ranked configurations) reads a row's columns uncoalesced, 10-50x slower on the H200,
/// and at realistic sizes its trial alone can take a short tuning budget. What the row rules share.
struct RowKernel {
  explicit RowKernel(const Heuristic &heuristic) {
    const PayloadFacts &facts = heuristic.facts;
    const HardwareProfile &profile = heuristic.profile;
    rowSums = facts.parallelSizes.size() == 1 && facts.reductionSize > 0;
    applies = gpu(profile) && !heuristic.contraction && facts.reductionOps > 0 &&
              (facts.parallelSizes.size() == 2 || rowSums);
    if (!applies)
      return;

    rowCount = facts.parallelSizes[0];
    width = rowWidth(facts);
    // First, a row over several warps (one row per block, reduced over the block): rows too wide for a warp's
    // registers, or lighter threads for more rows in flight.
    // A streamed row (second): the most lanes that divide it, elementwise producers recomputed by their
    // consumers, no vectorize. Nothing of the row is kept (each pass re-reads it, from L2 after the first), so
    // a lane needs few registers and many rows are in flight: the alternative for rows too wide to keep in
    // registers at full occupancy (1024 x 32000 softmax: 640 lanes x 50 values, 95 registers, one block per SM).
    allLanes = lanesCounts(facts);
    streamLanes = allLanes.empty() ? 0 : allLanes.back();
    streams = !rowSums && facts.linalgOps > 1 && streamLanes > 32;
    multiprocessors = profile.multiprocessors;
    threadsPerMultiprocessor = profile.threadsPerMultiprocessor;
    elementBytes = facts.elementBytes();
    linalgOps = facts.linalgOps;
  }

  /// pipeline_rows pays off where a block's row (in registers over `lanes`) leaves room for one block per
  /// multiprocessor, and fits in a block's shared memory.
  bool pipelinable(int64_t lanes) const {
    return multiprocessors > 0 && residentRowBlocks(lanes, width, threadsPerMultiprocessor) == 1 &&
           width * elementBytes <= 200 * 1024;
  }

  /// One row per block and per thread (a row sum's root is 1-D), its producers fused.
  Schedule rowPerBlock() const {
    std::vector<int64_t> oneRow = rowSums ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 0};
    Schedule v;
    v.push_back(tile("block", oneRow));
    if (linalgOps > 1)
      v.push_back(fuse("block"));
    v.push_back(tile("thread", oneRow));
    if (linalgOps > 1)
      v.push_back(fuse("thread"));
    return v;
  }

  bool applies = false, rowSums = false, streams = false;
  int64_t rowCount = 0, width = 0, streamLanes = 0, multiprocessors = 0, threadsPerMultiprocessor = 2048,
          elementBytes = 4, linalgOps = 0;
  std::vector<int64_t> allLanes;
};

} // namespace

/// Row kernels, first: a row per block over lanes of 4 consecutive columns (16-byte accesses), then its variants.
static void proposeVectorLaneRows(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  RowKernel rows(heuristic);
  if (!rows.applies)
    return;
  bool rowSums = rows.rowSums;
  int64_t width = rows.width;
  const std::vector<int64_t> &allLanes = rows.allLanes;
  auto pipelinable = [&](int64_t lanes) { return rows.pipelinable(lanes); };
  auto rowPerBlock = [&] { return rows.rowPerBlock(); };
  // First, the row in registers over lanes that each own 4 consecutive columns (lane_vector(4)): 16-byte loads
  // and stores, a quarter of the instructions. Measurements: docs/perf/heuristic.md (proposeVectorLaneRows).
  {
    std::vector<int64_t> vectorLanes;
    for (int64_t lanes : allLanes)
      if (lanes > 32 && width % (4 * lanes) == 0 && width / lanes >= 8 && width / lanes <= 64)
        vectorLanes.push_back(lanes);
    std::stable_sort(vectorLanes.begin(), vectorLanes.end(),
                     [&](int64_t a, int64_t b) { return std::abs(width / a - 16) < std::abs(width / b - 16); });
    for (size_t i = 0; i < vectorLanes.size() && i < 3; ++i) {
      Schedule v = rowPerBlock();
      v.push_back(intAction("lanes", vectorLanes[i]));
      v.push_back(intAction("lane_vector", 4));
      v.push_back(vectorize());
      std::string parent =
          heuristic.add(v, "",
                        "heuristic: a row per block over " + std::to_string(vectorLanes[i]) +
                            " lanes of 4 consecutive columns (16-byte accesses), the row in registers");
      Schedule base = v;
      // (Not proposed: stash, part of such a row in shared memory for two blocks per multiprocessor).
      // Measurements: docs/perf/heuristic.md (proposeVectorLaneRows).
      int64_t elementBytes = facts.elementBytes();
      std::string prefetched;
      if (i == 0 && profile.multiprocessors > 0 && width * elementBytes <= 32 * 1024) {
        v.push_back(
            intAction("prefetch_rows", profile.multiprocessors *
                                           residentRowBlocks(vectorLanes[i], width, profile.threadsPerMultiprocessor)));
        prefetched = heuristic.add(v, parent, "add " + describe(v.back()) + " (the next wave's rows into L2)");
      }
      // The first also with its output stored evict-first (streaming_stores: written once, never read back).
      // Measurements: docs/perf/heuristic.md (proposeVectorLaneRows).
      if (i == 0 && !rowSums) {
        Schedule streamed = v;
        streamed.push_back(Action{"streaming_stores"});
        std::string streaming = heuristic.add(streamed, prefetched.empty() ? parent : prefetched,
                                              "add streaming_stores (the output evict-first in L2)");
        Schedule evictLast = streamed;
        streamed.push_back(Action{"read_only_inputs"});
        heuristic.add(streamed, streaming, "add read_only_inputs (the buffers it only reads by ld.global.nc)");
        // Or with its loads evict-last in L2 (as Triton's kernels load their rows). Measurements:
        // docs/perf/heuristic.md (proposeVectorLaneRows).
        evictLast.push_back(Action{"loads_evict_last"});
        heuristic.add(evictLast, streaming, "add loads_evict_last (the loads with an L2 evict-last policy)");
        // And with the prefetch two rows per multiprocessor ahead instead of a wave. Measurements:
        // docs/perf/heuristic.md (proposeVectorLaneRows).
        if (!prefetched.empty()) {
          Schedule near = base;
          near.push_back(intAction("prefetch_rows", 2 * profile.multiprocessors));
          near.push_back(Action{"streaming_stores"});
          near.push_back(Action{"loads_evict_last"});
          heuristic.add(
              near, parent,
              "add " + describe(near[near.size() - 3]) +
                  ", streaming_stores and loads_evict_last (two rows per multiprocessor ahead, loads evict-last)");
        }
        // And, where a prefetch is proposed, the loads evict-last without it. Measurements:
        // docs/perf/heuristic.md (proposeVectorLaneRows).
        if (!prefetched.empty()) {
          Schedule unprefetched = base;
          unprefetched.push_back(Action{"loads_evict_last"});
          heuristic.add(unprefetched, parent,
                        "add loads_evict_last without a prefetch (the loads with an L2 evict-last policy)");
        }
      }
      // A row sum reads each row once and writes little. Measurements: docs/perf/heuristic.md
      // (proposeVectorLaneRows).
      if (rowSums) {
        Schedule evictFirst = base; // call 23's best row sum had no prefetch
        evictFirst.push_back(Action{"loads_evict_first"});
        heuristic.add(evictFirst, parent, "add loads_evict_first (the loads with an L2 evict-first policy)");
      }
      // A row that leaves registers for one block per multiprocessor also with its blocks looping over rows, one
      // per multiprocessor, each copying its next row into shared memory while it computes the current one
      // (pipeline_rows). Measurements: docs/perf/heuristic.md (proposeVectorLaneRows).
      if (i == 0 && pipelinable(vectorLanes[i])) {
        Schedule w = base;
        w.push_back(intAction("pipeline_rows", profile.multiprocessors));
        std::string pipelined = heuristic.add(
            w, parent, "add " + describe(w.back()) + " (the next row copied into shared memory meanwhile)");
        if (!rowSums) {
          w.push_back(Action{"streaming_stores"});
          heuristic.add(w, pipelined, "add streaming_stores (the output evict-first in L2)");
        }
        // Then with the rows' bulk copies under an L2 policy. Measurements: docs/perf/heuristic.md
        // (proposeVectorLaneRows).
        Schedule policy = base;
        policy.push_back(intAction("pipeline_rows", profile.multiprocessors));
        policy.push_back(Action{rowSums ? "loads_evict_first" : "loads_evict_last"});
        heuristic.add(policy, pipelined,
                      rowSums ? "add loads_evict_first (the rows' bulk copies evict-first in L2)"
                              : "add loads_evict_last (the rows' bulk copies evict-last in L2)");
      }
      // A layernorm's mean and variance merged in one round (the first two forms, and beyond a warp only
      // over a power of 2 of warps).
      if (i == 0 && facts.rowMoments > 0 && (vectorLanes[i] <= 32 || llvm::isPowerOf2_64(vectorLanes[i] / 32))) {
        v.push_back(Action{"moments"});
        sortByPhase(v);
        heuristic.add(v, parent, "add moments (the mean and the variance merged over the lanes in one round)");
        removeSlot(v, "prefetch_rows");
        heuristic.add(v, parent, "add moments without prefetch_rows");
      }
    }
  }
}

/// Row kernels: a row per block over lanes of one column (and a streamed row, recomputed).
static void proposeBlockLaneRows(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  RowKernel rows(heuristic);
  if (!rows.applies)
    return;
  bool rowSums = rows.rowSums;
  int64_t streamLanes = rows.streamLanes;
  bool streams = rows.streams;
  auto pipelinable = [&](int64_t lanes) { return rows.pipelinable(lanes); };
  auto rowPerBlock = [&] { return rows.rowPerBlock(); };
  std::vector<int64_t> counts = blockLaneCounts(facts);
  if (counts.empty() && rows.streamLanes > 32 && rows.width / rows.streamLanes > 128) {
    // Rows too long for a block's registers even over the most lanes (a 393216-wide softmax, a matvec's
    // million-long rows): a row per block over the most lanes that divide it, streamed (nothing of the row kept;
    // each pass of a multi-phase row re-reads it, its elementwise producers recomputed).
    Schedule v = rowPerBlock();
    if (rows.streams)
      v.push_back(recompute());
    v.push_back(intAction("lanes", rows.streamLanes));
    heuristic.add(v, "",
                  "heuristic: a row per block over " + std::to_string(rows.streamLanes) +
                      " lanes, streamed (a row too long to keep in registers)");
  }
  int blockLaneTrials = 0;
  for (int64_t lanes : counts) {
    bool firstLanes = blockLaneTrials == 0;
    if (blockLaneTrials++ == 1 && streams) {
      Schedule v;
      v.push_back(tile("block", {1, 0}));
      v.push_back(fuse("block"));
      v.push_back(tile("thread", {1, 0}));
      v.push_back(fuse("thread"));
      v.push_back(recompute());
      v.push_back(intAction("lanes", streamLanes));
      heuristic.add(v, "",
                    "heuristic: a row per block over " + std::to_string(streamLanes) +
                        " lanes, elementwise producers recomputed (the row streamed, not kept)");
    }
    Schedule v = rowPerBlock();
    v.push_back(intAction("lanes", lanes));
    if (!rowSums && rows.width % lanes == 0) // a ragged row's lane slices differ in length: not vectorized
      v.push_back(vectorize());
    std::string inRegisters = heuristic.add(v, "",
                                            "heuristic: a row per block over " + std::to_string(lanes) + " lanes" +
                                                (rowSums ? "" : ", the row in registers"));
    // A ragged row (its lane slices differ in length: no vectors, so no pipeline_rows) whose registers leave one
    // block per multiprocessor: DRAM idles while each block reduces its row. The first such form also with the
    // next wave's rows prefetched into L2 meanwhile, where a wave's rows fill at most half of L2 (when known).
    if (firstLanes && !rowSums && rows.width % lanes != 0 && profile.multiprocessors > 0 &&
        residentRowBlocks(lanes, rows.width, profile.threadsPerMultiprocessor) == 1 &&
        (profile.l2Bytes <= 0 || 2 * profile.multiprocessors * rows.width * rows.elementBytes <= profile.l2Bytes)) {
      Schedule prefetched = v;
      prefetched.push_back(intAction("prefetch_rows", profile.multiprocessors));
      heuristic.add(prefetched, inRegisters,
                    "add " + describe(prefetched.back()) + " (the next wave's rows into L2 while each block reduces)");
    }
    // The first such form, where its row leaves registers for one block per multiprocessor, also pipelined with
    // its bulk copies evict-last in L2, then also with read_only_inputs. Measurements: docs/perf/heuristic.md
    // (proposeBlockLaneRows).
    if (firstLanes && !rowSums && pipelinable(lanes)) {
      v.push_back(intAction("pipeline_rows", profile.multiprocessors));
      v.push_back(Action{"loads_evict_last"});
      std::string pipelined =
          heuristic.add(v, inRegisters,
                        "add " + describe(v[v.size() - 2]) +
                            " and loads_evict_last (the next row copied into shared memory meanwhile, "
                            "evict-last in L2)");
      v.push_back(Action{"read_only_inputs"});
      sortByPhase(v);
      heuristic.add(v, pipelined, "add read_only_inputs (the buffers it only reads by ld.global.nc)");
    }
  }
}

/// Row kernels: a few rows per block, a warp per row.
static void proposeWarpRows(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  RowKernel rows(heuristic);
  if (!rows.applies)
    return;
  bool rowSums = rows.rowSums;
  int64_t rowCount = rows.rowCount, width = rows.width;
  // Then a few rows per block, a warp per row.
  for (int64_t rows : {8, 4, 16, 2, 32, 1}) {
    if (rowCount % rows || width % 32)
      continue;
    Schedule v;
    v.push_back(tile("block", rowSums ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, 0}));
    if (facts.linalgOps > 1)
      v.push_back(fuse("block"));
    v.push_back(tile("thread", rowSums ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 0}));
    if (facts.linalgOps > 1)
      v.push_back(fuse("thread"));
    v.push_back(intAction("lanes", 32));
    // A lane's slice of a row that fits in registers (128 values: a 4096-wide row) is read once into a
    // vector that every phase of the row (max, exp, sum, divide; mean, variance, normalise) works on.
    // A plain row sum has one phase: it streams, and needs no vector.
    if (!rowSums && width / 32 <= 128 && width % 32 == 0) {
      Schedule inRegisters = v;
      inRegisters.push_back(vectorize());
      heuristic.add(inRegisters, "",
                    "heuristic: " + std::to_string(rows) + " rows per block, a warp per row, the row in registers");
    }
    heuristic.add(v, "", "heuristic: " + std::to_string(rows) + " rows per block, a warp per row");
  }
}

/// A convolution as its implicit GEMM (ImplicitGemmProposals.cpp).
static void proposeImplicitGemm(Heuristic &heuristic) {
  addImplicitGemmProposals(heuristic.facts, heuristic.profile,
                           [&heuristic](Schedule s, std::string parentHash, std::string step) {
                             return heuristic.add(std::move(s), std::move(parentHash), std::move(step));
                           });
}

/// Tensor cores for a bf16/f16 matmul.
static void proposeTensorCores(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  addTensorCoreProposals(facts, profile, [&heuristic](Schedule s, std::string parentHash, std::string step) {
    return heuristic.add(std::move(s), std::move(parentHash), std::move(step));
  });
}

/// A direct window op's batch over the threads (WindowProposals.cpp).
static void proposeWindowBatchOverThreads(Heuristic &heuristic) {
  addWindowBatchProposals(heuristic.facts, heuristic.profile,
                          [&heuristic](Schedule s, std::string parentHash, std::string step) {
                            return heuristic.add(std::move(s), std::move(parentHash), std::move(step));
                          });
}

/// The best-ranked configuration, built one action at a time (each step a trial).
static void proposeBestConfigSteps(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  bool contraction = heuristic.contraction;
  const std::vector<TileConfig> &configs = heuristic.configs;
  // The best-ranked configuration, built one action at a time (each step a trial).
  const TileConfig &best = configs.front();
  Schedule s;
  s.push_back(tile("block", best.block));
  if (facts.linalgOps > 1)
    s.push_back(fuse("block"));
  // On the GPU a block tile alone is one thread per block: seconds per call at realistic sizes, so the first
  // step tiles both levels.
  std::string h = gpu(profile) ? std::string() : heuristic.add(s, "", "add " + describe(s.back()));
  s.push_back(tile("thread", best.thread));
  if (facts.linalgOps > 1)
    s.push_back(fuse("thread"));
  // Nor is a GPU contraction without its K tile a useful trial. Measurements: docs/perf/heuristic.md
  // (proposeBestConfigSteps).
  bool kFirst = gpu(profile) && contraction, vectorFirst = false;
  if (kFirst) {
    s.push_back(tile("reduction", {best.k}));
    Schedule vectorized = s;
    vectorized.push_back(vectorize());
    if ((vectorFirst = valid(vectorized, facts, profile)))
      s = vectorized;
  }
  h = heuristic.add(s, h,
                    vectorFirst ? "tile(block), tile(thread), tile(reduction) and vectorize"
                    : kFirst    ? "tile(block), tile(thread) and tile(reduction)"
                    : h.empty() ? "tile(block) and tile(thread)"
                                : "add tile(thread)");
  if (contraction && !kFirst) {
    s.push_back(tile("reduction", {best.k}));
    h = heuristic.add(s, h, "add " + describe(s.back()));
  }
  std::string full = h;
  if (!vectorFirst) {
    s.push_back(vectorize());
    full = heuristic.add(s, h, "add vectorize");
    if (full.empty()) {
      s.pop_back(); // the tile is too large to vectorize
      full = h;
    }
  }
  heuristic.best = s;
  heuristic.bestHash = full;
}

/// The classic shared-memory SGEMM for an fp32 matmul, first of the SIMT proposals: on the H200 it is the
/// fastest SIMT kernel measured at every size tried (4096^3: 2.75-2.85 ms staged against 3.54 for the best
/// unstaged warp tile and 4.06 for the best-ranked tile; docs/perf/heuristic.md, proposeSimtContraction), so a
/// short tuning budget reaches it first when its 128-row blocks fill the GPU; for a smaller output (fewer blocks
/// than multiprocessors) the smaller unstaged tiles come first and the staged SGEMM after them.
static void proposeStagedSgemm(Heuristic &heuristic, bool fillsTheGpu) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  if (!heuristic.contraction || !gpu(profile) || facts.parallelSizes.size() < 2)
    return;
  size_t rank = facts.parallelSizes.size();
  int64_t blocks = 1;
  for (size_t d = 0; d < rank; ++d)
    blocks *= d + 2 >= rank ? llvm::divideCeil(facts.parallelSizes[d], 128) : facts.parallelSizes[d];
  if ((blocks >= profile.multiprocessors) != fillsTheGpu)
    return;
  {
    // The classic shared-memory SGEMM (stage without mma): 128x128 blocks, 8x8 (or 8x16) per thread in strided
    // groups of 4, 16 (or 32, or 8) of K per staged tile. Measurements: docs/perf/heuristic.md
    // (proposeSimtContraction).
    bool batch = matmulRowDim(facts) > 0;
    auto staged = [&](std::vector<int64_t> thread, int64_t blockK, int64_t occupancy, bool asyncB = false) {
      Schedule v;
      v.push_back(tile("block", batch ? std::vector<int64_t>{1, 128, 128} : std::vector<int64_t>{128, 128}));
      v.push_back(tile("thread", batch ? std::vector<int64_t>{1, thread[0], thread[1]} : thread));
      v.push_back(intAction("stage", blockK));
      if (asyncB)
        v.push_back(intAction("pipeline", 2));
      if (occupancy > 0)
        v.push_back(intAction("occupancy", occupancy));
      addRequiredFusions(v, facts, profile, /*always=*/true);
      heuristic.add(v, "",
                    "heuristic: A and B staged in shared memory (" + std::to_string(blockK) + " of K per tile), " +
                        std::to_string(thread[0]) + "x" + std::to_string(thread[1]) +
                        " per thread in strided groups of 4" +
                        (occupancy > 0 ? ", two blocks per multiprocessor" : "") +
                        (asyncB ? ", B's tiles by cp.async (no staging registers: no spill at 128)" : ""));
    };
    if (facts.contractionOperandType == "f32" && facts.parallelSizes[rank - 2] % 128 == 0 &&
        facts.parallelSizes[rank - 1] % 128 == 0 && (rank == 2 || batch)) {
      staged({16, 8}, 16, 0);
      if (!facts.contractionBTransposed) // B as N x K goes through registers, transposed (no cp.async)
        staged({16, 8}, 16, 0, /*asyncB=*/true);
      staged({8, 8}, 16, 0);
      staged({8, 8}, 16, 2);
      if (!facts.contractionBTransposed)
        staged({8, 8}, 16, 2, /*asyncB=*/true);
      staged({8, 16}, 16, 0);
      staged({8, 8}, 32, 2); // 65 KB: dynamic shared memory
      staged({8, 8}, 8, 0);
    } else if (facts.contractionOperandType == "f32" && (rank == 2 || batch)) {
      // Sizes that 128 does not divide (e.g. 2000x3000x1000; a batch of 64 x 3136 products, an NCHW 1x1
      // convolution's): the largest block tiles of 8x8 per thread that divide M and N (multiples of 8 rows and
      // columns, at most 256 threads), 16 or 8 of K per tile; a batch one per block.
      int64_t m = facts.parallelSizes[rank - 2], n = facts.parallelSizes[rank - 1];
      // (A K that neither divides: 16, the last tile partly past K, read as zeros.)
      int64_t blockK = facts.contractionK % 16 == 0 ? 16 : facts.contractionK % 8 == 0 ? 8 : 16;
      // (A block tile of a loop that is a multiple of 32 long is a power of two: the tile action's domain.)
      auto allowed = [](int64_t size, int64_t extent) {
        return irregularExtent(extent) || llvm::is_contained(tileSizeDomain("block"), size);
      };
      std::vector<std::pair<int64_t, int64_t>> blocks;
      for (int64_t bm = 8; bm <= 256 && blockK; bm += 8)
        for (int64_t bn = 8; bn <= 256; bn += 8)
          if (m % bm == 0 && n % bn == 0 && (bm / 8) * (bn / 8) <= 256 && (bm / 8) * (bn / 8) >= 64 && allowed(bm, m) &&
              allowed(bn, n))
            blocks.push_back({bm, bn});
      std::stable_sort(blocks.begin(), blocks.end(),
                       [](const auto &x, const auto &y) { return x.first * x.second > y.first * y.second; });
      // Each as it is, then bounded to as many blocks per multiprocessor as fill 16 warps (ptxas takes 130-159
      // registers for these tiles). Measurements: docs/perf/heuristic.md (proposeSimtContraction).
      for (bool bounded : {false, true})
        for (size_t i = 0; i < blocks.size() && i < 3; ++i) {
          int64_t threads = (blocks[i].first / 8) * (blocks[i].second / 8);
          int64_t perSM = std::max<int64_t>(1, 512 / ((threads + 31) / 32 * 32));
          Schedule v;
          v.push_back(tile("block", batch ? std::vector<int64_t>{1, blocks[i].first, blocks[i].second}
                                          : std::vector<int64_t>{blocks[i].first, blocks[i].second}));
          v.push_back(tile("thread", batch ? std::vector<int64_t>{1, 8, 8} : std::vector<int64_t>{8, 8}));
          v.push_back(intAction("stage", blockK));
          if (bounded)
            v.push_back(intAction("occupancy", perSM));
          addRequiredFusions(v, facts, profile, /*always=*/true);
          heuristic.add(v, "",
                        "heuristic: A and B staged in shared memory on " + std::to_string(blocks[i].first) + "x" +
                            std::to_string(blocks[i].second) + " blocks that divide the matmul, 8x8 per thread" +
                            (bounded ? ", " + std::to_string(perSM) + " blocks per multiprocessor" : ""));
        }
      // No such block (primes: 4093 x 4099): 128x128 blocks, the last along M and N partial (its loads
      // clamped to the edge, its stores past it skipped), with the K tiles of the 128-divisible list's last
      // forms after them (no cp.async of B: it copies whole 16-byte rows, which a partial tile's edge cuts).
      if (blocks.empty() && blockK > 0 && m >= 128 && n >= 128) {
        staged({16, 8}, blockK, 0);
        staged({8, 8}, blockK, 0);
        staged({8, 8}, blockK, 2);
        staged({8, 16}, blockK, 0);
        if (blockK == 16) {
          staged({8, 8}, 32, 2);
          staged({8, 8}, 8, 0);
        }
      }
    }
  }
}

/// A SIMT contraction on the GPU: the K loop unrolled with capped registers, and a warp per 16x256 block (the
/// shared-memory staged SGEMM is proposeStagedSgemm's).
static void proposeSimtContraction(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  Schedule s = heuristic.best;
  std::string full = heuristic.bestHash;
  const TileConfig &best = heuristic.configs.front();
  bool contraction = heuristic.contraction;
  if (contraction && gpu(profile) && facts.parallelSizes.size() >= 2) {
    // Measurements: docs/perf/heuristic.md (proposeSimtContraction).
    Schedule unrolled = s;
    unrolled.push_back(unroll(4));
    int64_t accumulators = best.thread[best.thread.size() - 1] * best.thread[best.thread.size() - 2];
    if (accumulators >= 64)
      unrolled.push_back(intAction("max_registers", 128));
    heuristic.add(unrolled, full, accumulators >= 64 ? "add unroll(4) and max_registers(128)" : "add unroll(4)");
    size_t rank = facts.parallelSizes.size();
    if (facts.parallelSizes[rank - 2] % 16 == 0 && facts.parallelSizes[rank - 1] % 256 == 0) {
      std::vector<int64_t> block(rank, 1), thread(rank, 1);
      block[rank - 2] = 16, block[rank - 1] = 256;
      thread[rank - 2] = 16, thread[rank - 1] = 8;
      Schedule warp;
      warp.push_back(tile("block", block));
      warp.push_back(tile("thread", thread));
      warp.push_back(tile("reduction", {4}));
      warp.push_back(unroll(4));
      warp.push_back(vectorize());
      addRequiredFusions(warp, facts, profile, /*always=*/true);
      heuristic.add(warp, "", "heuristic: a warp per 16x256 block, 16x8 per thread, unroll(4)");
    }
  }
}

/// A contraction: the best configuration with unroll(2), and bounded to two blocks per multiprocessor (or capped
/// registers).
static void proposeContractionBounds(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  Schedule s = heuristic.best;
  std::string full = heuristic.bestHash;
  bool contraction = heuristic.contraction;
  if (contraction) {
    Schedule unrolled = s;
    unrolled.push_back(unroll(2));
    heuristic.add(unrolled, full, "add unroll(2)");
    // Measurements: docs/perf/heuristic.md (proposeContractionBounds).
    std::vector<int64_t> dims = blockDims(s, facts);
    int64_t threads = dims[0] * dims[1] * dims[2];
    if (gpu(profile) && threads >= 256) {
      Schedule bounded = s;
      bounded.push_back(intAction("occupancy", 2));
      heuristic.add(bounded, full, "add occupancy(2)");
    } else if (gpu(profile) && facts.linalgOps > 2) {
      Schedule bounded = s;
      bounded.push_back(intAction("max_registers", 128));
      heuristic.add(bounded, full, "add max_registers(128)");
    }
  }
}

/// The other ranked configurations, fully scheduled (and capped where a fused epilogue needs it).
static void proposeRankedVariants(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  const HardwareProfile &profile = heuristic.profile;
  Schedule s = heuristic.best;
  bool contraction = heuristic.contraction;
  const std::vector<TileConfig> &configs = heuristic.configs;
  // Variants: the other ranked configurations, fully scheduled, then other K steps for the best few.
  for (size_t i = 1; i < configs.size() && i < 12; ++i) {
    Schedule v;
    v.push_back(tile("block", configs[i].block));
    v.push_back(tile("thread", configs[i].thread));
    if (contraction)
      v.push_back(tile("reduction", {configs[i].k}));
    v.push_back(vectorize());
    addRequiredFusions(v, facts, profile, /*always=*/true);
    if (!valid(v, facts, profile))
      removeSlot(v, "vectorize"); // too large to vectorize: keep the tiles
    std::string variant = heuristic.add(v, "", "heuristic variant " + std::to_string(i));
    // Measurements: docs/perf/heuristic.md (proposeRankedVariants).
    int64_t accumulators = 1;
    for (int64_t t : configs[i].thread)
      accumulators *= std::max<int64_t>(t, 1);
    if (gpu(profile) && contraction && facts.linalgOps > 2 && accumulators >= 64 && !variant.empty()) {
      Schedule capped = v;
      capped.push_back(intAction("max_registers", 128));
      heuristic.add(capped, variant, "add max_registers(128)");
    }
  }
}

/// Other K steps for the best few configurations of a contraction.
static void proposeKSteps(Heuristic &heuristic) {
  Schedule s = heuristic.best;
  bool contraction = heuristic.contraction;
  const std::vector<TileConfig> &configs = heuristic.configs;
  if (contraction) {
    for (size_t i = 0; i < configs.size() && i < 3; ++i)
      for (int64_t k : {8, 16, 2}) {
        Schedule v;
        v.push_back(tile("block", configs[i].block));
        v.push_back(tile("thread", configs[i].thread));
        v.push_back(tile("reduction", {k}));
        v.push_back(vectorize());
        heuristic.add(v, "", "heuristic K step " + std::to_string(k));
      }
  }
}

/// Loop order for scalar tiles: the best-ranked tiles without vectorize, the root's reduction loops moved outside
/// its last parallel loop, so the innermost loop walks the output's and the operands' rows contiguously and the
/// accumulator of each output stays in memory order (on the CPU, loops LLVM vectorizes; on the GPU, a thread's
/// unit-stride walk). Proposed wherever the root has reduction loops after its parallel ones.
static void proposeReorder(Heuristic &heuristic) {
  const PayloadFacts &facts = heuristic.facts;
  size_t parallel = facts.parallelSizes.size();
  if (facts.rootLoops <= static_cast<int64_t>(parallel) || parallel == 0)
    return;
  std::vector<int64_t> permutation;
  for (size_t d = 0; d + 1 < parallel; ++d)
    permutation.push_back(static_cast<int64_t>(d));
  for (int64_t d = static_cast<int64_t>(parallel); d < facts.rootLoops; ++d)
    permutation.push_back(d);
  permutation.push_back(static_cast<int64_t>(parallel - 1));
  const TileConfig &best = heuristic.configs.front();
  Schedule v;
  v.push_back(tile("block", best.block));
  v.push_back(tile("thread", best.thread));
  Action reorder{"reorder"};
  reorder.sizes = permutation;
  v.push_back(reorder);
  std::string hash = heuristic.add(v, "",
                                   "heuristic: the best-ranked tiles, the reduction loops outside the last "
                                   "parallel one (unit-stride innermost loop)");
  if (hash.empty()) { // a block of one thread (GPU) or tiles that do not fit: the block tile alone
    v.erase(v.begin() + 1);
    heuristic.add(v, "", "heuristic: the best-ranked block tile, the reduction loops outside the last parallel one");
  }
}

/// The heuristic's proposal rules, in the order their proposals are tried. Each rule checks where it applies;
/// the measurements behind each are in docs/perf/heuristic.md.
static const struct {
  const char *name;
  void (*propose)(Heuristic &);
} kProposalRules[] = {
    {"a convolution as its implicit GEMM", proposeImplicitGemm},
    {"row kernels over lanes of 16-byte vectors", proposeVectorLaneRows},
    {"row kernels over lanes", proposeBlockLaneRows},
    {"row kernels, a warp per row", proposeWarpRows},
    {"tensor cores", proposeTensorCores},
    {"staged SGEMM (outputs that fill the GPU)", [](Heuristic &h) { proposeStagedSgemm(h, /*fillsTheGpu=*/true); }},
    {"a direct window op's batch over the threads", proposeWindowBatchOverThreads},
    {"the best-ranked tiles, one action at a time", proposeBestConfigSteps},
    {"SIMT contraction: unrolled, warp tiles", proposeSimtContraction},
    {"staged SGEMM (smaller outputs)", [](Heuristic &h) { proposeStagedSgemm(h, /*fillsTheGpu=*/false); }},
    {"contraction: unroll(2), launch bounds", proposeContractionBounds},
    {"the other ranked tiles", proposeRankedVariants},
    {"other K steps", proposeKSteps},
    {"loop order for scalar tiles", proposeReorder},
};

std::vector<Proposal> heuristicSchedulesOn(const PayloadFacts &facts, const HardwareProfile &profile) {
  Heuristic heuristic(facts, profile);
  if (heuristic.configs.empty()) {
    // No ranked tile (a prime M and N; a row reduction with too few rows to fill the blocks the ranking
    // wants): the rules that need no ranked tile apply: the row kernels, the partial blocks of the staged
    // forms (the pipelined tensor-core gemm's, bf16/f16, and the staged SGEMM's 128x128, fp32).
    proposeVectorLaneRows(heuristic);
    proposeBlockLaneRows(heuristic);
    proposeWarpRows(heuristic);
    proposeTensorCores(heuristic);
    proposeStagedSgemm(heuristic, /*fillsTheGpu=*/true);
    proposeStagedSgemm(heuristic, /*fillsTheGpu=*/false);
    return std::move(heuristic.out);
  }
  for (const auto &rule : kProposalRules)
    rule.propose(heuristic);
  return std::move(heuristic.out);
}

} // namespace kforge::tune::search

/// `proposals` for the op a two-kernel action leaves to the actions after it, each behind `first` (the first
/// `limit` of them), their parent links renamed to the split schedules; appended to `out` when valid.
static void appendBehind(const Action &first, const std::vector<Proposal> &proposals, size_t limit,
                         const PayloadFacts &facts, const HardwareProfile &profile, std::vector<Proposal> &out) {
  std::map<std::string, std::string> renamed; // the op's schedule's hash -> the two-kernel schedule's
  for (size_t i = 0; i < proposals.size() && i < limit; ++i) {
    Proposal p = proposals[i];
    std::string oldHash = scheduleHash(p.schedule);
    p.schedule = withSplit(first, p.schedule);
    p.parentHash = renamed.count(p.parentHash) ? renamed[p.parentHash] : std::string();
    p.step = describe(first) + " and " + p.step;
    renamed[oldHash] = scheduleHash(p.schedule);
    if (valid(p.schedule, facts, profile))
      out.push_back(std::move(p));
  }
}

std::vector<Proposal> kforge::tune::heuristicSchedules(const PayloadFacts &facts, const HardwareProfile &profile) {
  std::vector<Proposal> out;
  std::vector<int64_t> counts = blockLaneCounts(facts);
  if (gpu(profile) && splitApplies(facts) && !counts.empty()) {
    // The contraction's own first guesses behind the best-guess row kernel, then the first of them with the other
    // lane counts. Measurements: docs/perf/heuristic.md (appendBehind).
    Action first = intAction("split", counts.front());
    appendBehind(first, heuristicSchedulesOn(scheduledFacts({first}, facts), profile), SIZE_MAX, facts, profile, out);
    if (!out.empty())
      for (size_t i = 1; i < counts.size() && i < 3; ++i) {
        Proposal p = out.front();
        p.schedule.front() = intAction("split", counts[i]);
        p.parentHash = scheduleHash(out.front().schedule);
        p.step = "mutate " + describe(p.schedule.front());
        if (valid(p.schedule, facts, profile))
          out.push_back(std::move(p));
      }
  }
  if (gpu(profile) && splitKApplies(facts) && fewBlocks(facts, profile)) {
    // Too few output tiles to fill the GPU and a long K (1024^2 outputs, K = 32768: 256 blocks of 64 x 64 for
    // 132 SMs, 0.31x cuBLAS on the H200): the partial matmul's first guesses for the two smallest part counts
    // that give every SM at least two blocks (or, when none gets there, the largest), before the plain
    // matmul's.
    int64_t blocks = (facts.parallelSizes[0] / 64) * (facts.parallelSizes[1] / 64);
    std::vector<int64_t> allowed = intValues("split_k", facts), chosen;
    for (int64_t parts : allowed)
      if (blocks * parts >= 2 * profile.multiprocessors && chosen.size() < 2)
        chosen.push_back(parts);
    if (chosen.empty() && !allowed.empty())
      chosen.push_back(allowed.back());
    for (int64_t parts : chosen) {
      Action first = intAction("split_k", parts);
      appendBehind(first, heuristicSchedulesOn(scheduledFacts({first}, facts), profile), 4, facts, profile, out);
    }
  }
  if (gpu(profile) && splitRowsApplies(facts) && fewBlocks(facts, profile)) {
    // Fewer rows than two per multiprocessor (a loss over a whole tensor is one row): a block per row leaves
    // most of the GPU idle. Each row's reduction as partials, a thread each (256 per block), each reducing at
    // least 32 elements: the fewest that fill every multiprocessor's resident threads, then
    // half as many; where the row is too short for that, the most it allows if they give every
    // multiprocessor a block. The rows of partials then get the row kernels' first guesses.
    int64_t rows = facts.parallelSizes[0],
            threads = int64_t(profile.threadsPerMultiprocessor) * profile.multiprocessors;
    std::vector<int64_t> allowed = intValues("split_rows", facts), chosen;
    auto full = llvm::find_if(allowed, [&](int64_t partials) { return rows * partials >= threads; });
    if (full != allowed.end()) {
      chosen.push_back(*full);
      if (full != allowed.begin())
        chosen.push_back(*std::prev(full));
    } else if (!allowed.empty() && rows * allowed.back() / 256 >= profile.multiprocessors) {
      chosen.push_back(allowed.back());
    }
    for (int64_t partials : chosen) {
      Action first = intAction("split_rows", partials);
      appendBehind(first, heuristicSchedulesOn(scheduledFacts({first}, facts), profile), 3, facts, profile, out);
    }
  }
  for (Proposal &p : heuristicSchedulesOn(facts, profile))
    out.push_back(std::move(p));
  return out;
}
