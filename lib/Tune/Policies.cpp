//===- Policies.cpp - random, heuristic and evolutionary search ----------===//

#include "kforge/Tune/Policies.h"

#include "search/Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

using namespace kforge::tune;
using namespace kforge::tune::search;
using llvm::StringRef;

llvm::json::Value kforge::tune::toJSON(const HardwareProfile &p) {
  llvm::json::Object object{{"target", p.target},
                            {"name", p.name},
                            {"multiprocessors", p.multiprocessors},
                            {"max_threads_per_block", p.maxThreadsPerBlock},
                            {"threads_per_multiprocessor", p.threadsPerMultiprocessor},
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
         o.mapOptional("measured_by", p.ceilingsSource) && o.mapOptional("chip", p.chip) &&
         o.mapOptional("threads_per_multiprocessor", p.threadsPerMultiprocessor);
}

std::string kforge::tune::proposalHash(const Proposal &proposal) {
  if (proposal.script.empty())
    return scheduleHash(proposal.schedule);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef("script\n" + proposal.script));
  return llvm::toHex(digest, /*LowerCase=*/true);
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
static const Island kIslands[] = {
    {"aggressive", 0.5, 2, true}, {"balanced", 0.3, 1, false}, {"conservative", 0.1, 1, false}};

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
                                                   const HardwareProfile &profile, uint64_t seed, std::string &error) {
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
