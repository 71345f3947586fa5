//===- Evaluation.h - one evaluation of the judge (internal to kforge-run) -*- C++ -*-===//
//
// The judge's evaluation of one candidate against one reference: Verify.cpp has staging, loading and the
// verification over seeds; VerifyInputs.cpp the inputs (drawn here or made on the device); VerifyTiming.cpp
// the timed phases checked against the judge's own clock.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_EVALUATION_H
#define KFORGE_RUNNER_EVALUATION_H

#include "DType.h"
#include "DeviceInputs.h"
#include "Judge.h"
#include "Metrics.h"
#include "Parallel.h"
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

/// Inputs are drawn on the host in blocks of this many elements, a block per task (Verify.cpp).
inline constexpr size_t kInputBlock = size_t(1) << 20;
/// The values input argument `argument` takes for `seed` (Random.h; its manifest's domain: normal, positive,
/// or indices below a bound): what the host draws and what a GPU executor makes on the device.
DeviceInputSpec inputSpec(const ManifestArgument &arg, int seed, size_t argument);
/// Elements [first, first + count) of input argument `argument` for `seed`, exactly as makeInputs draws them
/// (any range: each element is a function of its index; kforge-compile --sample-outputs draws only the blocks
/// of kInputBlock it reads).
void drawInputBlock(const ManifestArgument &arg, DType type, int seed, size_t argument, size_t first,
                    size_t count, float *out);
/// Normal random inputs for `seed` (outputs left empty), rounded to the candidate's element types; the same
/// values however many threads draw them (Verify.cpp).
std::vector<Floats> makeInputs(const std::vector<ManifestArgument> &args, const std::vector<DType> &types, int seed);
/// The same, into `inputs`, whose vectors keep their memory where they already have the right size.
/// Arguments with `skip[i]` (made on the device instead) are left as they are.
void makeInputs(const std::vector<ManifestArgument> &args, const std::vector<DType> &types, int seed,
                std::vector<Floats> &inputs, const std::vector<bool> &skip = {});

/// Pointers to each vector's values (null for an empty one).
inline std::vector<const float *> pointersTo(const std::vector<Floats> &values) {
  std::vector<const float *> data;
  for (const Floats &v : values)
    data.push_back(v.empty() ? nullptr : v.data());
  return data;
}

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
    report["phases_ms"] = phases.toJson();
    return report.dump();
  }
  /// Reads and checks both manifests, picks the tolerance, starts the candidate's executor and loads the
  /// candidate; checks the reference against --check-reference-against. Empty, or why the evaluation failed.
  std::string load();
  /// load's part that runs nothing: the manifests, the tolerance, the seeds' layout, the reference samples.
  std::string prepare();
  /// A "reference_check_only" request: the reference's seed-0 outputs this runner holds, checked against the
  /// reference samples (ReferenceSamples.cpp). The report's text, or nothing when no outputs are held (the
  /// request then runs as any other).
  std::optional<std::string> checkHeldReference();
  std::string checkManifests();
  /// Starts `executor` if it is not running (with the plan and limits of this judge).
  std::string ensureStarted(ExecutorProcess &executor);
  /// The reference executor, with the reference loaded. Empty, or why not.
  std::string ensureReference();
  /// Stages the artifact and has `executor` load it into `slot`.
  std::string loadInto(ExecutorProcess &executor, const Manifest &manifest, const std::string &name,
                       const std::string &slot);
  /// Sends a command; an executor that ends or answers an error becomes `error`.
  std::optional<json> call(ExecutorProcess &executor, const json &command, const std::string &what, std::string &error,
                           Deadline until = Deadline::max());
  /// Runs `slot` of `executor` on `inputs` (one pointer per argument, copied into its shared memory; with a
  /// `seed`, the device inputs made by the executor for it instead); its outputs in `outputs`.
  std::string runOn(ExecutorProcess &executor, const std::string &slot, const std::vector<const float *> &inputs,
                    std::vector<Floats> &outputs, int seed = -1);
  /// The run command for `slot`; with a `seed` (not -1), asking for the device inputs of that seed.
  json runCommand(const std::string &slot, int seed) const;
  /// After an executor said it cannot make inputs on the device (`error` holds kDeviceInputsUnavailable):
  /// every input drawn by the judge from now on, for the rest of the session too when the reference's
  /// executor said so. False for any other error.
  bool fallBackToHostInputs(const std::string &error, bool fromReference);
  /// The executor's report of the inputs it made on the device for `seed`, checked against Random.h's values.
  /// Empty, or the disagreement.
  std::string checkDeviceInputs(const json &reply, int seed) const;
  /// Copies `inputs` (one pointer per argument) into `executor`'s shared memory and poisons its outputs.
  void fillArguments(ExecutorProcess &executor, const std::vector<const float *> &inputs);
  std::string checkReference();
  /// Reads --check-reference-samples into `referenceSamples` (ReferenceSamples.cpp). Empty, or why not.
  std::string readReferenceSamples();
  /// Seed 0's reference outputs (`expected`, one pointer per argument) at the samples' positions, judged
  /// against the samples' values; the outcome goes to the report's "reference_check". Empty, or the
  /// disagreement.
  std::string checkReferenceSamples(const std::vector<const float *> &expected);
  /// Fills the outputs' shared memory with NaN before a run: an executor that does not write them back
  /// leaves NaN (unwritten), never the values of an earlier run.
  void poisonOutputs(ExecutorProcess &executor) {
    for (size_t i : outputIndices)
      fillFloats(executor.argument(i), layout.counts[i], std::numeric_limits<float>::quiet_NaN());
  }
  void layOutSeeds();
  SeedEnd verifySeed(int seed, const SeedCache &cache, std::string &error);
  bool tooSlow(int seed, double runMs);
  /// How long a candidate's run on `seed` may take before it is far over the cutoff (tooSlow's 10 x, with the
  /// first run's allowance on seed 0 of several): the run is then stopped. Infinite without a cutoff.
  double runLimitMs(int seed) const;
  /// `actual` and `expected`: one pointer per argument (outputs only used).
  /// The reference's summaries are kept in `cache` across requests.
  void compareOutputs(int seed, const std::vector<const float *> &actual, const std::vector<const float *> &expected,
                      const SeedCache &cache);
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
  bool prepared = false; ///< prepare() ran (successfully: a failure ends the evaluation).
  double tolerance = 0;
  std::string cacheKey;
  std::vector<size_t> inputIndices, outputIndices, sizes;
  /// Inputs each GPU executor makes on the device for a seed (DeviceInputs.h), and those drawn here and copied.
  std::vector<size_t> deviceInputIndices, hostInputIndices;
  std::vector<bool> deviceInput; ///< Per argument: made on the device.
  std::string overall = "correct";
  double lastRunMs = 0;
  double fastestLaterMs = std::numeric_limits<double>::infinity();
  /// The fastest verification run on the judge's clock (after the first, when there are several seeds).
  double fastestRunWallMs = std::numeric_limits<double>::infinity();
  int candidateKernels[2] = {0, 0};
  /// One seed's inputs, the candidate's outputs and the reference's, kept from seed to seed (verifySeed) where
  /// the seed cache does not hold them in memory.
  std::vector<Floats> seedInputs, seedActual, seedExpected;
  /// Output elements computed independently (--check-reference-samples), per output argument.
  struct ReferenceSamples {
    size_t argument;
    std::vector<int64_t> positions;
    std::vector<float> values;
  };
  std::vector<ReferenceSamples> referenceSamples;
  /// Where the judge's time went, in ms (the report's "phases_ms"): what a search on a multi-GB problem needs
  /// to know to tell the host's copies from the GPU's work.
  struct Phases {
    double load = 0, inputs = 0, copies = 0, candidate = 0, reference = 0, compare = 0, timing = 0;
    json toJson() const {
      return {{"load", load},
              {"inputs", inputs},
              {"copies", copies},
              {"candidate_runs", candidate},
              {"reference_runs", reference},
              {"compare", compare},
              {"timing", timing}};
    }
  } phases;
};

} // namespace kforge

#endif // KFORGE_RUNNER_EVALUATION_H
