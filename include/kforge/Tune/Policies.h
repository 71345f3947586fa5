//===- Policies.h - kforge-tune's built-in search policies ------*- C++ -*-===//
//
// A policy proposes schedules; it never measures. It sees the history of the run (every schedule tried,
// its status and time) and the target's hardware profile, and returns new schedules, each valid for the
// payload (checked with the registry's validator) and not tried before. Policies are deterministic given
// the seed and the history, so a resumed run proposes what the uninterrupted one would have.
//
//   random     random valid schedules: the baseline a smarter policy must beat
//   heuristic  hardware-aware first guesses, built one action at a time, then ranked variants
//   evolve     islands (aggressive / balanced / conservative) of schedules: tournament selection, crossover
//              of the parents' action slots, parameter mutation, elitism and migration of the global best
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_POLICIES_H
#define KFORGE_TUNE_POLICIES_H

#include "kforge/Tune/Actions.h"

#include <memory>
#include <random>

namespace kforge::tune {

/// What the policies know about the target machine.
struct HardwareProfile {
  std::string target = "cpu"; ///< "gpu" or "cpu".
  std::string name;
  int multiprocessors = 1;     ///< GPU: streaming multiprocessors; CPU: cores.
  int maxThreadsPerBlock = 1024;
  /// GPU: threads resident on a multiprocessor at once (2048 on sm_70 to sm_90 but 1536 on sm_86 / sm_89).
  int threadsPerMultiprocessor = 2048;
  int64_t sharedBytesPerBlock = 48 * 1024;
  int64_t registersPerBlock = 64 * 1024;
  int64_t l2Bytes = 0;
  /// Measured ceilings (kforge-tune --ceilings), 0 when unknown: device copy bandwidth, fp32 matmul rate.
  double measuredCopyGBps = 0, measuredFp32Tflops = 0;
  std::string ceilingsSource; ///< Where the measured numbers come from.
  /// GPU: the architecture kernels are compiled for (sm_90 for the H200); empty when unknown.
  std::string chip;
};
llvm::json::Value toJSON(const HardwareProfile &profile);
bool fromJSON(const llvm::json::Value &value, HardwareProfile &profile, llvm::json::Path path);

/// One finished trial, as the policies see it.
struct TrialRecord {
  int id = 0;
  Schedule schedule;
  std::string hash;
  std::string status; ///< "correct" for a measured, verified kernel; anything else is a failure.
  double timeMs = 0;  ///< Median time; meaningful when status is correct.
  std::string island;
  std::string reason; ///< Why it failed (compiler or runner message), for policies that explain (the LLM's).
  std::string description; ///< The schedule in a line ("transform script" for a raw script).
  std::string policy;      ///< Who proposed it.
};

/// A schedule to try, with where it came from.
struct Proposal {
  Schedule schedule;
  std::string policy;     ///< The policy that proposed it.
  std::string island;     ///< evolve's sub-population; empty otherwise.
  std::string parentHash; ///< The schedule it was derived from, if any.
  std::string step;       ///< What was done to the parent: the action applied, mutated, or "crossover".
  std::string script;     ///< A whole transform library instead of actions (the LLM policy's escape hatch).
};

/// The hash a proposal is known by: its schedule's, or its script's.
std::string proposalHash(const Proposal &proposal);

class Policy {
public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  /// Up to `count` schedules not in `history`; fewer (maybe none) when the policy has nothing new.
  virtual std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int count) = 0;
};

/// "random", "heuristic", "evolve" or "heuristic+evolve" (heuristic's guesses first, then evolve).
std::unique_ptr<Policy> createPolicy(llvm::StringRef name, const PayloadFacts &facts, const HardwareProfile &profile,
                                     uint64_t seed, std::string &error);

/// A random valid schedule (empty if none was found in many attempts). Exposed for tests.
Schedule randomSchedule(const PayloadFacts &facts, const HardwareProfile &profile, std::mt19937_64 &rng);

/// One mutation of `parent` (changes one parameter, or adds or removes one action); `step` says which.
/// Returns `parent` unchanged if no valid mutation was found.
Schedule mutateSchedule(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                        std::mt19937_64 &rng, bool aggressive, std::string &step);

/// One parameter of `parent` moved to a neighbouring value (x2 or /2); the actions stay the same. Returns
/// `parent` unchanged (and `step` empty) if no valid move was found.
Schedule mutateParameters(const Schedule &parent, const PayloadFacts &facts, const HardwareProfile &profile,
                          std::mt19937_64 &rng, std::string &step);

/// Each action slot taken from one parent or the other; empty if no valid child was found.
Schedule crossoverSchedules(const Schedule &a, const Schedule &b, const PayloadFacts &facts,
                            const HardwareProfile &profile, std::mt19937_64 &rng);

/// Heuristic's ordered first guesses for this payload and machine.
std::vector<Proposal> heuristicSchedules(const PayloadFacts &facts, const HardwareProfile &profile);

} // namespace kforge::tune

#endif // KFORGE_TUNE_POLICIES_H
