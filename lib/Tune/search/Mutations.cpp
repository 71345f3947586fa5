//===- Mutations.cpp - random schedules, mutation and crossover -------- ===//
//
// The random policy's draws and the evolutionary policy's variation operators; a schedule that starts with a kernel
// split keeps it in front and varies the schedule of the op it leaves to the actions after it.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include "../ActionDefinition.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>

using namespace kforge::tune;
using namespace kforge::tune::search;
using llvm::StringRef;

namespace kforge::tune::search {

/// A GPU block of fewer threads than a warp on a problem with enough outputs to give every multiprocessor whole
/// warps: the hardware runs it at a fraction of its lanes. Drawn at random such schedules were most of what a
/// prime gemm got (one thread per block, 4.6 s a run where the staged kernel took 3.2 ms).
static bool underAWarp(const Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile) {
  if (!gpu(profile))
    return false;
  int64_t outputs = 1;
  for (int64_t size : facts.parallelSizes)
    outputs *= size;
  if (outputs < 32 * std::max<int64_t>(profile.multiprocessors, 1))
    return false;
  int64_t threads = 1;
  for (int64_t d : blockDims(s, facts))
    threads *= d;
  return threads < 32;
}

Schedule randomScheduleOn(const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng) {
  bool hasProducers = facts.linalgOps > 1;
  for (int attempt = 0; attempt < 200; ++attempt) {
    Schedule s;
    if (gpu(profile) || coin(rng, 0.9))
      s.push_back(tile("block", randomSizes(facts, s, false, rng, profile)));
    if (slot(s, "tile", "block") && hasProducers && (gpu(profile) || coin(rng, 0.7)))
      s.push_back(fuse("block"));
    if (slot(s, "tile", "block") && coin(rng, gpu(profile) ? 0.85 : 0.6))
      s.push_back(tile("thread", randomSizes(facts, s, true, rng, profile)));
    if (slot(s, "fuse", "block") && slot(s, "tile", "thread") && (gpu(profile) || coin(rng, 0.7)))
      s.push_back(fuse("thread"));
    if (!facts.contractionOp.empty() && coin(rng, 0.8)) {
      std::vector<int64_t> ks = dividing(facts.contractionK, kSteps());
      if (!ks.empty())
        s.push_back(tile("reduction", {pick(rng, ks)}));
    }
    if (slot(s, "tile", "reduction") && coin(rng, 0.3))
      s.push_back(unroll(pick(rng, std::vector<int64_t>{2, 4, 8})));
    if (coin(rng, 0.7))
      s.push_back(vectorize());
    if (gpu(profile) && slot(s, "fuse", "thread") && facts.contractionOp.empty() && coin(rng, 0.2))
      s.push_back(recompute());
    if (gpu(profile) && slot(s, "tile", "thread") && facts.contractionOp.empty() && coin(rng, 0.3))
      s.push_back(intAction("lanes", pick(rng, intValues("lanes", facts))));
    if (slot(s, "lanes") && coin(rng, 0.5))
      s.push_back(intAction("lane_vector", pick(rng, intValues("lane_vector", facts))));
    if (slot(s, "lanes") && facts.rowMoments > 0 && coin(rng, 0.5))
      s.push_back(Action{"moments"});
    if (gpu(profile) && slot(s, "tile", "thread") && mmaApplies(facts) && coin(rng, 0.5)) {
      dropSimtMatmulActions(s);
      bool staged = coin(rng, 0.5);
      s.push_back(intAction("mma", staged ? 1 : pick(rng, std::vector<int64_t>{1, 2, 4})));
      if (staged)
        s.push_back(intAction("stage", pick(rng, std::vector<int64_t>{16, 32, 64})));
      if (staged && coin(rng, 0.5))
        s.push_back(Action{"ldmatrix"});
      if (staged && coin(rng, 0.5))
        s.push_back(intAction("pipeline", pick(rng, std::vector<int64_t>{2, 3, 4})));
    }
    if (gpu(profile) && slot(s, "tile", "thread") && facts.contractionOp == "linalg.matmul" &&
        facts.contractionOperandType == "f32" && coin(rng, 0.25)) {
      dropSimtMatmulActions(s);
      s.push_back(intAction("stage", pick(rng, std::vector<int64_t>{8, 16, 32})));
    }
    if (gpu(profile) && slot(s, "tile", "block"))
      for (StringRef kind : kLaunchBounds)
        if (coin(rng, 0.25))
          s.push_back(intAction(kind, pick(rng, intValues(kind, facts))));
    sortByPhase(s);
    if (valid(s, facts, profile) && !underAWarp(s, facts, profile))
      return s;
  }
  return {};
}

/// A tile action (the one kind with a level and a list of sizes).
static bool isTile(const Action &action) { return !action.level.empty() && !action.sizes.empty(); }

/// Changes one parameter of one action: to a neighbouring value (x2 or /2) or, aggressively, to any value.
bool mutateParameter(Schedule &s, const PayloadFacts &facts, std::mt19937_64 &rng, bool aggressive, std::string &step) {
  std::vector<size_t> candidates;
  // Actions with a parameter to move: a tile's sizes, or an integer the registry gives values for.
  for (size_t i = 0; i < s.size(); ++i)
    if (isTile(s[i]) || !intValues(s[i].kind, facts).empty())
      candidates.push_back(i);
  if (candidates.empty())
    return false;
  Action &a = s[pick(rng, candidates)];
  if (!isTile(a)) { // unroll, occupancy, max_registers, ...: another value of the registry's
    std::vector<int64_t> values;
    for (int64_t v : intValues(a.kind, facts))
      if (v != a.value)
        values.push_back(v);
    if (values.empty())
      return false;
    a.value = pick(rng, values);
    step = "mutate " + describe(a);
    return true;
  }
  size_t d = std::uniform_int_distribution<size_t>(0, a.sizes.size() - 1)(rng);
  int64_t extent = a.level == "reduction" ? facts.contractionK
                   : a.level == "thread"  ? blockExtent(s, facts, d)
                                          : facts.parallelSizes[d];
  std::vector<int64_t> options = a.level == "reduction" ? dividing(extent, kSteps())
                                 : a.level == "block"   ? blockSizes(extent)
                                                        : dividing(extent, searchSizes());
  if (a.level != "reduction")
    options.insert(options.begin(), 0);
  llvm::erase(options, a.sizes[d]);
  if (options.empty())
    return false;
  int64_t value;
  if (aggressive) {
    value = pick(rng, options);
  } else {
    std::vector<int64_t> near;
    for (int64_t v : options)
      if (v != 0 && (v == a.sizes[d] * 2 || v * 2 == a.sizes[d]))
        near.push_back(v);
    value = near.empty() ? pick(rng, options) : pick(rng, near);
  }
  a.sizes[d] = value;
  step = "mutate " + describe(a);
  return true;
}

/// The slots a mutation may add to the schedule, and those it may remove (with what depends on them), by the
/// names the tables below know them by.
static void neighbourSlots(const Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile,
                           std::vector<std::string> &adds, std::vector<std::string> &removes) {
  if (!slot(s, "tile", "block"))
    adds.push_back("tile-block");
  if (slot(s, "tile", "block") && !slot(s, "tile", "thread"))
    adds.push_back("tile-thread");
  if (!facts.contractionOp.empty() && !slot(s, "tile", "reduction"))
    adds.push_back("tile-reduction");
  if (slot(s, "tile", "reduction") && !slot(s, "unroll"))
    adds.push_back("unroll");
  if (!slot(s, "vectorize"))
    adds.push_back("vectorize");
  if (facts.linalgOps > 1 && !gpu(profile)) {
    if (slot(s, "tile", "block") && !slot(s, "fuse", "block"))
      adds.push_back("fuse-block");
    if (slot(s, "fuse", "block") && slot(s, "tile", "thread") && !slot(s, "fuse", "thread"))
      adds.push_back("fuse-thread");
  }
  if (slot(s, "tile", "thread"))
    removes.push_back("tile-thread");
  if (slot(s, "tile", "reduction"))
    removes.push_back("tile-reduction");
  if (slot(s, "unroll"))
    removes.push_back("unroll");
  if (slot(s, "vectorize"))
    removes.push_back("vectorize");
  if (!gpu(profile) && slot(s, "fuse", "thread"))
    removes.push_back("fuse-thread");
  if (gpu(profile) && slot(s, "tile", "block")) {
    for (StringRef kind : kLaunchBounds)
      (slot(s, kind) ? removes : adds).push_back(kind.str());
    for (StringRef kind : kCacheActions)
      (slot(s, kind) ? removes : adds).push_back(kind.str());
  }
  if (gpu(profile) && slot(s, "tile", "thread") && facts.contractionOp.empty())
    (slot(s, "lanes") ? removes : adds).push_back("lanes");
  if (gpu(profile) && slot(s, "lanes"))
    (slot(s, "lane_vector") ? removes : adds).push_back("lane_vector");
  if (gpu(profile) && slot(s, "lanes") && profile.multiprocessors > 0)
    (slot(s, "prefetch_rows") ? removes : adds).push_back("prefetch_rows");
  if (gpu(profile) && slot(s, "lanes") && facts.rowMoments > 0)
    (slot(s, "moments") ? removes : adds).push_back("moments");
  // A block reducing its row, the row's values in vectors: what stash and pipeline_rows act on.
  bool blockRowVectors = gpu(profile) && slot(s, "lanes") && slot(s, "lanes")->value > 32 && slot(s, "vectorize");
  if (blockRowVectors)
    (slot(s, "stash") ? removes : adds).push_back("stash");
  if (blockRowVectors && profile.multiprocessors > 0)
    (slot(s, "pipeline_rows") ? removes : adds).push_back("pipeline_rows");
  if (gpu(profile) && slot(s, "fuse", "thread") && facts.contractionOp.empty())
    (slot(s, "recompute") ? removes : adds).push_back("recompute");
  if (gpu(profile) && slot(s, "tile", "thread") && mmaApplies(facts))
    (slot(s, "mma") ? removes : adds).push_back("mma");
  bool simtStage = gpu(profile) && facts.contractionOp == "linalg.matmul" && facts.contractionOperandType == "f32" &&
                   slot(s, "tile", "thread");
  // mma on a convolution: its implicit GEMM is staged, with ldmatrix, and takes pipeline(3|4) alone, where every
  // copy can be a 16-byte cp.async.
  bool mmaConvolution = slot(s, "mma") && stageIsImplicitGemm(facts);
  if ((slot(s, "mma") || simtStage) && !mmaConvolution)
    (slot(s, "stage") ? removes : adds).push_back("stage");
  if (slot(s, "stage") && !mmaConvolution)
    (slot(s, "ldmatrix") ? removes : adds).push_back("ldmatrix");
  // (with mma: S cp.async stages; the fp32 staged SGEMM: pipeline(2), B by cp.async)
  if (slot(s, "stage") && (!mmaConvolution || facts.implicitGemmVectorCopies))
    (slot(s, "pipeline") ? removes : adds).push_back("pipeline");
  if (slot(s, "wgmma")) // proposed by the heuristic with its own tiles; the search may take it away
    removes.push_back("wgmma");
  // (a convolution's wgmma is filled by its own copies, each tile waited for)
  if (slot(s, "wgmma") && !mmaConvolution)
    (slot(s, "tma") ? removes : adds).push_back("tma");
  if (slot(s, "tma"))
    (slot(s, "warp_specialize") ? removes : adds).push_back("warp_specialize");
  if (slot(s, "warp_specialize") && !slot(s, "stage_epilogue") && !slot(s, "multicast") && !isBatchMatmul(facts) &&
      profile.multiprocessors > 0)
    (slot(s, "persistent") ? removes : adds).push_back("persistent");
  if (slot(s, "warp_specialize") && !slot(s, "persistent") && !isBatchMatmul(facts))
    (slot(s, "multicast") ? removes : adds).push_back("multicast");
  if (slot(s, "warp_specialize") && !slot(s, "max_registers") && !slot(s, "occupancy"))
    (slot(s, "producer_warpgroup") ? removes : adds).push_back("producer_warpgroup");
  if (slot(s, "wgmma") &&
      (mmaConvolution || slot(s, "overlap") || (slot(s, "pipeline") && slot(s, "pipeline")->value >= 3)))
    (slot(s, "overlap") ? removes : adds).push_back("overlap");
  if (slot(s, "mma") && slot(s, "pipeline") && !mmaConvolution)
    (slot(s, "stage_epilogue") ? removes : adds).push_back("stage_epilogue");
  // The implicit GEMM's cp.async copies (stage and pipeline on a convolution): their order.
  if (!slot(s, "mma") && slot(s, "stage") && slot(s, "pipeline") && stageIsImplicitGemm(facts))
    (slot(s, "contiguous_copies") ? removes : adds).push_back("contiguous_copies");
  // A root with reduction loops after its parallel ones: its scalar tiles' loop order.
  if (facts.rootLoops > static_cast<int64_t>(facts.parallelSizes.size()) && !slot(s, "vectorize") &&
      !slot(s, "lanes") && !slot(s, "mma") && !slot(s, "stage"))
    (slot(s, "reorder") ? removes : adds).push_back("reorder");
}

namespace {
/// How a mutation adds a slot: the action it makes (none: nothing can be added after all).
struct Addition {
  const char *what;
  std::optional<Action> (*make)(Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile,
                                std::mt19937_64 &rng, StringRef what);
};
} // namespace

/// An action made with one of the registry's values for it on this payload.
static std::optional<Action> withSearchValue(Schedule &, const PayloadFacts &facts, const HardwareProfile &,
                                             std::mt19937_64 &rng, StringRef what) {
  return intAction(what, pick(rng, intValues(what, facts)));
}
/// An action without parameters.
static std::optional<Action> plain(Schedule &, const PayloadFacts &, const HardwareProfile &, std::mt19937_64 &,
                                   StringRef what) {
  return Action{what.str()};
}

static const Addition kAdditions[] = {
    {"tile-block",
     [](Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> { return tile("block", randomSizes(facts, s, false, rng, profile)); }},
    {"tile-thread",
     [](Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> { return tile("thread", randomSizes(facts, s, true, rng, profile)); }},
    {"tile-reduction",
     [](Schedule &, const PayloadFacts &facts, const HardwareProfile &, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> {
       std::vector<int64_t> ks = dividing(facts.contractionK, kSteps());
       if (ks.empty())
         return std::nullopt;
       return tile("reduction", {pick(rng, ks)});
     }},
    {"fuse-block",
     [](Schedule &, const PayloadFacts &, const HardwareProfile &, std::mt19937_64 &,
        StringRef) -> std::optional<Action> { return fuse("block"); }},
    {"fuse-thread",
     [](Schedule &, const PayloadFacts &, const HardwareProfile &, std::mt19937_64 &,
        StringRef) -> std::optional<Action> { return fuse("thread"); }},
    {"unroll",
     [](Schedule &, const PayloadFacts &, const HardwareProfile &, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> {
       return unroll(pick(rng, std::vector<int64_t>{2, 4, 8}));
     }},
    {"mma",
     [](Schedule &s, const PayloadFacts &, const HardwareProfile &, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> {
       Action added = intAction("mma", pick(rng, std::vector<int64_t>{1, 2, 4}));
       dropSimtMatmulActions(s);
       return added;
     }},
    {"pipeline",
     [](Schedule &s, const PayloadFacts &facts, const HardwareProfile &, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> {
       if (slot(s, "mma") && stageIsImplicitGemm(facts)) // (two stages without pipeline)
         return intAction("pipeline", pick(rng, std::vector<int64_t>{3, 4}));
       return intAction("pipeline", slot(s, "mma") ? pick(rng, std::vector<int64_t>{2, 3, 4}) : 2);
     }},
    {"stage",
     [](Schedule &s, const PayloadFacts &, const HardwareProfile &, std::mt19937_64 &rng,
        StringRef) -> std::optional<Action> {
       if (Action *tensorCores = slot(s, "mma")) {
         Action added = intAction("stage", pick(rng, std::vector<int64_t>{16, 32, 64}));
         tensorCores->value = 1; // a staged tile's steps are block_k / 16
         return added;
       }
       Action added = intAction("stage", pick(rng, std::vector<int64_t>{8, 16, 32}));
       dropSimtMatmulActions(s); // the staged SGEMM computes the matmul itself
       return added;
     }},
    {"prefetch_rows",
     [](Schedule &, const PayloadFacts &, const HardwareProfile &profile, std::mt19937_64 &rng,
        StringRef what) -> std::optional<Action> {
       return intAction(what, profile.multiprocessors * pick(rng, std::vector<int64_t>{1, 2, 4, 8}));
     }},
    {"persistent", // one or two blocks a multiprocessor
     [](Schedule &, const PayloadFacts &, const HardwareProfile &profile, std::mt19937_64 &rng,
        StringRef what) -> std::optional<Action> {
       return intAction(what, profile.multiprocessors * pick(rng, std::vector<int64_t>{1, 2}));
     }},
    {"pipeline_rows", // the blocks resident per multiprocessor, 1 to 8
     [](Schedule &, const PayloadFacts &, const HardwareProfile &profile, std::mt19937_64 &rng,
        StringRef what) -> std::optional<Action> {
       return intAction(what, profile.multiprocessors * pick(rng, std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
     }},
    {"contiguous_copies", withSearchValue},
    {"occupancy", withSearchValue},
    {"max_registers", withSearchValue},
    {"group_blocks", withSearchValue},
    {"lanes", withSearchValue},
    {"lane_vector", withSearchValue},
    {"stash", withSearchValue},
    {"reorder", // a random order of the root's loops other than its own
     [](Schedule &, const PayloadFacts &facts, const HardwareProfile &, std::mt19937_64 &rng,
        StringRef what) -> std::optional<Action> {
       Action added{what.str()};
       for (int64_t d = 0; d < facts.rootLoops; ++d)
         added.sizes.push_back(d);
       std::vector<int64_t> identity = added.sizes;
       for (int attempt = 0; attempt < 8 && added.sizes == identity; ++attempt)
         std::shuffle(added.sizes.begin(), added.sizes.end(), rng);
       if (added.sizes == identity)
         return std::nullopt;
       return added;
     }},
    {"vectorize", plain},
    {"recompute", plain},
    {"ldmatrix", plain},
    {"tma", plain},
    {"warp_specialize", plain},
    {"producer_warpgroup", plain},
    {"overlap", plain},
    {"stage_epilogue", plain},
    {"moments", plain},
    {"streaming_stores", plain},
    {"read_only_inputs", plain},
    {"loads_evict_last", plain},
    {"loads_evict_first", plain},
};

/// What a removal takes with it: the slots that depend on the removed one (a slot not listed goes alone).
static const struct {
  const char *what;
  std::vector<std::pair<const char *, const char *>> slots;
} kRemovals[] = {
    {"mma",
     {{"mma", ""},
      {"stage", ""},
      {"ldmatrix", ""},
      {"pipeline", ""},
      {"wgmma", ""},
      {"tma", ""},
      {"swap_ab", ""},
      {"warp_specialize", ""},
      {"producer_warpgroup", ""},
      {"persistent", ""},
      {"overlap", ""},
      {"stage_epilogue", ""}}},
    {"stage",
     {{"stage", ""},
      {"ldmatrix", ""},
      {"pipeline", ""},
      {"contiguous_copies", ""},
      {"wgmma", ""},
      {"tma", ""},
      {"swap_ab", ""},
      {"warp_specialize", ""},
      {"producer_warpgroup", ""},
      {"persistent", ""},
      {"overlap", ""},
      {"stage_epilogue", ""}}},
    {"pipeline",
     {{"pipeline", ""},
      {"wgmma", ""},
      {"tma", ""},
      {"swap_ab", ""},
      {"warp_specialize", ""},
      {"producer_warpgroup", ""},
      {"persistent", ""},
      {"overlap", ""},
      {"stage_epilogue", ""},
      {"contiguous_copies", ""}}},
    // wgmma multiplies the pipelined stages; tma fills them; overlap keeps wgmma in flight.
    {"wgmma",
     {{"wgmma", ""},
      {"tma", ""},
      {"swap_ab", ""},
      {"warp_specialize", ""},
      {"producer_warpgroup", ""},
      {"persistent", ""},
      {"overlap", ""}}},
    // warp_specialize gives tma's copies a warp of their own; persistent keeps it running across tiles; swap_ab
    // reads B from tma's stages.
    {"tma", {{"tma", ""}, {"swap_ab", ""}, {"warp_specialize", ""}, {"producer_warpgroup", ""}, {"persistent", ""}}},
    {"warp_specialize", {{"warp_specialize", ""}, {"producer_warpgroup", ""}, {"persistent", ""}}},
    {"tile-thread", {{"stage_epilogue", ""},
                     {"overlap", ""},
                     {"tma", ""},
                     {"swap_ab", ""},
                     {"warp_specialize", ""},
                     {"producer_warpgroup", ""},
                     {"persistent", ""},
                     {"wgmma", ""},
                     {"pipeline", ""},
                     {"contiguous_copies", ""},
                     {"ldmatrix", ""},
                     {"stage", ""},
                     {"mma", ""},
                     {"tile", "thread"},
                     {"fuse", "thread"},
                     {"recompute", ""},
                     {"lanes", ""},
                     {"lane_vector", ""},
                     {"moments", ""},
                     {"prefetch_rows", ""},
                     {"pipeline_rows", ""},
                     {"stash", ""}}},
    // lane_vector widens the lanes' columns, moments merges their statistics, prefetch_rows, stash and
    // pipeline_rows act on a row kernel's rows.
    {"lanes",
     {{"lanes", ""},
      {"lane_vector", ""},
      {"moments", ""},
      {"prefetch_rows", ""},
      {"stash", ""},
      {"pipeline_rows", ""}}},
    // stash keeps parts of the lanes' row vectors; pipeline_rows copies the rows the vectors read.
    {"vectorize", {{"vectorize", ""}, {"stash", ""}, {"pipeline_rows", ""}}},
    {"tile-reduction", {{"tile", "reduction"}, {"unroll", ""}}},
    {"fuse-thread", {{"fuse", "thread"}, {"recompute", ""}}},
};

static void removeWithDependents(Schedule &s, StringRef what) {
  for (const auto &removal : kRemovals)
    if (what == removal.what) {
      for (auto [kind, level] : removal.slots)
        removeSlot(s, kind, level);
      return;
    }
  removeSlot(s, what);
}

/// Adds one action slot the schedule lacks, or removes one (with what depends on it).
bool addOrRemove(Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng,
                 std::string &step) {
  std::vector<std::string> adds, removes;
  neighbourSlots(s, facts, profile, adds, removes);
  bool add = !adds.empty() && (removes.empty() || coin(rng, 0.5));
  if (!add && removes.empty())
    return false;
  std::string what = add ? pick(rng, adds) : pick(rng, removes);
  if (!add) {
    removeWithDependents(s, what);
    step = "remove " + what;
    return true;
  }
  const Addition *addition = llvm::find_if(kAdditions, [&](const Addition &a) { return what == a.what; });
  std::optional<Action> added =
      addition != std::end(kAdditions) ? addition->make(s, facts, profile, rng, what) : std::nullopt;
  if (!added)
    return false;
  s.push_back(*added);
  addRequiredFusions(s, facts, profile);
  sortByPhase(s);
  step = "add " + describe(*added);
  return true;
}

Schedule mutateScheduleOn(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                          std::mt19937_64 &rng, bool aggressive, std::string &step) {
  std::string parentHash = scheduleHash(parent);
  for (int attempt = 0; attempt < 100; ++attempt) {
    Schedule s = parent;
    std::string what;
    bool changed =
        coin(rng, 0.65) ? mutateParameter(s, facts, rng, aggressive, what) : addOrRemove(s, facts, profile, rng, what);
    if (changed && valid(s, facts, profile) && scheduleHash(s) != parentHash) {
      step = what;
      return s;
    }
  }
  step.clear();
  return parent;
}

Schedule mutateParametersOn(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                            std::mt19937_64 &rng, std::string &step) {
  std::string parentHash = scheduleHash(parent);
  for (int attempt = 0; attempt < 50; ++attempt) {
    Schedule s = parent;
    std::string what;
    if (mutateParameter(s, facts, rng, /*aggressive=*/false, what) && valid(s, facts, profile) &&
        scheduleHash(s) != parentHash) {
      step = what;
      return s;
    }
  }
  step.clear();
  return parent;
}

Schedule crossoverSchedulesOn(const Schedule &a, const Schedule &b, const PayloadFacts &facts,
                              const HardwareProfile &profile, std::mt19937_64 &rng) {
  static const std::pair<const char *, const char *> slots[] = {
      {"tile", "block"},        {"fuse", "block"},        {"tile", "thread"},
      {"fuse", "thread"},       {"recompute", ""},        {"lanes", ""},
      {"lane_vector", ""},      {"moments", ""},          {"tile", "reduction"},
      {"unroll", ""},           {"reorder", ""},          {"vectorize", ""},
      {"prefetch_rows", ""},    {"pipeline_rows", ""},    {"stash", ""},
      {"occupancy", ""},        {"max_registers", ""},    {"streaming_stores", ""},
      {"read_only_inputs", ""}, {"loads_evict_last", ""}, {"loads_evict_first", ""},
      {"group_blocks", ""}};
  for (int attempt = 0; attempt < 50; ++attempt) {
    Schedule child;
    for (auto [kind, level] : slots) {
      const Action *fromA = slot(a, kind, level), *fromB = slot(b, kind, level);
      const Action *chosen = coin(rng, 0.5) ? fromA : fromB;
      if (!chosen && fromA && fromB)
        chosen = fromA;
      if (chosen)
        child.push_back(*chosen);
    }
    addRequiredFusions(child, facts, profile);
    if (valid(child, facts, profile))
      return child;
  }
  return {};
}

} // namespace kforge::tune::search

Schedule kforge::tune::randomSchedule(const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng) {
  for (const auto &candidate : actionDefinitions()) {
    if (!candidate->splitsKernels())
      continue;
    const ActionDefinition &definition = *candidate;
    StringRef kind = definition.kind();
    bool applies = definition.splitApplies(facts);
    std::vector<int64_t> values = intValues(kind, facts);
    // split_k is a long shot on a matmul whose output tiles already fill the GPU.
    double chance = definition.multipliesBlocks() && !fewBlocks(facts, profile) ? 0.1 : 0.5;
    bool parameterless = definition.intParam() == nullptr; // channels_last
    if (!gpu(profile) || !applies || (values.empty() && !parameterless) || !coin(rng, chance))
      continue;
    Action first = parameterless ? Action{std::string(kind)} : intAction(kind, pick(rng, values));
    Schedule rest = randomScheduleOn(scheduledFacts({first}, facts), profile, rng);
    if (!rest.empty())
      return withSplit(first, rest);
  }
  return randomScheduleOn(facts, profile, rng);
}

Schedule kforge::tune::mutateSchedule(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                                      std::mt19937_64 &rng, bool aggressive, std::string &step) {
  const Action *split = kernelSplit(parent);
  if (!split)
    return mutateScheduleOn(parent, facts, profile, rng, aggressive, step);
  std::vector<int64_t> values = intValues(split->kind, facts);
  llvm::erase(values, split->value);
  if (!values.empty() && coin(rng, 0.15)) {
    Action other = intAction(split->kind, pick(rng, values));
    Schedule rest = withoutSplit(parent);
    // split_k's parts change the partial matmul's loops: its schedule must still fit them.
    if (valid(withSplit(other, rest), facts, profile)) {
      step = "mutate " + describe(other);
      return withSplit(other, rest);
    }
  }
  Schedule rest = mutateScheduleOn(withoutSplit(parent), scheduledFacts(parent, facts), profile, rng, aggressive, step);
  return withSplit(*split, rest);
}

Schedule kforge::tune::mutateParameters(const Schedule &parent, const PayloadFacts &facts,
                                        const HardwareProfile &profile, std::mt19937_64 &rng, std::string &step) {
  const Action *split = kernelSplit(parent);
  if (!split)
    return mutateParametersOn(parent, facts, profile, rng, step);
  return withSplit(*split, mutateParametersOn(withoutSplit(parent), scheduledFacts(parent, facts), profile, rng, step));
}

Schedule kforge::tune::crossoverSchedules(const Schedule &a, const Schedule &b, const PayloadFacts &facts,
                                          const HardwareProfile &profile, std::mt19937_64 &rng) {
  const Action *splitA = kernelSplit(a), *splitB = kernelSplit(b);
  if (!splitA && !splitB)
    return crossoverSchedulesOn(a, b, facts, profile, rng);
  // One schedules the root, the other another op (or the same op split differently): no slot means the same.
  if (!splitA || !splitB || splitA->kind != splitB->kind ||
      scheduledFacts(a, facts).parallelSizes != scheduledFacts(b, facts).parallelSizes ||
      scheduledFacts(a, facts).contractionK != scheduledFacts(b, facts).contractionK)
    return {};
  Schedule child = crossoverSchedulesOn(withoutSplit(a), withoutSplit(b), scheduledFacts(a, facts), profile, rng);
  if (child.empty())
    return {};
  return withSplit(coin(rng, 0.5) ? *splitA : *splitB, child);
}
