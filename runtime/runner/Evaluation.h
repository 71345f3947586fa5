//===- Evaluation.h - one evaluation of the judge (internal to kforge-run) -*- C++ -*-===//
//
// The judge's evaluation of one candidate against one reference: Verify.cpp has staging, loading and the
// verification over seeds; VerifyTiming.cpp the timed phases checked against the judge's own clock.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_EVALUATION_H
#define KFORGE_RUNNER_EVALUATION_H

#include "DType.h"
#include "Judge.h"
#include "Metrics.h"
#include "Runner.h"
#include "SeedCache.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

using json = nlohmann::json;

/// Normal random inputs for `seed` (outputs left empty), rounded to the candidate's element types; the same
/// values however many threads draw them (Verify.cpp).
std::vector<std::vector<float>> makeInputs(const std::vector<ManifestArgument> &args,
                                           const std::vector<DType> &types, int seed);
/// The same, into `inputs`, whose vectors keep their memory where they already have the right size.
void makeInputs(const std::vector<ManifestArgument> &args, const std::vector<DType> &types, int seed,
                std::vector<std::vector<float>> &inputs);

/// Timings no GPU or CPU of today can reach: a report below them is forged or broken. Deliberately far
/// above any hardware (HBM ~5 TB/s, dense tensor cores ~1-2 PFLOP/s on an H200): they catch the impossible,
/// never a fast honest kernel (docs/runner.md, "Who decides a verdict").
inline constexpr double kGpuFloorMs = 0.5e-3, kGpuBytesPerMs = 20e9, kGpuFlopsPerMs = 10e12;
inline constexpr double kCpuFloorMs = 5e-6, kCpuBytesPerMs = 200e9, kCpuFlopsPerMs = 100e9;
/// Wall time of a timed phase that neither the claimed calls nor the protocol's measured cost explain, and still
/// honest: on a loaded machine (2 cores, load 6) the wake-ups around a candidate's phase took up to ~10 ms more
/// than around the calibration's. It is also how much a forged timing can hide per phase (docs/runner.md).
inline constexpr double kSchedulingAllowanceMs = 15;

class Evaluation {
public:
  Evaluation(const RunnerOptions &options, Workers &workers)
      : options(options), workers(workers),
        deadline(std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout)),
        report({{"candidate", options.candidate}, {"reference", options.reference}}) {}

  /// The report's text.
  std::string run();

private:
  enum class SeedEnd { Verified, TooSlow, Failed };

  std::string fail(const std::string &why) {
    report["status"] = "failed";
    report["reason"] = why;
    return report.dump();
  }
  /// Reads and checks both manifests, picks the tolerance, starts the candidate's executor and loads the
  /// candidate; checks the reference against --check-reference-against. Empty, or why the evaluation failed.
  std::string load();
  std::string checkManifests();
  /// Starts `executor` if it is not running (with the plan and limits of this judge).
  std::string ensureStarted(ExecutorProcess &executor);
  /// The reference executor, with the reference loaded. Empty, or why not.
  std::string ensureReference();
  /// Stages the artifact and has `executor` load it into `slot`.
  std::string loadInto(ExecutorProcess &executor, const Manifest &manifest, const std::string &name,
                       const std::string &slot);
  /// Sends a command; an executor that ends or answers an error becomes `error`.
  std::optional<json> call(ExecutorProcess &executor, const json &command, const std::string &what,
                           std::string &error);
  /// Runs `slot` of `executor` on `inputs` (copied into its shared memory); its outputs in `outputs`.
  std::string runOn(ExecutorProcess &executor, const std::string &slot, const std::vector<std::vector<float>> &inputs,
                    std::vector<std::vector<float>> &outputs);
  std::string checkReference();
  /// Fills the outputs' shared memory with NaN before a run: an executor that does not write them back
  /// leaves NaN (unwritten), never the values of an earlier run.
  void poisonOutputs(ExecutorProcess &executor) {
    for (size_t i : outputIndices)
      std::fill(executor.argument(i), executor.argument(i) + layout.counts[i], std::numeric_limits<float>::quiet_NaN());
  }
  void layOutSeeds();
  SeedEnd verifySeed(int seed, const SeedCache &cache, std::string &error);
  bool tooSlow(int seed, double runMs);
  void compareOutputs(int seed, const std::vector<std::vector<float>> &actual,
                      const std::vector<std::vector<float>> &expected);
  /// One timed phase of `executor`: its wall time on the judge's clock, and the timing the judge computes from
  /// the samples the executor claims, checked (finite, above the physical floor, not longer than the phase).
  std::string timePhase(ExecutorProcess &executor, const json &command, const std::string &what, json &timing,
                        double &wallMs, double &claimedMs);
  /// The timing protocol's own cost for reps + warmup calls now, measured by the reference's executor.
  std::string timingOverhead(int reps, int warmup, double &overheadMs);
  /// timePhase, with the claimed calls required to account for the phase's wall time less the protocol's cost.
  std::string timeChecked(ExecutorProcess &executor, json command, const std::string &what, json &timing);
  std::string timeCandidate();

  const RunnerOptions &options;
  Workers &workers;
  Deadline deadline;
  json report;
  Manifest candidate, reference;
  std::vector<DType> types;
  ArgumentLayout layout;
  bool gpu = false;
  /// The candidate is the reference's own artifact (the same directory and name): a baseline's run.
  bool candidateIsReference = false;
  double tolerance = 0;
  std::string cacheKey;
  std::vector<size_t> inputIndices, outputIndices, sizes;
  std::string overall = "correct";
  double lastRunMs = 0;
  double fastestLaterMs = std::numeric_limits<double>::infinity();
  /// The fastest verification run on the judge's clock (after the first, when there are several seeds).
  double fastestRunWallMs = std::numeric_limits<double>::infinity();
  int candidateKernels[2] = {0, 0};
  /// One seed's inputs, the candidate's outputs and the reference's, kept from seed to seed (verifySeed).
  std::vector<std::vector<float>> seedInputs, seedActual, seedExpected;
};

} // namespace kforge

#endif // KFORGE_RUNNER_EVALUATION_H
