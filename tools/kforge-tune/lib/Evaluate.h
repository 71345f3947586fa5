//===- Evaluate.h - one proposal: compile, run, record ----------*- C++ -*-===//
//
// A candidate is compiled by kforge-compile in a child process (the search compiles a batch in parallel),
// then verified and timed against the baseline by kforge-run (a long-lived `kforge-run --serve`, or a process
// per trial), and its outcome becomes its database record. The baseline itself is measured the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_EVALUATE_H
#define KFORGE_TUNE_EVALUATE_H

#include "Record.h"
#include "RunnerServer.h"
#include "Tuner.h"

#include "llvm/Support/JSON.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kforge::tune {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// One schedule on its way through the compiler: where its files go, and how its compile went.
struct Candidate {
  int id = 0;
  Proposal proposal;
  std::string dir, recipePath;
  std::vector<int> actionLines; ///< The rendered library's line of each action (for tracing errors back).
  // Compile outcome.
  bool compiled = false;
  std::string stage, compileStatus, message;
  llvm::json::Array diagnostics;
  int faultyAction = -1;
  double compileSeconds = 0;
  double compiledAtSeconds = 0; ///< When its compile ended, in seconds from kforge-tune's start.
};

/// What kforge-run said about one candidate.
struct RunOutcome {
  std::string status; ///< correct, incorrect, inconclusive, too-slow, failed
  double medianMs = 0;
  std::string reason;
  llvm::json::Value report = nullptr;
  double seconds = 0;
};

/// kforge-compile for one candidate (recipe empty: the untransformed payload; `naive`: the GPU reference).
void compileCandidate(const TuneConfig &config, const Tools &tools, Candidate &c, bool naive);

/// Applies a transform library to the payload without lowering it (kforge-compile --schedule-only): ""
/// when it parses, passes the handle checks, applies and verifies, else the errors as text.
std::string checkScript(const TuneConfig &config, const Tools &tools, const std::string &script);

/// kforge-run in a child process of its own: `candidateDir` verified against `referenceDir` on `seeds` seeds,
/// timed `reps` times; a run over `cutoffMs` (0: none) is recorded too-slow.
RunOutcome runCandidate(const TuneConfig &config, const Tools &tools, llvm::StringRef candidateDir,
                        llvm::StringRef referenceDir, int seeds, int reps, double cutoffMs = 0,
                        llvm::ArrayRef<std::string> extraArgs = {}, llvm::StringRef outputName = "run.json");

/// The check of a run's reference (the baseline every candidate is verified against) against a computation
/// that shares none of its kforge lowering, done once per payload and kept in run.json ("reference_check").
struct ReferenceCheck {
  /// "" (to be run), "agrees", "disagrees", "inconclusive" (the comparison proves nothing: a constant output)
  /// or "skipped" (`reason` says why: no independent computation on the target, too large for it, or the
  /// check could not run).
  std::string status;
  std::string against; ///< The independent computation, in words; empty when there is none.
  /// How: "cpu-build" (the whole output of the CPU build) or "samples" (output elements in float64 on the
  /// host, kforge-compile --sample-outputs); empty when there is no check.
  std::string method;
  std::string reason;
  std::optional<double> relL2Error, maxAbsError;
  double seconds = 0; ///< The check's own time (compile of the independent build excluded).
  double prepareSeconds = 0; ///< Computing the independent values: the CPU build's compile, or the samples.

  llvm::json::Object toJSON() const;
  /// run.json's "reference_check", or nothing when it has none (a run from before the check).
  static std::optional<ReferenceCheck> fromJSON(const llvm::json::Value *value);
};

/// What the reference of this run can be checked against. On the GPU: the CPU build of the payload
/// (kforge-compile --target cpu: its own lowering, no GPU mapping), when the facts' flops and bytes are within
/// --reference-check-max-gflop / --reference-check-max-gb. Otherwise (and on the CPU target, whose reference
/// is the CPU build): --reference-samples output elements computed in float64 on the host. Status "" (run
/// it), or "skipped" with why.
ReferenceCheck planReferenceCheck(const TuneConfig &config, const PayloadFacts &facts);

/// For a "samples" check: kforge-compile --sample-outputs on the payload with the compiled baseline's manifest
/// (its argument order and input domains), into RUN/reference-check/samples.json. The result's `dir` is that
/// file, `compiled` whether it was written, `message` why not.
Candidate prepareReferenceSamples(const TuneConfig &config, const Tools &tools, llvm::StringRef baselineDir);

/// Arguments above this many bytes make a problem "large" for verification (largeProblemSeeds).
inline constexpr double kLargeProblemBytes = 2e9;
/// Seeds for a problem whose arguments take more than kLargeProblemBytes, unless --seeds was given: each seed
/// costs every candidate a full pass over its arguments (drawn, copied to the GPU and back, compared), which on
/// a 13 GB softmax is seconds per seed. On the GPU, where kforge-run makes the f32 inputs on the device, only
/// the outputs and the other inputs count. Three keep what the rule needs: a second seed catches a kernel that
/// replays an earlier run's outputs, and the too-slow cutoff reads the runs after the first. Lowers
/// `config.seeds` and returns the note kforge-tune prints, or returns "" and leaves it.
std::string largeProblemSeeds(TuneConfig &config, const PayloadFacts &facts);

/// Compiles the untransformed payload into RUN/baseline: the naive GPU mapping, or loops on the CPU.
Candidate compileBaseline(const TuneConfig &config, const Tools &tools);

/// Compiles the independent computation `planReferenceCheck` chose into RUN/reference-check.
Candidate compileIndependent(const TuneConfig &config, const Tools &tools);

class Evaluator;

/// The reference's seed-0 outputs, which `runner` (--runner serve) holds from the baseline's request, checked
/// against the sampled output elements `independent` (prepareReferenceSamples, computed while the baseline ran);
/// `check` holds the outcome (skipped when the samples could not be made); a disagreement is said on stderr.
void checkHeldReference(const TuneConfig &config, const Candidate &independent, ReferenceCheck &check,
                        Evaluator &runner);

/// One run of the compiled baseline in `baselineDir` on seed 0, without timing: it stores seed 0's reference
/// outputs in the seed cache and says how long a run takes ("verification_runs_ms"). When `check` is still to
/// be run (status "") and `independent` is given, the reference is checked against it on the way (kforge-run
/// --check-reference-against) and `check` holds the outcome; a disagreement is said on stderr.
RunOutcome firstBaselineRun(const TuneConfig &config, const Tools &tools, llvm::StringRef baselineDir,
                            const Candidate *independent, ReferenceCheck &check, Evaluator *runner = nullptr);

/// Measures the compiled baseline `baseline`, checking the reference against `independent` on the way when
/// `check` is to be run, and times it with the runner's fewest repetitions when its runs take more than
/// --slow-baseline-ms. With --runner serve and no CPU build to check against, that is one request to the
/// search's long-lived runner (every seed verified and kept for the trials, the sampled check, the timing);
/// otherwise one run on seed 0 first (firstBaselineRun), then the timing. The baseline's record, or nothing
/// after saying on stderr why not (`check` says "disagrees" when the reference failed its check).
std::optional<DatabaseRecord> measureBaseline(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts,
                                              const Candidate &baseline, const Candidate *independent,
                                              ReferenceCheck &check, Evaluator *runner = nullptr);

/// Measures compiled candidates against the run's baseline and scores them into records. With --runner
/// serve it owns the search's long-lived runner: started at the first trial, restarted after a crash.
class Evaluator {
public:
  Evaluator(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts);
  ~Evaluator();

  /// The record of candidate `c` (compiled or not) with id `c.id`. `baselineMs` and `bestMs` (the fastest
  /// kernel so far, the baseline included) set the too-slow cutoff and the score; `budgetLeft` (seconds, 0:
  /// no time budget) bounds the run's time limit; `parent` is the id of the record the proposal came from.
  DatabaseRecord evaluate(Candidate &c, double baselineMs, double bestMs, double budgetLeft,
                          std::optional<int64_t> parent);
  /// Takes the too-slow cutoff's slack from the baseline's record (runSlackMs): what one of its runs cost beside
  /// its kernel. Without it the slack is 100 ms.
  void setBaseline(const DatabaseRecord &baseline);
  /// One run of RUN/baseline against itself (`reps` 0: verification only; `warmup` -1: the runner's default),
  /// its report written to RUN/baseline/`outputName`. With --runner serve it goes through the search's
  /// long-lived runner (started here): a multi-GB problem's seed 0 is then drawn, and its reference run, once
  /// for the baseline and every trial, where separate kforge-runs drew it three times (seeds over 1 GiB get
  /// no cache files). Otherwise a kforge-run of its own. `referenceSamples`: a kforge-samples/1 file the
  /// reference's seed-0 outputs are checked against on the way (--check-reference-samples).
  RunOutcome runBaseline(const TuneConfig &runConfig, int seeds, int reps, int warmup, llvm::StringRef outputName,
                         llvm::StringRef referenceSamples = "");
  /// With --runner serve, after runBaseline verified seed 0: the reference's seed-0 outputs the runner holds,
  /// checked against `referenceSamples` (a kforge-samples/1 file) without running anything.
  RunOutcome checkHeldReference(const TuneConfig &runConfig, llvm::StringRef referenceSamples);

private:
  /// The search's long-lived runner, started at the first use.
  RunnerServer &runner();
  /// The record's fields every candidate has, before its outcome.
  DatabaseRecord candidateRecord(const Candidate &c, std::optional<int64_t> parent) const;
  /// Verifies and times `c` with `runConfig`'s limits.
  RunOutcome measure(const TuneConfig &runConfig, const Candidate &c, double cutoffMs);

  const TuneConfig &config;
  const Tools &tools;
  const PayloadFacts &facts;
  std::unique_ptr<RunnerServer> server;
  double cutoffSlackMs = 100;
};

} // namespace kforge::tune

#endif // KFORGE_TUNE_EVALUATE_H
