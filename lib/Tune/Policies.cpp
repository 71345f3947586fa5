//===- Policies.cpp - random, heuristic and evolutionary search ----------===//

#include "kforge/Tune/Policies.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

using namespace kforge::tune;
using llvm::StringRef;

llvm::json::Value kforge::tune::toJSON(const HardwareProfile &p) {
  llvm::json::Object object{{"target", p.target},
                            {"name", p.name},
                            {"multiprocessors", p.multiprocessors},
                            {"max_threads_per_block", p.maxThreadsPerBlock},
                            {"shared_bytes_per_block", p.sharedBytesPerBlock},
                            {"registers_per_block", p.registersPerBlock},
                            {"l2_bytes", p.l2Bytes}};
  if (!p.chip.empty())
    object["chip"] = p.chip;
  if (p.measuredCopyGBps > 0)
    object["measured_copy_gbps"] = p.measuredCopyGBps;
  if (p.measuredFp32Tflops > 0)
    object["measured_fp32_matmul_tflops"] = p.measuredFp32Tflops;
  if (!p.ceilingsSource.empty())
    object["measured_by"] = p.ceilingsSource;
  return object;
}

bool kforge::tune::fromJSON(const llvm::json::Value &value, HardwareProfile &p, llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  return o && o.map("target", p.target) && o.map("name", p.name) && o.map("multiprocessors", p.multiprocessors) &&
         o.map("max_threads_per_block", p.maxThreadsPerBlock) &&
         o.map("shared_bytes_per_block", p.sharedBytesPerBlock) && o.map("registers_per_block", p.registersPerBlock) &&
         o.map("l2_bytes", p.l2Bytes) && o.mapOptional("measured_copy_gbps", p.measuredCopyGBps) &&
         o.mapOptional("measured_fp32_matmul_tflops", p.measuredFp32Tflops) &&
         o.mapOptional("measured_by", p.ceilingsSource) && o.mapOptional("chip", p.chip);
}

std::string kforge::tune::proposalHash(const Proposal &proposal) {
  if (proposal.script.empty())
    return scheduleHash(proposal.schedule);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef("script\n" + proposal.script));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// The registry's tile sizes a search draws from: block / thread sizes up to 256 (the registry allows up to
/// 4096 for long rows, which the heuristic proposes; drawn at random they are rarely valid), and every K step.
static std::vector<int64_t> searchSizes() {
  std::vector<int64_t> sizes;
  for (int64_t size : tileSizeDomain("block"))
    if (size > 0 && size <= 256)
      sizes.push_back(size);
  return sizes;
}
static const std::vector<int64_t> kSizes = searchSizes();
static const std::vector<int64_t> kKSizes(tileSizeDomain("reduction").begin(), tileSizeDomain("reduction").end());

static std::vector<int64_t> dividing(int64_t extent, const std::vector<int64_t> &domain) {
  std::vector<int64_t> out;
  for (int64_t v : domain)
    if (v <= extent && extent % v == 0)
      out.push_back(v);
  return out;
}

/// Block tile sizes for a loop: the powers of two that divide it, and for an irregular loop also its divisors
/// from 8 to 256 that are multiples of 4 (whole 128-bit vectors per row).
static std::vector<int64_t> blockSizes(int64_t extent) {
  std::vector<int64_t> out = dividing(extent, kSizes);
  if (irregularExtent(extent))
    for (int64_t v = 8; v <= std::min<int64_t>(256, extent); v += 4)
      if (extent % v == 0 && !llvm::is_contained(out, v))
        out.push_back(v);
  llvm::sort(out);
  return out;
}

static bool coin(std::mt19937_64 &rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

template <typename T> static const T &pick(std::mt19937_64 &rng, const std::vector<T> &items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

static Action tile(StringRef level, std::vector<int64_t> sizes) {
  Action a;
  a.kind = "tile";
  a.level = level.str();
  a.sizes = std::move(sizes);
  return a;
}
static Action fuse(StringRef level) {
  Action a;
  a.kind = "fuse";
  a.level = level.str();
  return a;
}
static Action unroll(int64_t factor) {
  Action a;
  a.kind = "unroll";
  a.value = factor;
  return a;
}
static Action vectorize() {
  Action a;
  a.kind = "vectorize";
  return a;
}
static Action recompute() {
  Action a;
  a.kind = "recompute";
  return a;
}
/// An action with one integer parameter (unroll, lanes, split, mma, stage, occupancy, max_registers) set to
/// `value`.
static Action intAction(StringRef kind, int64_t value) {
  Action a;
  a.kind = kind.str();
  a.value = value;
  return a;
}
/// The values an action with one integer parameter may take on this payload: the registry's domain; for
/// lanes, the lane counts that divide the payload's row (multiples of 32 that are not powers of two included).
static std::vector<int64_t> intValues(StringRef kind, const PayloadFacts &facts) {
  if (kind == "lanes" && !lanesCounts(facts).empty())
    return lanesCounts(facts);
  const ActionSpec *spec = findAction(kind);
  return spec && spec->params.size() == 1 ? spec->params[0].values : std::vector<int64_t>{};
}
static constexpr StringRef kLaunchBounds[] = {"occupancy", "max_registers"};
/// Actions on the kernel's memory accesses, without parameters (set_kernel_attributes' cache requests).
static constexpr StringRef kCacheActions[] = {"streaming_stores", "read_only_inputs", "loads_evict_last",
                                              "loads_evict_first"};

static void sortByPhase(Schedule &s) {
  std::stable_sort(s.begin(), s.end(),
                   [](const Action &a, const Action &b) { return actionPhase(a) < actionPhase(b); });
}

static Action *slot(Schedule &s, StringRef kind, StringRef level = "") {
  return const_cast<Action *>(findSlot(s, kind, level));
}
static const Action *slot(const Schedule &s, StringRef kind, StringRef level = "") { return findSlot(s, kind, level); }

static void removeSlot(Schedule &s, StringRef kind, StringRef level = "") {
  llvm::erase_if(s, [&](const Action &a) { return a.kind == kind && a.level == level; });
}

/// mma computes the matmul itself: the SIMT actions on it go.
static void dropSimtMatmulActions(Schedule &s) {
  removeSlot(s, "tile", "reduction");
  removeSlot(s, "unroll");
  removeSlot(s, "vectorize");
}

static bool valid(const Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile) {
  return validateSchedule(s, facts, profile.target).empty();
}

static bool gpu(const HardwareProfile &profile) { return profile.target == "gpu"; }


/// Adds the fusions the target requires (GPU: producers must follow every tiled level); `always`: on the CPU
/// too (the heuristic's choice: unfused producers run as plain loops).
static void addRequiredFusions(Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile,
                               bool always = false) {
  if (facts.linalgOps < 2 || (!gpu(profile) && !always))
    return;
  if (slot(s, "tile", "block") && !slot(s, "fuse", "block"))
    s.push_back(fuse("block"));
  if (slot(s, "tile", "thread") && !slot(s, "fuse", "thread"))
    s.push_back(fuse("thread"));
  sortByPhase(s);
}

/// Lane counts for a row spread over several warps (one row per block), best guesses first: 4 to 128 values
/// per lane, those nearest 16 first (measured on the H200: 4096-wide softmax and norms were fastest at 8-16
/// values per lane, 4 not yet tried, while 125 values per lane over 256 lanes of a 32000-wide row need 255
/// registers and leave one block per multiprocessor).
static std::vector<int64_t> blockLaneCounts(const PayloadFacts &facts) {
  int64_t width = rowWidth(facts);
  std::vector<int64_t> counts;
  for (int64_t lanes : lanesCounts(facts))
    if (lanes > 32 && width / lanes >= 4 && width / lanes <= 128)
      counts.push_back(lanes);
  auto distanceFrom16 = [&](int64_t lanes) { return std::abs(std::log2(double(width) / lanes) - 4.0); };
  std::stable_sort(counts.begin(), counts.end(), [&](int64_t a, int64_t b) {
    double da = distanceFrom16(a), db = distanceFrom16(b);
    return da != db ? da < db : a > b;
  });
  return counts;
}

static Schedule withSplit(const Action &split, Schedule contraction) {
  contraction.insert(contraction.begin(), split);
  return contraction;
}

static std::vector<int64_t> randomSizes(const PayloadFacts &facts, const Schedule &s, bool thread,
                                        std::mt19937_64 &rng, const HardwareProfile &profile) {
  size_t rank = facts.parallelSizes.size();
  std::vector<int64_t> sizes(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = thread ? blockExtent(s, facts, d) : facts.parallelSizes[d];
    std::vector<int64_t> options = thread ? dividing(extent, kSizes) : blockSizes(extent);
    if (options.empty() || coin(rng, 0.15))
      continue;
    sizes[d] = pick(rng, options);
  }
  // A GPU grid / block has 3 dimensions: keep the innermost 3 tiled loops.
  if (gpu(profile)) {
    int tiled = 0;
    for (size_t d = rank; d-- > 0;)
      if (sizes[d] > 0 && ++tiled > 3)
        sizes[d] = 0;
  }
  return sizes;
}

static Schedule randomScheduleOn(const PayloadFacts &facts, const HardwareProfile &profile,
                                      std::mt19937_64 &rng) {
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
      std::vector<int64_t> ks = dividing(facts.contractionK, kKSizes);
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
    if (valid(s, facts, profile))
      return s;
  }
  return {};
}

/// Changes one parameter of one action: to a neighbouring value (x2 or /2) or, aggressively, to any value.
static bool mutateParameter(Schedule &s, const PayloadFacts &facts, std::mt19937_64 &rng, bool aggressive,
                            std::string &step) {
  std::vector<size_t> candidates;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i].kind != "fuse" && s[i].kind != "vectorize")
      candidates.push_back(i);
  if (candidates.empty())
    return false;
  Action &a = s[pick(rng, candidates)];
  if (a.kind != "tile") { // unroll, occupancy, max_registers: another value of the registry's
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
  std::vector<int64_t> options = a.level == "reduction" ? dividing(extent, kKSizes)
                                 : a.level == "block"     ? blockSizes(extent)
                                                          : dividing(extent, kSizes);
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

/// Adds one action slot the schedule lacks, or removes one (with what depends on it).
static bool addOrRemove(Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile,
                        std::mt19937_64 &rng, std::string &step) {
  std::vector<std::string> adds, removes;
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
  bool simtStage = gpu(profile) && facts.contractionOp == "linalg.matmul" &&
                   facts.contractionOperandType == "f32" && slot(s, "tile", "thread");
  if (slot(s, "mma") || simtStage)
    (slot(s, "stage") ? removes : adds).push_back("stage");
  if (slot(s, "stage"))
    (slot(s, "ldmatrix") ? removes : adds).push_back("ldmatrix");
  if (slot(s, "stage")) // with mma: S cp.async stages; the fp32 staged SGEMM: pipeline(2), B by cp.async
    (slot(s, "pipeline") ? removes : adds).push_back("pipeline");
  if (slot(s, "wgmma")) // proposed by the heuristic with its own tiles; the search may take it away
    removes.push_back("wgmma");
  if (slot(s, "wgmma"))
    (slot(s, "tma") ? removes : adds).push_back("tma");
  if (slot(s, "wgmma") && (slot(s, "overlap") || (slot(s, "pipeline") && slot(s, "pipeline")->value >= 3)))
    (slot(s, "overlap") ? removes : adds).push_back("overlap");
  if (slot(s, "mma") && slot(s, "pipeline"))
    (slot(s, "stage_epilogue") ? removes : adds).push_back("stage_epilogue");
  bool add = !adds.empty() && (removes.empty() || coin(rng, 0.5));
  if (!add && removes.empty())
    return false;
  std::string what = add ? pick(rng, adds) : pick(rng, removes);
  if (add) {
    Action added;
    if (what == "tile-block") {
      added = tile("block", randomSizes(facts, s, false, rng, profile));
    } else if (what == "tile-thread") {
      added = tile("thread", randomSizes(facts, s, true, rng, profile));
    } else if (what == "tile-reduction") {
      std::vector<int64_t> ks = dividing(facts.contractionK, kKSizes);
      if (ks.empty())
        return false;
      added = tile("reduction", {pick(rng, ks)});
    } else if (what == "unroll") {
      added = unroll(pick(rng, std::vector<int64_t>{2, 4, 8}));
    } else if (what == "vectorize") {
      added = vectorize();
    } else if (what == "recompute") {
      added = recompute();
    } else if (what == "mma") {
      added = intAction("mma", pick(rng, std::vector<int64_t>{1, 2, 4}));
      dropSimtMatmulActions(s);
    } else if (what == "ldmatrix") {
      added = Action{"ldmatrix"};
    } else if (what == "tma" || what == "overlap" || what == "stage_epilogue" || what == "moments" ||
               llvm::is_contained(kCacheActions, StringRef(what))) {
      added = Action{what};
    } else if (what == "pipeline") {
      added = intAction("pipeline", slot(s, "mma") ? pick(rng, std::vector<int64_t>{2, 3, 4}) : 2);
    } else if (what == "stage") {
      if (Action *tensorCores = slot(s, "mma")) {
        added = intAction("stage", pick(rng, std::vector<int64_t>{16, 32, 64}));
        tensorCores->value = 1; // a staged tile's steps are block_k / 16
      } else {
        added = intAction("stage", pick(rng, std::vector<int64_t>{8, 16, 32}));
        dropSimtMatmulActions(s); // the staged SGEMM computes the matmul itself
      }
    } else if (what == "prefetch_rows") {
      added = intAction(what, profile.multiprocessors * pick(rng, std::vector<int64_t>{1, 2, 4, 8}));
    } else if (what == "pipeline_rows") { // the blocks resident per multiprocessor, 1 to 8
      added = intAction(what, profile.multiprocessors * pick(rng, std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    } else if (llvm::is_contained(kLaunchBounds, StringRef(what)) || what == "lanes" || what == "lane_vector" ||
               what == "stash") {
      added = intAction(what, pick(rng, intValues(what, facts)));
    } else {
      added = fuse(what == "fuse-block" ? "block" : "thread");
    }
    s.push_back(added);
    addRequiredFusions(s, facts, profile);
    sortByPhase(s);
    step = "add " + describe(added);
    return true;
  }
  if (what == "mma" || what == "stage" || what == "pipeline" || what == "wgmma") {
    removeSlot(s, "wgmma"); // it multiplies the pipelined stages
    removeSlot(s, "tma");   // it fills wgmma's stages
    removeSlot(s, "overlap");
  }
  if (what == "mma" || what == "stage" || what == "pipeline")
    removeSlot(s, "stage_epilogue"); // it goes through the pipelined stages' memory
  if (what == "mma" || what == "stage") {
    removeSlot(s, "ldmatrix");
    removeSlot(s, "pipeline");
  }
  if (what == "mma")
    removeSlot(s, "stage");
  if (what == "tile-thread") {
    removeSlot(s, "stage_epilogue");
    removeSlot(s, "overlap");
    removeSlot(s, "tma");
    removeSlot(s, "wgmma");
    removeSlot(s, "pipeline");
    removeSlot(s, "ldmatrix");
    removeSlot(s, "stage");
    removeSlot(s, "mma");
    removeSlot(s, "tile", "thread");
    removeSlot(s, "fuse", "thread");
    removeSlot(s, "recompute");
    removeSlot(s, "lanes");
    removeSlot(s, "lane_vector");
    removeSlot(s, "moments");
    removeSlot(s, "prefetch_rows");
    removeSlot(s, "pipeline_rows");
    removeSlot(s, "stash");
  } else if (what == "lanes") {
    removeSlot(s, "lanes");
    removeSlot(s, "lane_vector"); // it widens the lanes' columns
    removeSlot(s, "moments");     // it merges the lanes' statistics
    removeSlot(s, "prefetch_rows"); // it prefetches a row kernel's rows
    removeSlot(s, "stash");         // it keeps part of the lanes' rows
    removeSlot(s, "pipeline_rows"); // it loops a row kernel's blocks over rows
  } else if (what == "vectorize") {
    removeSlot(s, "vectorize");
    removeSlot(s, "stash");         // it keeps parts of the lanes' row vectors
    removeSlot(s, "pipeline_rows"); // it copies the rows the vectors read
  } else if (what == "tile-reduction") {
    removeSlot(s, "tile", "reduction");
    removeSlot(s, "unroll");
  } else if (what == "fuse-thread") {
    removeSlot(s, "fuse", "thread");
    removeSlot(s, "recompute");
  } else {
    removeSlot(s, what);
  }
  step = "remove " + what;
  return true;
}

static Schedule mutateScheduleOn(const Schedule &parent, const PayloadFacts &facts,
                                      const HardwareProfile &profile, std::mt19937_64 &rng, bool aggressive,
                                      std::string &step) {
  std::string parentHash = scheduleHash(parent);
  for (int attempt = 0; attempt < 100; ++attempt) {
    Schedule s = parent;
    std::string what;
    bool changed = coin(rng, 0.65) ? mutateParameter(s, facts, rng, aggressive, what)
                                   : addOrRemove(s, facts, profile, rng, what);
    if (changed && valid(s, facts, profile) && scheduleHash(s) != parentHash) {
      step = what;
      return s;
    }
  }
  step.clear();
  return parent;
}

static Schedule mutateParametersOn(const Schedule &parent, const PayloadFacts &facts,
                                        const HardwareProfile &profile, std::mt19937_64 &rng, std::string &step) {
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

static Schedule crossoverSchedulesOn(const Schedule &a, const Schedule &b, const PayloadFacts &facts,
                                          const HardwareProfile &profile, std::mt19937_64 &rng) {
  static const std::pair<const char *, const char *> slots[] = {{"tile", "block"},   {"fuse", "block"},
                                                                {"tile", "thread"},  {"fuse", "thread"},
                                                                {"recompute", ""},   {"lanes", ""},       {"lane_vector", ""},
                                                                {"moments", ""},
                                                                {"tile", "reduction"},
                                                                {"unroll", ""},      {"vectorize", ""},
                                                                {"prefetch_rows", ""},
                                                                {"pipeline_rows", ""},
                                                                {"stash", ""},
                                                                {"occupancy", ""},
                                                                {"max_registers", ""},
                                                                {"streaming_stores", ""},
                                                                {"read_only_inputs", ""},
                                                                {"loads_evict_last", ""},
                                                                {"loads_evict_first", ""}};
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

//===----------------------------------------------------------------------===//
// Heuristic
//===----------------------------------------------------------------------===//

namespace {
/// A block tile x thread tile configuration with a rough merit, for ranking.
struct TileConfig {
  std::vector<int64_t> block, thread;
  int64_t k = 0;
  double merit = 0;
};
} // namespace

/// Blocks of one row over `lanes` lanes that fit on a multiprocessor at once, estimated: 2048 threads, 65536
/// registers at one per value a lane holds of a `width`-wide row plus 32, at most 32 blocks.
static int64_t residentRowBlocks(int64_t lanes, int64_t width) {
  int64_t registers = width / lanes + 32;
  return std::max<int64_t>(1, std::min({2048 / lanes, 65536 / (lanes * registers), int64_t(32)}));
}

/// Matmul-like roots (the last two parallel loops are the output's rows and columns): output tiles that
/// reuse operands (large block tiles, 2-D thread tiles of 16-64 accumulators), enough blocks to fill every
/// multiprocessor, and blocks of 64-512 threads.
static std::vector<TileConfig> contractionConfigs(const PayloadFacts &facts, const HardwareProfile &profile) {
  size_t rank = facts.parallelSizes.size();
  int64_t m = facts.parallelSizes[rank - 2], n = facts.parallelSizes[rank - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < rank; ++d)
    batch *= facts.parallelSizes[d];
  std::vector<TileConfig> configs;
  bool isGpu = gpu(profile);
  // Block tiles of 32 to 128; for an irregular extent (2000 x 3000) its divisors in that range too.
  auto candidates = [](int64_t extent) {
    std::vector<int64_t> out = {32, 64, 128};
    if (irregularExtent(extent))
      for (int64_t v : blockSizes(extent))
        if (v >= 32 && v <= 128 && !llvm::is_contained(out, v))
          out.push_back(v);
    return out;
  };
  std::vector<std::pair<int64_t, int64_t>> threadTiles = {{4, 4}, {4, 8}, {8, 4}, {8, 8}, {2, 4}, {4, 2}};
  for (int64_t bm : candidates(m))
    for (int64_t bn : candidates(n))
      for (auto [tm, tn] : threadTiles) {
        if (m % bm || n % bn || bm % tm || bn % tn)
          continue;
        int64_t threads = (bm / tm) * (bn / tn);
        int64_t blocks = batch * (m / bm) * (n / bn);
        if (isGpu && (threads < 64 || threads > std::min<int64_t>(512, profile.maxThreadsPerBlock)))
          continue;
        if (!isGpu && tm * tn > 64)
          continue;
        double reuse = double(bm * bn) / double(bm + bn);      // operand reuse of the block tile
        double regs = double(tm * tn) / double(tm + tn);         // operand reuse in registers
        double fill = isGpu ? std::min(1.0, double(blocks) / (2.0 * profile.multiprocessors))
                            : std::min(1.0, double(blocks) / (4.0 * profile.multiprocessors));
        TileConfig c;
        c.block.assign(rank, 0);
        c.thread.assign(rank, 0);
        for (size_t d = 0; d + 2 < rank; ++d)
          c.block[d] = c.thread[d] = 1;
        c.block[rank - 2] = bm;
        c.block[rank - 1] = bn;
        c.thread[rank - 2] = tm;
        c.thread[rank - 1] = tn;
        c.k = isGpu ? 4 : 8;
        // A measured prior on the GPU: without shared-memory staging (A and B are read through L1), 64-thread
        // blocks of 8x8 per thread were fastest on the H200 (4096^3 fp32, 2026-11-29: 64x64 4.06 ms, 32x128
        // 4.07, 64x128 4.16, 128x64 4.20, 128x128 4.48), the reverse of what operand reuse alone predicts.
        double prior = !isGpu ? 1.0 : (threads == 64 && tm * tn == 64) ? 2.5 : threads == 256 ? 1.1 : 1.0;
        c.merit = reuse * regs * fill * prior;
        configs.push_back(c);
      }
  std::stable_sort(configs.begin(), configs.end(),
                   [](const TileConfig &a, const TileConfig &b) { return a.merit > b.merit; });
  return configs;
}

/// Other roots (elementwise chains, row reductions): GPU blocks of rows with a thread per row segment of
/// 1-8 elements (a whole row per thread when the payload reduces rows, so no thread recomputes a
/// reduction); CPU tiles of rows.
static std::vector<TileConfig> rowConfigs(const PayloadFacts &facts, const HardwareProfile &profile) {
  size_t rank = facts.parallelSizes.size();
  std::vector<TileConfig> configs;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= facts.parallelSizes[d];
  int64_t cols = facts.parallelSizes[rank - 1];
  bool reducesRows = facts.reductionOps > 0;
  auto make = [&](int64_t blockRows, int64_t blockCols, int64_t threadRows, int64_t threadCols, double merit) {
    TileConfig c;
    c.block.assign(rank, 0);
    c.thread.assign(rank, 0);
    for (size_t d = 0; d + 1 < rank; ++d)
      c.block[d] = c.thread[d] = 1;
    if (rank >= 2) {
      c.block[rank - 2] = blockRows;
      c.thread[rank - 2] = threadRows;
    }
    c.block[rank - 1] = blockCols;
    c.thread[rank - 1] = threadCols;
    c.merit = merit;
    configs.push_back(c);
  };
  int64_t lastRows = rank >= 2 ? facts.parallelSizes[rank - 2] : 1;
  for (int64_t br : {256, 128, 64, 32}) {
    if (rank < 2 || lastRows % br)
      continue;
    if (reducesRows)
      make(br, 0, 1, 0, double(br) / 256.0); // a whole row per thread
  }
  if (!reducesRows) {
    for (int64_t v : {4, 2, 8, 1})
      for (int64_t threadsX : {256, 128, 512}) {
        int64_t bc = v * threadsX;
        if (cols % bc)
          continue;
        if (rank >= 2)
          make(1, bc, 1, v, (v == 4 ? 2.0 : 1.0) * (threadsX == 256 ? 1.1 : 1.0));
        else
          make(0, bc, 0, v, 1.0);
      }
  }
  if (reducesRows && rank == 1) {
    // The root is the reduction itself (a row sum): a thread per output row.
    for (int64_t br : {256, 128, 64, 32})
      if (facts.parallelSizes[0] % br == 0) {
        TileConfig c;
        c.block = {br};
        c.thread = {1};
        c.merit = double(br) / 256.0;
        configs.push_back(c);
      }
  }
  if (configs.empty() && rank >= 3) {
    // Convolution-like roots: the innermost three loops tiled (a GPU grid has 3 dims), up to 4 x 4 x 32 outputs
    // per block and one per thread; the outer loops run inside each thread.
    TileConfig c;
    c.block.assign(rank, 0);
    c.thread.assign(rank, 0);
    int64_t caps[3] = {4, 4, 32};
    for (int i = 0; i < 3; ++i) {
      size_t d = rank - 3 + i;
      int64_t size = 1;
      for (int64_t candidate : {32, 16, 8, 4, 2, 1})
        if (candidate <= caps[i] && facts.parallelSizes[d] % candidate == 0) {
          size = candidate;
          break;
        }
      c.block[d] = size;
      c.thread[d] = 1;
    }
    c.merit = 1;
    configs.push_back(c);
  }
  (void)rows;
  (void)profile;
  std::stable_sort(configs.begin(), configs.end(),
                   [](const TileConfig &a, const TileConfig &b) { return a.merit > b.merit; });
  return configs;
}

/// Tensor-core proposals for sizes the fixed blocks do not divide (e.g. 2000x3000, K = 1000): pipelined mma.sync
/// on the largest blocks of whole 16x8 instruction tiles that divide M and N, warp tiles of 16 or 32 rows by up
/// to 64 columns, 4 to 32 warps; the last tile of K zero-filled when block_k does not divide it. `tiles` adds a
/// batch_matmul's leading 1.
static void addIrregularMmaProposals(
    const PayloadFacts &facts, const HardwareProfile &profile, int64_t m, int64_t n,
    llvm::function_ref<std::vector<int64_t>(std::vector<int64_t>)> tiles,
    llvm::function_ref<std::string(Schedule, std::string, std::string)> add) {
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t bm = 128; bm >= 16; bm -= 16)
    for (int64_t bn = 256; bn >= 8; bn -= 8)
      if (m % bm == 0 && n % bn == 0)
        blocks.push_back({bm, bn});
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const auto &x, const auto &y) { return x.first * x.second > y.first * y.second; });
  int proposed = 0;
  for (auto [bm, bn] : blocks) {
    int64_t wm = bm % 32 == 0 ? 32 : 16, wn = 0;
    for (int64_t c = 64; c >= 8 && !wn; c -= 8)
      if (bn % c == 0)
        wn = c;
    int64_t warps = (bm / wm) * (bn / wn);
    if (warps < 4 || warps > 32)
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
    add(v, "", "heuristic: tensor cores on " + std::to_string(bm) + "x" + std::to_string(bn) +
                   " blocks that divide the matmul, 3 cp.async stages of 64 of K");
    if (++proposed == 3)
      break;
  }
}

/// The tensor-core schedules the heuristic tries first for a bf16/f16 matmul (SIMT code runs it at a few
/// percent of the GPU's bf16 rate): mma.sync tiles, staged, with ldmatrix, pipelined, then wgmma.
static void addTensorCoreProposals(const PayloadFacts &facts, const HardwareProfile &profile,
                                   llvm::function_ref<std::string(Schedule, std::string, std::string)> add) {
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
      {{128, 128}, {32, 64}}, {{64, 64}, {32, 32}}, {{128, 128}, {64, 32}},
      {{128, 64}, {32, 32}},  {{64, 128}, {32, 32}}, {{128, 256}, {64, 64}}};
  // Measured on the H200 (bf16 4096^3): 128x128 / 32x64 1.78 ms, 128x128 / 64x32 2.05, the 4-warp tiles
  // 2.37; at 1024x1024x32768, 64x64 / 32x32 1.77 ms (more blocks), 128x128 / 32x64 3.9. More steps of K per
  // iteration (mma(2), mma(4)) changed nothing (1.783 / 1.782 / 1.779 ms): left to the search.
  // Asynchronous copies (cp.async) through 3-4 stages, no registers held for the next tile: they also leave
  // room for 64x64 warp tiles (fewer fragment reads per mma; ptxas: 168-218 registers, no spills). Measured on
  // the H200 (bf16 4096^3, 2026-11-30): 128x128 / 32x64, 3 stages of 64: 0.411 ms against 0.482 with two
  // register-filled stages; 128x256 / 64x64 0.432. The 64x64 blocks are for outputs too small to fill the
  // GPU with 128x128 ones (1024x1024: 64 blocks for 132 multiprocessors).
  struct Pipelined {
    std::vector<int64_t> block, warp;
    int64_t blockK, stages;
  };
  const std::vector<Pipelined> pipelined = {{{128, 128}, {32, 64}, 64, 3}, {{128, 128}, {32, 64}, 32, 4},
                                            {{128, 256}, {64, 64}, 32, 3}, {{256, 128}, {64, 64}, 32, 3},
                                            {{128, 128}, {64, 64}, 64, 3}, {{64, 64}, {32, 32}, 64, 3}};
  auto addPipelined = [&] {
    for (const Pipelined &p : pipelined) {
      if (m % p.block[0] || n % p.block[1])
        continue;
      Schedule v;
      v.push_back(tile("block", tiles(p.block)));
      v.push_back(tile("thread", tiles(p.warp)));
      v.push_back(intAction("mma", 1));
      v.push_back(intAction("stage", p.blockK));
      v.push_back(Action{"ldmatrix"});
      v.push_back(intAction("pipeline", p.stages));
      addRequiredFusions(v, facts, profile, /*always=*/true);
      std::string parent = add(v, "", "heuristic: tensor cores, " + std::to_string(p.stages) + " stages of " +
                                          std::to_string(p.blockK) + " of K filled by cp.async, ldmatrix");
      // The first (fastest measured) also with its result through shared memory (16-byte row stores).
      if (&p == &pipelined.front()) {
        v.push_back(Action{"stage_epilogue"});
        add(v, parent, "add stage_epilogue (the result stored through shared memory in 16-byte rows)");
      }
    }
  };
  // Hopper's warpgroup MMA first (sm_90a): pipelined, 128-byte swizzled stages of 64 of K, 64 rows per
  // warpgroup by the block's columns; their stages filled by cp.async or by TMA (tma), each tile's wgmma waited
  // for at once or one tile later (overlap). Measured on the H200 (bf16 4096^3, 2026-11-30, calls 8-9):
  // 128x256 blocks, 4 stages, overlap 0.199 ms (87% of cuBLAS); 128x128, 3 stages 0.214 by cp.async, 0.225 by
  // TMA; 128x256, 3 stages 0.240 / 0.233; overlap on 128x128 (4 stages: one block per multiprocessor instead
  // of two) 0.258 / 0.270; the best mma.sync kernel 0.410. For a small output with a long K (1024x1024x32768)
  // the search found 64x128 blocks, 4 TMA stages, overlap: 0.208 ms (mma.sync: 0.382).
  struct Warpgroup {
    std::vector<int64_t> block;
    int64_t stages;
    bool tma, overlap, stageEpilogue = false;
  };
  // (Only on Hopper, sm_90: elsewhere wgmma does not exist; an unknown chip gets them too.)
  bool hopper = profile.chip.empty() || StringRef(profile.chip).starts_with("sm_90");
  for (const Warpgroup &w : std::vector<Warpgroup>{{{128, 256}, 4, false, true},
                                                   {{128, 128}, 3, false, false},
                                                   {{64, 128}, 4, true, true},
                                                   {{128, 128}, 3, true, false},
                                                   {{128, 256}, 3, true, false},
                                                   {{128, 256}, 4, true, true},
                                                   {{128, 128}, 4, false, true},
                                                   // the result through shared memory: 16-byte row stores
                                                   {{128, 256}, 4, false, true, true}}) {
    if (!hopper || m % w.block[0] || n % w.block[1] || facts.contractionK % 64)
      continue;
    Schedule v;
    v.push_back(tile("block", tiles(w.block)));
    v.push_back(tile("thread", tiles({16, w.block[1]})));
    v.push_back(intAction("mma", 1));
    v.push_back(intAction("stage", 64));
    v.push_back(intAction("pipeline", w.stages));
    v.push_back(Action{"wgmma"});
    if (w.tma)
      v.push_back(Action{"tma"});
    if (w.overlap)
      v.push_back(Action{"overlap"});
    if (w.stageEpilogue)
      v.push_back(Action{"stage_epilogue"});
    addRequiredFusions(v, facts, profile, /*always=*/true);
    add(v, "", "heuristic: Hopper wgmma on " + std::to_string(w.block[0]) + "x" + std::to_string(w.block[1]) +
                   " blocks, " + std::to_string(w.stages) + " swizzled stages of 64 of K filled by " +
                   (w.tma ? "TMA" : "cp.async") + (w.overlap ? ", one tile's wgmma in flight" : "") +
                   (w.stageEpilogue ? ", the result stored through shared memory" : ""));
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

static std::vector<Proposal> heuristicSchedulesOn(const PayloadFacts &facts, const HardwareProfile &profile) {
  std::vector<Proposal> out;
  llvm::StringSet<> seen;
  auto add = [&](Schedule s, std::string parentHash, std::string step) {
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
  };
  bool contraction = !facts.contractionOp.empty() && facts.parallelSizes.size() >= 2;
  std::vector<TileConfig> configs = contraction ? contractionConfigs(facts, profile) : rowConfigs(facts, profile);
  if (configs.empty())
    return out;
  // Rows over lanes (coalesced columns, shuffle reductions) for rows that are reduced on the GPU, first: a
  // thread per row (the configurations below) reads a row's columns uncoalesced, 10-50x slower on the H200,
  // and at realistic sizes its trial alone can take a short tuning budget.
  bool rowSums = facts.parallelSizes.size() == 1 && facts.reductionSize > 0;
  if (gpu(profile) && !contraction && facts.reductionOps > 0 && (facts.parallelSizes.size() == 2 || rowSums)) {
    int64_t rowCount = facts.parallelSizes[0], width = rowWidth(facts);
    // First, a row over several warps (one row per block, reduced over the block): rows too wide for a warp's
    // registers, or lighter threads for more rows in flight.
    // A streamed row (second): the most lanes that divide it, elementwise producers recomputed by their
    // consumers, no vectorize. Nothing of the row is kept (each pass re-reads it, from L2 after the first), so
    // a lane needs few registers and many rows are in flight: the alternative for rows too wide to keep in
    // registers at full occupancy (1024 x 32000 softmax: 640 lanes x 50 values, 95 registers, one block per SM).
    std::vector<int64_t> allLanes = lanesCounts(facts);
    int64_t streamLanes = allLanes.empty() ? 0 : allLanes.back();
    bool streams = !rowSums && facts.linalgOps > 1 && streamLanes > 32;
    // pipeline_rows pays off where a block's row (in registers over `lanes`) leaves room for one block per
    // multiprocessor, and fits in a block's shared memory (measured below).
    auto pipelinable = [&](int64_t lanes) {
      return profile.multiprocessors > 0 && residentRowBlocks(lanes, width) == 1 &&
             width * facts.elementBytes() <= 200 * 1024;
    };
    // One row per block and per thread (a row sum's root is 1-D), its producers fused.
    auto rowPerBlock = [&] {
      std::vector<int64_t> oneRow = rowSums ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 0};
      Schedule v;
      v.push_back(tile("block", oneRow));
      if (facts.linalgOps > 1)
        v.push_back(fuse("block"));
      v.push_back(tile("thread", oneRow));
      if (facts.linalgOps > 1)
        v.push_back(fuse("thread"));
      return v;
    };
    // First, the row in registers over lanes that each own 4 consecutive columns (lane_vector(4)): 16-byte loads
    // and stores, a quarter of the instructions; every reduction task's best schedule in benchmark call 13
    // (docs/perf/reductions-h200.md) (softmax 1024 x 32000 over 640 lanes of one column: 50 4-byte loads
    // per lane, the load queue its largest stall in ncu). The lane counts with 8-64 values per lane, nearest
    // 16 first (the count the plain lanes proposals below start from).
    {
      std::vector<int64_t> vectorLanes;
      for (int64_t lanes : allLanes)
        if (lanes > 32 && width % (4 * lanes) == 0 && width / lanes >= 8 && width / lanes <= 64)
          vectorLanes.push_back(lanes);
      std::stable_sort(vectorLanes.begin(), vectorLanes.end(), [&](int64_t a, int64_t b) {
        return std::abs(width / a - 16) < std::abs(width / b - 16);
      });
      for (size_t i = 0; i < vectorLanes.size() && i < 3; ++i) {
        Schedule v = rowPerBlock();
        v.push_back(intAction("lanes", vectorLanes[i]));
        v.push_back(intAction("lane_vector", 4));
        v.push_back(vectorize());
        std::string parent = add(v, "", "heuristic: a row per block over " + std::to_string(vectorLanes[i]) +
                                             " lanes of 4 consecutive columns (16-byte accesses), the row in registers");
        Schedule base = v;
        // (Not proposed: stash, part of such a row in shared memory for two blocks per multiprocessor. Measured on
        // softmax 1024 x 32000 (benchmark call 20): slower in every form, 0.0995 ms with stash(1) and one block,
        // 0.113 with stash(3), occupancy(2) and two blocks (112 bytes spilled), against 0.0839 without.)
        // The first also with the next wave's rows prefetched into L2 (a wave: the blocks resident at once,
        // estimated from the lanes and a register per value held plus 32). Measured (benchmark call 15): 2%
        // faster on 16 KB rows (4096 fp32), 13% slower on 128 KB rows (softmax 1024 x 32000, one block per
        // multiprocessor): proposed for rows up to 32 KB; the search may still add it to any row kernel.
        int64_t elementBytes = facts.elementBytes();
        std::string prefetched;
        if (i == 0 && profile.multiprocessors > 0 && width * elementBytes <= 32 * 1024) {
          v.push_back(intAction("prefetch_rows", profile.multiprocessors * residentRowBlocks(vectorLanes[i], width)));
          prefetched = add(v, parent, "add " + describe(v.back()) + " (the next wave's rows into L2)");
        }
        // The first also with its output stored evict-first (streaming_stores: written once, never read back).
        // Measured on call 23's kernels in cache_hints.py's harness (benchmark calls 25-26): layernorm 3.7-4.4%,
        // RMS norm 4-4.7%, layernorm without affine 1.6-1.8%, softmax 4096 x 4096 0.5-0.9% faster; a row sum's
        // small output gains nothing. Then also its read-only buffers loaded by ld.global.nc (read_only_inputs:
        // layernorm 2.5-3% alone there). In the tuner (call 27) both within 0.5%.
        if (i == 0 && !rowSums) {
          Schedule streamed = v;
          streamed.push_back(Action{"streaming_stores"});
          std::string streaming =
              add(streamed, prefetched.empty() ? parent : prefetched, "add streaming_stores (the output evict-first in L2)");
          Schedule evictLast = streamed;
          streamed.push_back(Action{"read_only_inputs"});
          add(streamed, streaming, "add read_only_inputs (the buffers it only reads by ld.global.nc)");
          // Or with its loads evict-last in L2 (as Triton's kernels load their rows): on top of st.cs, 1.5-2.5%
          // faster on layernorm, RMS norm and softmax with call 23's kernels in cache_hints.py's harness
          // (benchmark call 28); under 0.5% in the tuner with this prefetch (call 29).
          evictLast.push_back(Action{"loads_evict_last"});
          add(evictLast, streaming, "add loads_evict_last (the loads with an L2 evict-last policy)");
          // And with the prefetch two rows per multiprocessor ahead instead of a wave: the search's best form on
          // all three 4096-wide norms (benchmark call 30, 145-170 trials each), 1.4-2.1% faster than the best
          // without loads_evict_last; with the wave's prefetch (660) the policy gained between -1% and 0.9%.
          if (!prefetched.empty()) {
            Schedule near = base;
            near.push_back(intAction("prefetch_rows", 2 * profile.multiprocessors));
            near.push_back(Action{"streaming_stores"});
            near.push_back(Action{"loads_evict_last"});
            add(near, parent,
                "add " + describe(near[near.size() - 3]) +
                    ", streaming_stores and loads_evict_last (two rows per multiprocessor ahead, loads evict-last)");
          }
          // And, where a prefetch is proposed, the loads evict-last without it: as fast as with the prefetch under
          // the dirty flush (benchmark call 30: layernorm without affine 0.0663 against 0.0661 ms) and among the
          // best under the clean one, where the prefetch gains nothing (call 43: RMS norm's best, 0.0627 ms; call
          // 41: layernorm without affine 0.0634 with st.cs, the best 0.0632). Proposed, it was the best trial on
          // layernorm without affine in call 44 and second on the other two norms, 0.9-1% behind the prefetch.
          if (!prefetched.empty()) {
            Schedule unprefetched = base;
            unprefetched.push_back(Action{"loads_evict_last"});
            add(unprefetched, parent,
                "add loads_evict_last without a prefetch (the loads with an L2 evict-last policy)");
          }
        }
        // A row sum reads each row once and writes little: each form also with its loads evict-first in L2 (2.5%
        // faster on call 23's 8192 x 8192 row sum, benchmark call 28; 6% over 1024 lanes, call 29: 0.0661 ms
        // against 0.0705).
        if (rowSums) {
          Schedule evictFirst = base; // call 23's best row sum had no prefetch
          evictFirst.push_back(Action{"loads_evict_first"});
          add(evictFirst, parent, "add loads_evict_first (the loads with an L2 evict-first policy)");
        }
        // A row that leaves registers for one block per multiprocessor also with its blocks looping over rows, one
        // per multiprocessor, each copying its next row into shared memory while it computes the current one
        // (pipeline_rows). Measured (benchmark call 23): softmax 1024 x 32000 0.0776-0.0810 ms against 0.0839
        // (81% of copy bandwidth); on 4096-wide rows, several blocks per multiprocessor, 5-15% slower (0.0412
        // against 0.0371 ms softmax 4096 x 4096), so not proposed there.
        if (i == 0 && pipelinable(vectorLanes[i])) {
          Schedule w = base;
          w.push_back(intAction("pipeline_rows", profile.multiprocessors));
          std::string pipelined = add(w, parent, "add " + describe(w.back()) + " (the next row copied into shared memory meanwhile)");
          if (!rowSums) {
            w.push_back(Action{"streaming_stores"});
            add(w, pipelined, "add streaming_stores (the output evict-first in L2)");
          }
          // Then with the rows' bulk copies under an L2 policy. Measured on softmax 1024 x 32000 (benchmark call
          // 35, 201 trials): evict-last 1-4% faster than none on this form (0.0785 against 0.0808 ms), evict-first
          // 0.9% slower (0.0815); on a row sum's plain loads evict-first was the faster one (call 29).
          Schedule policy = base;
          policy.push_back(intAction("pipeline_rows", profile.multiprocessors));
          policy.push_back(Action{rowSums ? "loads_evict_first" : "loads_evict_last"});
          add(policy, pipelined,
              rowSums ? "add loads_evict_first (the rows' bulk copies evict-first in L2)"
                      : "add loads_evict_last (the rows' bulk copies evict-last in L2)");
        }
        // A layernorm's mean and variance merged in one round (the first two forms, and beyond a warp only
        // over a power of 2 of warps).
        if (i == 0 && facts.rowMoments > 0 && (vectorLanes[i] <= 32 || llvm::isPowerOf2_64(vectorLanes[i] / 32))) {
          v.push_back(Action{"moments"});
          sortByPhase(v);
          add(v, parent, "add moments (the mean and the variance merged over the lanes in one round)");
          removeSlot(v, "prefetch_rows");
          add(v, parent, "add moments without prefetch_rows");
        }
      }
    }
    int blockLaneTrials = 0;
    for (int64_t lanes : blockLaneCounts(facts)) {
      bool firstLanes = blockLaneTrials == 0;
      if (blockLaneTrials++ == 1 && streams) {
        Schedule v;
        v.push_back(tile("block", {1, 0}));
        v.push_back(fuse("block"));
        v.push_back(tile("thread", {1, 0}));
        v.push_back(fuse("thread"));
        v.push_back(recompute());
        v.push_back(intAction("lanes", streamLanes));
        add(v, "", "heuristic: a row per block over " + std::to_string(streamLanes) +
                       " lanes, elementwise producers recomputed (the row streamed, not kept)");
      }
      Schedule v = rowPerBlock();
      v.push_back(intAction("lanes", lanes));
      if (!rowSums)
        v.push_back(vectorize());
      std::string inRegisters = add(v, "", "heuristic: a row per block over " + std::to_string(lanes) + " lanes" +
                                               (rowSums ? "" : ", the row in registers"));
      // The first such form, where its row leaves registers for one block per multiprocessor, also pipelined
      // with its bulk copies evict-last in L2, then also with read_only_inputs: the search's best form on
      // softmax 1024 x 32000 (benchmark call 35, 201 trials: 0.0749-0.0750 ms over 800 or 640 lanes, against
      // 0.0758 for the best over lane_vector(2), 0.0779 over lane_vector(4) and 0.0823 for the best without
      // pipeline_rows).
      if (firstLanes && !rowSums && pipelinable(lanes)) {
        v.push_back(intAction("pipeline_rows", profile.multiprocessors));
        v.push_back(Action{"loads_evict_last"});
        std::string pipelined = add(v, inRegisters,
                                    "add " + describe(v[v.size() - 2]) +
                                        " and loads_evict_last (the next row copied into shared memory meanwhile, "
                                        "evict-last in L2)");
        v.push_back(Action{"read_only_inputs"});
        sortByPhase(v);
        add(v, pipelined, "add read_only_inputs (the buffers it only reads by ld.global.nc)");
      }
    }
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
      if (!rowSums && width / 32 <= 128) {
        Schedule inRegisters = v;
        inRegisters.push_back(vectorize());
        add(inRegisters, "", "heuristic: " + std::to_string(rows) + " rows per block, a warp per row, the row in registers");
      }
      add(v, "", "heuristic: " + std::to_string(rows) + " rows per block, a warp per row");
    }
  }

  addTensorCoreProposals(facts, profile, add);

  // The best-ranked configuration, built one action at a time (each step a trial).
  const TileConfig &best = configs.front();
  Schedule s;
  s.push_back(tile("block", best.block));
  if (facts.linalgOps > 1)
    s.push_back(fuse("block"));
  // On the GPU a block tile alone is one thread per block: seconds per call at realistic sizes, so the first
  // step tiles both levels.
  std::string h = gpu(profile) ? std::string() : add(s, "", "add " + describe(s.back()));
  s.push_back(tile("thread", best.thread));
  if (facts.linalgOps > 1)
    s.push_back(fuse("thread"));
  // Nor is a GPU contraction without its K tile a useful trial: each thread then walks the whole K for its
  // outputs (705 ms against the naive kernel's 85 ms at 4096^3 on the H200), so the K tile comes with them.
  // ... and vectorized: scalar code keeps each thread's accumulators in memory across the K loop (200 ms
  // against cuBLAS's 1.4 at 1024x1024x32768 on the H200).
  bool kFirst = gpu(profile) && contraction, vectorFirst = false;
  if (kFirst) {
    s.push_back(tile("reduction", {best.k}));
    Schedule vectorized = s;
    vectorized.push_back(vectorize());
    if ((vectorFirst = valid(vectorized, facts, profile)))
      s = vectorized;
  }
  h = add(s, h, vectorFirst ? "tile(block), tile(thread), tile(reduction) and vectorize"
                : kFirst    ? "tile(block), tile(thread) and tile(reduction)"
                : h.empty() ? "tile(block) and tile(thread)"
                            : "add tile(thread)");
  if (contraction && !kFirst) {
    s.push_back(tile("reduction", {best.k}));
    h = add(s, h, "add " + describe(s.back()));
  }
  std::string full = h;
  if (!vectorFirst) {
    s.push_back(vectorize());
    full = add(s, h, "add vectorize");
    if (full.empty()) {
      s.pop_back(); // the tile is too large to vectorize
      full = h;
    }
  }
  if (contraction && gpu(profile) && facts.parallelSizes.size() >= 2) {
    // Measured on the H200 (4096^3 fp32, study-4, 2026-11-29): the K loop unrolled 4 times with the registers
    // capped at 128 (unrolled, a 64-accumulator thread otherwise takes ~170 and loses half its warps):
    // gemm+bias+relu at 64x64 / 8x8 went from 3.99 ms (capped, not unrolled) to 3.62; unrolled but uncapped,
    // 4.43. And a block of one warp, each thread 16x8 of a 16x256 tile (A's loads broadcast over the warp, B's
    // coalesced 1 KB rows): 3.54 ms, 255 registers, the fastest SIMT schedule the search found for gemm.
    Schedule unrolled = s;
    unrolled.push_back(unroll(4));
    int64_t accumulators = best.thread[best.thread.size() - 1] * best.thread[best.thread.size() - 2];
    if (accumulators >= 64)
      unrolled.push_back(intAction("max_registers", 128));
    add(unrolled, full, accumulators >= 64 ? "add unroll(4) and max_registers(128)" : "add unroll(4)");
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
      add(warp, "", "heuristic: a warp per 16x256 block, 16x8 per thread, unroll(4)");
    }
    // The classic shared-memory SGEMM (stage without mma): 128x128 blocks, 8x8 (or 8x16) per thread in
    // strided groups of 4, 16 (or 32, or 8) of K per staged tile. Measured on the H200 (4096^3, 2026-11-30): stage(16)
    // 2.85 ms for gemm+bias+relu (95% of cuBLAS's rate) at 128 registers, two blocks per multiprocessor; the
    // plain gemm's same kernel took 143 registers, one block, 3.37 ms, hence the occupancy(2) variant; 8x16
    // per thread (128 threads) was the best gemm+scale+gelu, 2.84 ms. 16x8 per thread (128 threads, 16 rows:
    // fewer shared loads per FMA) was the best gemm+bias+relu of benchmark call 15, 2.75 ms against 2.85 for 8x8,
    // and in call 16 the best of all four fp32 4096^3 tasks (gemm 2.82 ms, 0.99x cuBLAS; with pipeline(2) the
    // best gemm+bias+relu, 2.73): so 16x8 first, then 8x8.
    // (A batch_matmul's: one batch per block, folded to a matmul before the staged op.)
    bool batch = matmulRowDim(facts) > 0;
    if (facts.contractionOperandType == "f32" && facts.parallelSizes[rank - 2] % 128 == 0 &&
        facts.parallelSizes[rank - 1] % 128 == 0 && (rank == 2 || batch)) {
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
        add(v, "", "heuristic: A and B staged in shared memory (" + std::to_string(blockK) + " of K per tile), " +
                       std::to_string(thread[0]) + "x" + std::to_string(thread[1]) + " per thread in strided groups of 4" +
                       (occupancy > 0 ? ", two blocks per multiprocessor" : "") +
                       (asyncB ? ", B's tiles by cp.async (no staging registers: no spill at 128)" : ""));
      };
      staged({16, 8}, 16, 0);
      staged({16, 8}, 16, 0, /*asyncB=*/true);
      staged({8, 8}, 16, 0);
      staged({8, 8}, 16, 2);
      staged({8, 8}, 16, 2, /*asyncB=*/true);
      staged({8, 16}, 16, 0);
      staged({8, 8}, 32, 2); // 65 KB: dynamic shared memory
      staged({8, 8}, 8, 0);
    } else if (facts.contractionOperandType == "f32" && rank == 2) {
      // Sizes that 128 does not divide (e.g. 2000x3000x1000): the largest block tiles of 8x8 per thread that
      // divide M and N (multiples of 8 rows and columns, at most 256 threads), 16 or 8 of K per tile.
      int64_t m = facts.parallelSizes[0], n = facts.parallelSizes[1];
      int64_t blockK = facts.contractionK % 16 == 0 ? 16 : facts.contractionK % 8 == 0 ? 8 : 0;
      std::vector<std::pair<int64_t, int64_t>> blocks;
      for (int64_t bm = 8; bm <= 256 && blockK; bm += 8)
        for (int64_t bn = 8; bn <= 256; bn += 8)
          if (m % bm == 0 && n % bn == 0 && (bm / 8) * (bn / 8) <= 256 && (bm / 8) * (bn / 8) >= 64)
            blocks.push_back({bm, bn});
      std::stable_sort(blocks.begin(), blocks.end(),
                       [](const auto &x, const auto &y) { return x.first * x.second > y.first * y.second; });
      // Each as it is, then bounded to as many blocks per multiprocessor as fill 16 warps (ptxas takes 130-159
      // registers for these tiles). Measured on the H200 (2000x3000x1000, 2026-11-30): 40x200 unbounded 0.308 ms
      // (93% of cuBLAS), bounded 0.345 (56 bytes spilled); 80x200 0.347 and 0.334.
      for (bool bounded : {false, true})
        for (size_t i = 0; i < blocks.size() && i < 3; ++i) {
          int64_t threads = (blocks[i].first / 8) * (blocks[i].second / 8);
          int64_t perSM = std::max<int64_t>(1, 512 / ((threads + 31) / 32 * 32));
          Schedule v;
          v.push_back(tile("block", {blocks[i].first, blocks[i].second}));
          v.push_back(tile("thread", {8, 8}));
          v.push_back(intAction("stage", blockK));
          if (bounded)
            v.push_back(intAction("occupancy", perSM));
          addRequiredFusions(v, facts, profile, /*always=*/true);
          add(v, "", "heuristic: A and B staged in shared memory on " + std::to_string(blocks[i].first) + "x" +
                         std::to_string(blocks[i].second) + " blocks that divide the matmul, 8x8 per thread" +
                         (bounded ? ", " + std::to_string(perSM) + " blocks per multiprocessor" : ""));
        }
    }
  }
  if (contraction) {
    Schedule unrolled = s;
    unrolled.push_back(unroll(2));
    add(unrolled, full, "add unroll(2)");
    // Register pressure is the largest lever measured for SIMT matmul on the H200 (shared/TOOLCHAIN.md:
    // nvvm.minctasm = 2 took a kernel from 19.3 to 30.9 TFLOP/s). Two blocks of 256 threads need at most 128
    // registers each; a smaller block with a fused epilogue is capped at 128 directly (see the variants).
    std::vector<int64_t> dims = blockDims(s, facts);
    int64_t threads = dims[0] * dims[1] * dims[2];
    if (gpu(profile) && threads >= 256) {
      Schedule bounded = s;
      bounded.push_back(intAction("occupancy", 2));
      add(bounded, full, "add occupancy(2)");
    } else if (gpu(profile) && facts.linalgOps > 2) {
      Schedule bounded = s;
      bounded.push_back(intAction("max_registers", 128));
      add(bounded, full, "add max_registers(128)");
    }
  }

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
    std::string variant = add(v, "", "heuristic variant " + std::to_string(i));
    // A fused epilogue takes a 64-accumulator thread just over 128 registers, and one register more costs a
    // quarter of the warps (measured on the H200: gemm+bias+relu at 64x64 / 8x8 used 129 registers, 12 warps
    // per SM and 5.46 ms; the bare gemm, 128 registers, 16 warps, 4.06 ms): the same, capped at 128.
    int64_t accumulators = 1;
    for (int64_t t : configs[i].thread)
      accumulators *= std::max<int64_t>(t, 1);
    if (gpu(profile) && contraction && facts.linalgOps > 2 && accumulators >= 64 && !variant.empty()) {
      Schedule capped = v;
      capped.push_back(intAction("max_registers", 128));
      add(capped, variant, "add max_registers(128)");
    }
  }
  if (contraction) {
    for (size_t i = 0; i < configs.size() && i < 3; ++i)
      for (int64_t k : {8, 16, 2}) {
        Schedule v;
        v.push_back(tile("block", configs[i].block));
        v.push_back(tile("thread", configs[i].thread));
        v.push_back(tile("reduction", {k}));
        v.push_back(vectorize());
        add(v, "", "heuristic K step " + std::to_string(k));
      }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Policies
//===----------------------------------------------------------------------===//

namespace {

/// The history's schedules by hash, so no policy proposes a schedule twice.
class Seen {
public:
  explicit Seen(llvm::ArrayRef<TrialRecord> history) {
    for (const TrialRecord &r : history)
      hashes.insert(r.hash);
  }
  bool insert(const Schedule &s) { return hashes.insert(scheduleHash(s)).second; }
  bool contains(const std::string &hash) const { return hashes.contains(hash); }

private:
  llvm::StringSet<> hashes;
};

/// Seeded from the run's seed and how much history there is, so a resumed run continues the same sequence.
static std::mt19937_64 rngFor(uint64_t seed, size_t historySize, uint64_t salt) {
  std::seed_seq sequence{seed, static_cast<uint64_t>(historySize), salt};
  return std::mt19937_64(sequence);
}

/// How many draws a random or evolve proposal may make to find `count` schedules not tried before. It does
/// not shrink with the batch: a run's last batch of one trial got 20 draws, and study-5's softmax search
/// stopped one trial short of its budget ("the policy has nothing new to try") while new schedules remained.
static int proposalAttempts(int count) { return std::max(count, 16) * 20; }

class RandomPolicy : public Policy {
public:
  RandomPolicy(const PayloadFacts &facts, const HardwareProfile &profile, uint64_t seed)
      : facts(facts), profile(profile), seed(seed) {}
  std::string name() const override { return "random"; }
  std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int count) override {
    std::mt19937_64 rng = rngFor(seed, history.size(), 1);
    Seen seen(history);
    std::vector<Proposal> out;
    for (int attempt = 0; attempt < proposalAttempts(count) && static_cast<int>(out.size()) < count; ++attempt) {
      Schedule s = randomSchedule(facts, profile, rng);
      if (s.empty() || !seen.insert(s))
        continue;
      out.push_back({s, "random", "", "", "random schedule"});
    }
    return out;
  }

private:
  PayloadFacts facts;
  HardwareProfile profile;
  uint64_t seed;
};

class HeuristicPolicy : public Policy {
public:
  HeuristicPolicy(const PayloadFacts &facts, const HardwareProfile &profile)
      : guesses(heuristicSchedules(facts, profile)) {}
  std::string name() const override { return "heuristic"; }
  std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int count) override {
    Seen seen(history);
    std::vector<Proposal> out;
    for (const Proposal &p : guesses) {
      if (static_cast<int>(out.size()) >= count)
        break;
      // A step builds on the previous one: propose it once its parent has been tried.
      if (!p.parentHash.empty() && !seen.contains(p.parentHash) &&
          llvm::none_of(out, [&](const Proposal &o) { return scheduleHash(o.schedule) == p.parentHash; }))
        continue;
      if (seen.insert(p.schedule))
        out.push_back(p);
    }
    return out;
  }

private:
  std::vector<Proposal> guesses;
};

/// Islands with different appetites for risk.
struct Island {
  const char *name;
  double crossoverRate;
  int mutations; ///< Mutations applied to each child.
  bool aggressive;
};
static const Island kIslands[] = {{"aggressive", 0.5, 2, true}, {"balanced", 0.3, 1, false},
                                  {"conservative", 0.1, 1, false}};

class EvolvePolicy : public Policy {
public:
  EvolvePolicy(const PayloadFacts &facts, const HardwareProfile &profile, uint64_t seed, int population = 8)
      : facts(facts), profile(profile), seed(seed), population(population) {}
  std::string name() const override { return "evolve"; }

  std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int count) override {
    std::mt19937_64 rng = rngFor(seed, history.size(), 2);
    Seen seen(history);
    std::vector<const TrialRecord *> measured;
    for (const TrialRecord &r : history)
      if (r.status == "correct" && r.timeMs > 0 && !r.schedule.empty())
        measured.push_back(&r);
    std::stable_sort(measured.begin(), measured.end(),
                     [](const TrialRecord *a, const TrialRecord *b) { return a->timeMs < b->timeMs; });
    std::vector<Proposal> out;
    for (int attempt = 0; attempt < proposalAttempts(count) && static_cast<int>(out.size()) < count; ++attempt) {
      const Island &island = kIslands[out.size() % 3];
      // Until something is measured the population is random.
      if (measured.empty()) {
        Schedule s = randomSchedule(facts, profile, rng);
        if (!s.empty() && seen.insert(s))
          out.push_back({s, "evolve", island.name, "", "random seed of the population"});
        continue;
      }
      std::vector<const TrialRecord *> pool = islandPool(measured, island.name);
      const TrialRecord *a = tournament(pool, rng), *b = tournament(pool, rng);
      Schedule child = a->schedule;
      std::string step;
      if (a != b && coin(rng, island.crossoverRate)) {
        Schedule crossed = crossoverSchedules(a->schedule, b->schedule, facts, profile, rng);
        if (!crossed.empty()) {
          child = crossed;
          step = "crossover of #" + std::to_string(a->id) + " and #" + std::to_string(b->id);
        }
      }
      for (int i = 0; i < island.mutations || step.empty(); ++i) {
        std::string what;
        child = mutateSchedule(child, facts, profile, rng, island.aggressive, what);
        if (what.empty())
          break;
        step += (step.empty() ? "" : ", ") + what;
        if (i + 1 >= island.mutations)
          break;
      }
      if (step.empty() || !seen.insert(child))
        continue;
      out.push_back({child, "evolve", island.name, a->hash, step});
    }
    return out;
  }

private:
  /// The island's best members plus the global best two (elitism and migration).
  std::vector<const TrialRecord *> islandPool(llvm::ArrayRef<const TrialRecord *> measured, StringRef island) {
    std::vector<const TrialRecord *> pool;
    for (const TrialRecord *r : measured)
      if (r->island == island && static_cast<int>(pool.size()) < population)
        pool.push_back(r);
    for (size_t i = 0; i < measured.size() && i < 2; ++i)
      if (!llvm::is_contained(pool, measured[i]))
        pool.push_back(measured[i]);
    for (size_t i = 0; i < measured.size() && static_cast<int>(pool.size()) < population; ++i)
      if (!llvm::is_contained(pool, measured[i]))
        pool.push_back(measured[i]);
    return pool;
  }
  static const TrialRecord *tournament(llvm::ArrayRef<const TrialRecord *> pool, std::mt19937_64 &rng) {
    std::uniform_int_distribution<size_t> any(0, pool.size() - 1);
    const TrialRecord *a = pool[any(rng)], *b = pool[any(rng)];
    return a->timeMs <= b->timeMs ? a : b;
  }

  PayloadFacts facts;
  HardwareProfile profile;
  uint64_t seed;
  int population;
};

/// Heuristic's guesses first, then evolve (seeded by everything measured so far).
class HeuristicThenEvolve : public Policy {
public:
  HeuristicThenEvolve(const PayloadFacts &facts, const HardwareProfile &profile, uint64_t seed)
      : heuristic(facts, profile), evolve(facts, profile, seed) {}
  std::string name() const override { return "heuristic+evolve"; }
  std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int count) override {
    std::vector<Proposal> out = heuristic.propose(history, count);
    if (static_cast<int>(out.size()) < count) {
      // Evolve must not propose what the heuristic just did: show it those as tried.
      std::vector<TrialRecord> extended(history.begin(), history.end());
      for (const Proposal &p : out) {
        TrialRecord r;
        r.schedule = p.schedule;
        r.hash = scheduleHash(p.schedule);
        r.status = "pending";
        extended.push_back(r);
      }
      for (Proposal &p : evolve.propose(extended, count - static_cast<int>(out.size())))
        out.push_back(std::move(p));
    }
    return out;
  }

private:
  HeuristicPolicy heuristic;
  EvolvePolicy evolve;
};

} // namespace

std::unique_ptr<Policy> kforge::tune::createPolicy(StringRef name, const PayloadFacts &facts,
                                                   const HardwareProfile &profile, uint64_t seed,
                                                   std::string &error) {
  if (name == "random")
    return std::make_unique<RandomPolicy>(facts, profile, seed);
  if (name == "heuristic")
    return std::make_unique<HeuristicPolicy>(facts, profile);
  if (name == "evolve")
    return std::make_unique<EvolvePolicy>(facts, profile, seed);
  if (name == "heuristic+evolve")
    return std::make_unique<HeuristicThenEvolve>(facts, profile, seed);
  error = "unknown policy '" + name.str() + "' (expected random, heuristic, evolve or heuristic+evolve)";
  return nullptr;
}

//===----------------------------------------------------------------------===//
// split / split_k: a schedule for the op that a two-kernel action leaves to the actions after it
//===----------------------------------------------------------------------===//
// The actions after split (split_k) are the contraction's (the partial matmul's) schedule: the policies build,
// mutate and cross them against that op's facts (scheduledFacts), and keep the first action in front.

/// The values a two-kernel action may take on this payload: split's row-kernel lanes, split_k's parts (those
/// dividing K into slices of at least 512).
static std::vector<int64_t> kernelSplitValues(StringRef kind, const PayloadFacts &facts) {
  if (kind == "split")
    return blockLaneCounts(facts);
  std::vector<int64_t> parts;
  for (int64_t p : {2, 4, 8, 16})
    if (facts.contractionK % p == 0 && facts.contractionK / p >= 512)
      parts.push_back(p);
  return parts;
}

/// split_k is worth proposing when the plain matmul's 64 x 64 tiles are too few blocks to fill the GPU twice.
static bool fewBlocks(const PayloadFacts &facts, const HardwareProfile &profile) {
  if (facts.parallelSizes.size() != 2)
    return false;
  int64_t blocks = (facts.parallelSizes[0] / 64) * (facts.parallelSizes[1] / 64);
  return blocks < 2 * std::max<int64_t>(profile.multiprocessors, 1);
}

Schedule kforge::tune::randomSchedule(const PayloadFacts &facts, const HardwareProfile &profile,
                                      std::mt19937_64 &rng) {
  for (StringRef kind : {"split", "split_k"}) {
    bool applies = kind == "split" ? splitApplies(facts) : splitKApplies(facts);
    std::vector<int64_t> values = kernelSplitValues(kind, facts);
    // split_k is a long shot on a matmul whose output tiles already fill the GPU.
    double chance = kind == "split_k" && !fewBlocks(facts, profile) ? 0.1 : 0.5;
    if (!gpu(profile) || !applies || values.empty() || !coin(rng, chance))
      continue;
    Action first = intAction(kind, pick(rng, values));
    Schedule rest = randomScheduleOn(scheduledFacts({first}, facts), profile, rng);
    if (!rest.empty())
      return withSplit(first, rest);
  }
  return randomScheduleOn(facts, profile, rng);
}

Schedule kforge::tune::mutateSchedule(const Schedule &parent, const PayloadFacts &facts,
                                      const HardwareProfile &profile, std::mt19937_64 &rng, bool aggressive,
                                      std::string &step) {
  const Action *split = kernelSplit(parent);
  if (!split)
    return mutateScheduleOn(parent, facts, profile, rng, aggressive, step);
  std::vector<int64_t> values = kernelSplitValues(split->kind, facts);
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
  Schedule rest =
      mutateScheduleOn(withoutSplit(parent), scheduledFacts(parent, facts), profile, rng, aggressive, step);
  return withSplit(*split, rest);
}

Schedule kforge::tune::mutateParameters(const Schedule &parent, const PayloadFacts &facts,
                                        const HardwareProfile &profile, std::mt19937_64 &rng, std::string &step) {
  const Action *split = kernelSplit(parent);
  if (!split)
    return mutateParametersOn(parent, facts, profile, rng, step);
  return withSplit(*split,
                   mutateParametersOn(withoutSplit(parent), scheduledFacts(parent, facts), profile, rng, step));
}

Schedule kforge::tune::crossoverSchedules(const Schedule &a, const Schedule &b, const PayloadFacts &facts,
                                          const HardwareProfile &profile, std::mt19937_64 &rng) {
  const Action *splitA = kernelSplit(a), *splitB = kernelSplit(b);
  if (!splitA && !splitB)
    return crossoverSchedulesOn(a, b, facts, profile, rng);
  // One schedules the root, the other another op (or the same op split differently): no slot means the same.
  if (!splitA || !splitB || splitA->kind != splitB->kind ||
      (splitA->kind == "split_k" && splitA->value != splitB->value))
    return {};
  Schedule child = crossoverSchedulesOn(withoutSplit(a), withoutSplit(b), scheduledFacts(a, facts), profile, rng);
  if (child.empty())
    return {};
  return withSplit(coin(rng, 0.5) ? *splitA : *splitB, child);
}

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
    // The contraction's own first guesses behind the best-guess row kernel, then the first of them with the
    // other lane counts: fused into the row kernel, every thread would recompute a row of the contraction
    // (266 ms against 86 for the naive kernels, gemm + softmax at 4096^3 on the H200).
    Action first = intAction("split", counts.front());
    appendBehind(first, heuristicSchedulesOn(scheduledFacts({first}, facts), profile), SIZE_MAX, facts, profile,
                 out);
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
    std::vector<int64_t> allowed = kernelSplitValues("split_k", facts), chosen;
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
  for (Proposal &p : heuristicSchedulesOn(facts, profile))
    out.push_back(std::move(p));
  return out;
}
