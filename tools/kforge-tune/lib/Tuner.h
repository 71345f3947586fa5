//===- Tuner.h - kforge-tune's search, as a library ------------*- C++ -*-===//
//
// The loop: the policy proposes schedules; each is rendered to a transform library and compiled by
// kforge-compile in a child process (in parallel, one per core, each with its own MLIR context and limits);
// the ones that compile are verified and timed by kforge-run one at a time (one GPU); every outcome is
// scored and appended to the database. See docs/tune.md.
//
// The library's parts: Evaluate.h (one proposal: compile, run, record), RunDirectory.h (the run's files:
// run.json, db.jsonl, resume, the best kernel's export, replay), Search.cpp (the loop). kforge-tune's main
// parses the command line into a TuneConfig and calls runTuner, tryScheduleFile or replayRun.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_TUNER_H
#define KFORGE_TUNE_TUNER_H

#include "kforge/Tune/Policies.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kforge::tune {

/// The programs the tuner drives.
struct Tools {
  std::string compile; ///< kforge-compile
  std::string run;     ///< kforge-run
  std::string runtime; ///< libkforge_mgpu.so (GPU target)
};

/// Weights of a trial's score: compiles * `compiles` + correct * `correct` + `speedup` * ln(previous best
/// time / this time) (the last term only for a correct kernel).
struct ScoreWeights {
  double compiles = 0.1, correct = 0.3, speedup = 1.0;
};

/// What a run gives the LLM policy (--policy llm or llm+evolve) when it starts.
struct LLMPolicyContext {
  std::string payloadText;
  std::string transcriptPath; ///< RUN/llm-transcript.jsonl
  bool hybrid = false;        ///< llm+evolve
  std::function<void(const std::string &)> note; ///< Tells the user (stderr), unless --quiet.
  /// Applies a proposed transform script without lowering it: "" if it applies, else the diagnostics.
  std::function<std::string(const std::string &)> checkScript;
};

/// Makes the LLM policy. The tool supplies it (the LLM client and its options live outside this library);
/// a kforge-tune built without the LLM client leaves it empty.
using LLMPolicyFactory = std::function<std::unique_ptr<Policy>(const LLMPolicyContext &context,
                                                               const PayloadFacts &facts,
                                                               const HardwareProfile &profile, uint64_t seed)>;

struct TuneConfig {
  std::string payloadPath;
  std::string runDir;
  std::string target; ///< gpu or cpu (resolved before the tuner starts)
  std::string chip = "sm_90";
  std::string entry;
  std::string policy = "heuristic+evolve";
  uint64_t seed = 1;
  int trials = 64;           ///< Candidate trials (the baseline is not one).
  double timeBudget = 0;     ///< Seconds; 0: none.
  int earlyStop = 0;         ///< Stop after this many trials without a better kernel; 0: never.
  int jobs = 0;              ///< Parallel compiles; 0: all cores.
  int seeds = 5, reps = 20;  ///< Verification seeds and timing repetitions (kforge-run).
  bool seedsGiven = false;   ///< --seeds was on the command line (largeProblemSeeds leaves it alone).
  int compileTimeout = 120, runTimeout = 300, memoryLimitMB = 8192;
  double cutoffFactor = 20;  ///< A candidate's run slower than this x the baseline (+100 ms): "too-slow".
  double cutoffBestFactor = 4; ///< ... or slower than this x the best so far (+100 ms); 0: off.
  double timingBudgetMs = 1000; ///< A trial's timed repetitions stop near this (at least 10 of them); 0: off.
  /// A baseline whose first run takes longer than this is timed with the runner's fewest repetitions (10, one
  /// warm-up): its exact time matters less than the search's first trials.
  double slowBaselineMs = 25;
  /// The baseline's one request to the long-lived runner (measureBaseline): the runner times a candidate whose
  /// verification runs took longer than this with its fewest repetitions (kforge-run's slow_run_ms); -1: off.
  /// Set only on the copy of the configuration that request is made with.
  double slowRunMs = -1;
  /// GPU: the naive reference is checked once against the CPU build of the payload when the problem is at most
  /// this many GFLOP and GB (the CPU build runs untransformed loops at ~0.3-1 GFLOP/s); 0 turns the check off.
  double referenceCheckMaxGflop = 2, referenceCheckMaxGB = 2;
  /// Where the CPU build cannot check the reference (a larger problem, or the CPU target, whose reference is
  /// the CPU build): this many output elements computed in float64 on the host from the payload's IR
  /// (kforge-compile --sample-outputs), within `referenceSampleSeconds`; 0 turns that check off.
  int referenceSamples = 512;
  double referenceSampleSeconds = 20;
  /// GPU trials: how kforge-run's flush before each timed repetition leaves L2, "dirty" (a write, MEASURE.md's
  /// protocol) or "clean" (a read); recorded in run.json, and a resumed run must use the same.
  std::string l2Flush = "dirty";
  /// --allow-tf32: fp32 contractions may multiply in TF32 on the tensor cores (the tf32 action; kforge-run
  /// --precision tf32 verifies with TF32's tolerance). Recorded in run.json's facts; a resumed run must match.
  bool allowTf32 = false;
  /// How trials are run: "serve" (one long-lived kforge-run --serve for the whole search) or "process" (a
  /// kforge-run per candidate, each in a child process of its own).
  std::string runner = "serve";
  bool resume = false;
  /// false (--no-search): set up (baseline, reference check) and finish (export the best, the report, drop the
  /// compiled files of every candidate but the best) without proposing a trial; kforge.distributed's set-up and end.
  bool search = true;
  bool keepCandidates = false;
  bool useCache = true;      ///< Reuse compiled artifacts from RUN/cache (keyed by payload, schedule, versions, chip).
  bool quiet = false;
  bool json = false;
  ScoreWeights weights;
  HardwareProfile profile;
  LLMPolicyFactory llmPolicy; ///< --policy llm / llm+evolve; empty: built without the LLM client.
};

/// The run time above which a candidate is recorded "too-slow" without full verification and timing: it cannot
/// become the best. Far slower than the untransformed payload (baselineFactor x baseline), or than the best kernel
/// found so far (bestFactor x best), plus `slackMs` for what a run costs beside its kernel (launch, copies, host
/// work; runSlackMs). 0 turns a bound off; returns 0 when both are off.
inline double tooSlowCutoffMs(double baselineFactor, double baselineMs, double bestFactor, double bestMs,
                              double slackMs = 100) {
  double cutoff = baselineFactor > 0 ? baselineFactor * baselineMs + slackMs : 0;
  if (bestFactor > 0 && bestMs > 0) {
    double fromBest = bestFactor * bestMs + slackMs;
    cutoff = cutoff > 0 ? std::min(cutoff, fromBest) : fromBest;
  }
  return cutoff;
}

/// The slack of the too-slow cutoff: what a verification run costs beside its kernel, as the baseline's first run
/// measured it (its wall time less the baseline's kernel time: the copies of every argument in and out, the
/// launch, the module load), and at least 100 ms (on the H200 a 0.04 ms softmax kernel's run, the fastest after
/// the first, took 21-29 ms; with 20 ms of slack nearly every softmax candidate was cut,
/// results/search-h200/study-5-discarded). A fixed slack alone cut every row kernel of a 65536 x 2048 softmax:
/// its 1 GB of arguments made each run 166 ms beside a 2.3 ms baseline kernel (results/models-h200/call-4).
/// `baselineFirstRunMs` 0 (a record from before it was kept): 100 ms.
inline double runSlackMs(double baselineFirstRunMs, double baselineMs) {
  return std::max(100.0, baselineFirstRunMs - baselineMs);
}

/// The seconds one trial's run may take before the runner is killed. A run that keeps within the too-slow
/// cutoff launches the kernel about seeds + reps (+ warm-up) times, so a generous multiple of that plus a fixed
/// allowance for the runner's host work bounds it: a kernel whose first launch takes minutes (a random schedule
/// with one thread per block) costs that bound, not the full --run-timeout. A time budget bounds it too, so the
/// search stops near its budget. Never above `runTimeout`; 0 for `cutoffMs` or `budgetLeft` means no such bound.
inline int trialRunTimeoutSeconds(int runTimeout, double cutoffMs, int seeds, int reps, double budgetLeft) {
  double limit = runTimeout;
  if (cutoffMs > 0)
    limit = std::min(limit, 30 + 2 * (seeds + reps + 5) * cutoffMs / 1000);
  if (budgetLeft > 0)
    limit = std::min(limit, budgetLeft + 5);
  return std::max(1, static_cast<int>(std::ceil(limit)));
}

/// The payload's facts, from `kforge-compile --facts-json` (kforge-tune itself links no MLIR).
std::optional<PayloadFacts> loadFacts(const Tools &tools, llvm::StringRef payloadPath, llvm::StringRef entry);

/// Runs (or resumes) a tuning run. Returns the process exit code; prints progress and the summary.
int runTuner(const TuneConfig &config, const Tools &tools);

/// Rebuilds the best kernel of a finished run from its database (no search) into RUN/best, exports
/// RUN/best.mlir, and verifies the kernel against the run's baseline.
int replayRun(const std::string &runDir, const Tools &tools, bool quiet, bool verify = true);

/// The run's policy (`config.policy`, the LLM one through `config.llmPolicy`); null with `error` set when it
/// cannot be made.
std::unique_ptr<Policy> makePolicy(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts,
                                   std::string &error);

/// Evaluates one given schedule (a JSON file) in a run directory, as a trial of policy "user".
int tryScheduleFile(const TuneConfig &config, const Tools &tools, const std::string &schedulePath);

} // namespace kforge::tune

#endif // KFORGE_TUNE_TUNER_H
