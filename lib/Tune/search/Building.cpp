//===- Building.cpp - the policies' building blocks ----------------- ===//
//
// Actions made in memory, the sizes a search draws from, the fusions a target requires, random draws.
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

const std::vector<int64_t> &searchSizes() {
  // The registry allows up to 4096 for long rows, which the heuristic proposes; drawn at random they are
  // rarely valid.
  static const std::vector<int64_t> sizes = [] {
    std::vector<int64_t> out;
    for (int64_t size : tileSizeDomain("block"))
      if (size > 0 && size <= 256)
        out.push_back(size);
    return out;
  }();
  return sizes;
}

const std::vector<int64_t> &kSteps() {
  static const std::vector<int64_t> steps = tileSizeDomain("reduction").vec();
  return steps;
}

std::vector<int64_t> dividing(int64_t extent, const std::vector<int64_t> &domain) {
  std::vector<int64_t> out;
  for (int64_t v : domain)
    if (v <= extent && extent % v == 0)
      out.push_back(v);
  return out;
}

/// Block tile sizes for a loop: the powers of two that divide it, and for an irregular loop also its divisors
/// from 8 to 256 that are multiples of 4 (whole 128-bit vectors per row) and the powers of two from 32 to 256
/// that leave a partial tile at its end (a prime loop has no other; the paths that mask a partial tile take
/// them, the validator refuses them elsewhere).
std::vector<int64_t> blockSizes(int64_t extent) {
  std::vector<int64_t> out = dividing(extent, searchSizes());
  if (irregularExtent(extent)) {
    for (int64_t v = 8; v <= std::min<int64_t>(256, extent); v += 4)
      if (extent % v == 0 && !llvm::is_contained(out, v))
        out.push_back(v);
    for (int64_t v = 32; v <= 256 && v < extent; v *= 2)
      if (!llvm::is_contained(out, v))
        out.push_back(v);
  }
  llvm::sort(out);
  return out;
}

bool coin(std::mt19937_64 &rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

Action tile(StringRef level, std::vector<int64_t> sizes) {
  Action a;
  a.kind = "tile";
  a.level = level.str();
  a.sizes = std::move(sizes);
  return a;
}
Action fuse(StringRef level) {
  Action a;
  a.kind = "fuse";
  a.level = level.str();
  return a;
}
Action unroll(int64_t factor) {
  Action a;
  a.kind = "unroll";
  a.value = factor;
  return a;
}
Action vectorize() {
  Action a;
  a.kind = "vectorize";
  return a;
}
Action recompute() {
  Action a;
  a.kind = "recompute";
  return a;
}
/// An action with one integer parameter (unroll, lanes, split, mma, stage, occupancy, max_registers) set to
/// `value`.
Action intAction(StringRef kind, int64_t value) {
  Action a;
  a.kind = kind.str();
  a.value = value;
  return a;
}
std::vector<int64_t> intValues(StringRef kind, const PayloadFacts &facts) {
  const ActionDefinition *definition = findDefinition(kind);
  return definition ? definition->searchValues(facts) : std::vector<int64_t>{};
}

void sortByPhase(Schedule &s) {
  std::stable_sort(s.begin(), s.end(),
                   [](const Action &a, const Action &b) { return actionPhase(a) < actionPhase(b); });
}

Action *slot(Schedule &s, StringRef kind, StringRef level) { return const_cast<Action *>(findSlot(s, kind, level)); }
const Action *slot(const Schedule &s, StringRef kind, StringRef level) { return findSlot(s, kind, level); }

void removeSlot(Schedule &s, StringRef kind, StringRef level) {
  llvm::erase_if(s, [&](const Action &a) { return a.kind == kind && a.level == level; });
}

/// mma computes the matmul itself: the SIMT actions on it go.
void dropSimtMatmulActions(Schedule &s) {
  removeSlot(s, "tile", "reduction");
  removeSlot(s, "unroll");
  removeSlot(s, "vectorize");
}

bool valid(const Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile) {
  return validateSchedule(s, facts, profile.target).empty();
}

bool gpu(const HardwareProfile &profile) { return profile.target == "gpu"; }

/// Adds the fusions the target requires (GPU: producers must follow every tiled level); `always`: on the CPU
/// too (the heuristic's choice: unfused producers run as plain loops).
void addRequiredFusions(Schedule &s, const PayloadFacts &facts, const HardwareProfile &profile, bool always) {
  if (facts.linalgOps < 2 || (!gpu(profile) && !always))
    return;
  if (slot(s, "tile", "block") && !slot(s, "fuse", "block"))
    s.push_back(fuse("block"));
  if (slot(s, "tile", "thread") && !slot(s, "fuse", "thread"))
    s.push_back(fuse("thread"));
  sortByPhase(s);
}

/// Lane counts for a row spread over several warps (one row per block), best guesses first. Measurements:
/// docs/perf/heuristic.md (addRequiredFusions).
std::vector<int64_t> blockLaneCounts(const PayloadFacts &facts) {
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

Schedule withSplit(const Action &split, Schedule contraction) {
  contraction.insert(contraction.begin(), split);
  return contraction;
}

std::vector<int64_t> randomSizes(const PayloadFacts &facts, const Schedule &s, bool thread, std::mt19937_64 &rng,
                                 const HardwareProfile &profile) {
  size_t rank = facts.parallelSizes.size();
  std::vector<int64_t> sizes(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = thread ? blockExtent(s, facts, d) : facts.parallelSizes[d];
    std::vector<int64_t> options = thread ? dividing(extent, searchSizes()) : blockSizes(extent);
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

/// split_k is worth proposing when the plain matmul's 64 x 64 tiles are too few blocks to fill the GPU twice;
/// split_rows when a row reduction's rows (a block each) are.
bool fewBlocks(const PayloadFacts &facts, const HardwareProfile &profile) {
  if (facts.parallelSizes.size() == 1 && facts.reductionSize > 0)
    return facts.parallelSizes[0] < 2 * std::max<int64_t>(profile.multiprocessors, 1);
  if (facts.parallelSizes.size() != 2)
    return false;
  int64_t blocks = (facts.parallelSizes[0] / 64) * (facts.parallelSizes[1] / 64);
  return blocks < 2 * std::max<int64_t>(profile.multiprocessors, 1);
}

} // namespace kforge::tune::search
