//===- Verify.cpp - an evaluation: verification over seeds, then timing ---===//

#include "Runner.h"

#include "Isolation.h"
#include "LoadedArtifact.h"
#include "Metrics.h"
#include "SeedCache.h"
#include "Timing.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <limits>
#include <random>
#include <thread>

using namespace kforge;
using json = nlohmann::json;

/// Normal random inputs for `seed` (outputs left empty), rounded to the candidate's element types. Each
/// block of kInputBlock elements has its own generator, seeded from (seed, argument, block), so the values do
/// not depend on how many threads draw them; the blocks are drawn on all cores (a 16384^2 matrix took ~10 s
/// per seed on one).
static constexpr size_t kInputBlock = size_t(1) << 20;

static std::vector<std::vector<float>> makeInputs(const LoadedArtifact &candidate, int seed) {
  const auto &cArgs = candidate.manifest.arguments;
  std::vector<std::vector<float>> inputs(cArgs.size());
  std::vector<std::pair<size_t, size_t>> blocks; // (argument, first element)
  for (size_t i = 0; i < cArgs.size(); ++i) {
    if (cArgs[i].isOutput)
      continue;
    inputs[i].resize(cArgs[i].numElements());
    for (size_t first = 0; first < inputs[i].size(); first += kInputBlock)
      blocks.push_back({i, first});
  }
  auto draw = [&](size_t b) {
    auto [i, first] = blocks[b];
    std::seed_seq sequence{static_cast<uint64_t>(seed), static_cast<uint64_t>(i), static_cast<uint64_t>(first)};
    std::mt19937_64 generator(sequence);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    size_t last = std::min(inputs[i].size(), first + kInputBlock);
    for (size_t e = first; e < last; ++e)
      inputs[i][e] = roundTo(candidate.types[i], normal(generator));
  };
  size_t workers = std::min<size_t>(blocks.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w)
    threads.emplace_back([&] {
      for (size_t b; (b = next++) < blocks.size();)
        draw(b);
    });
  for (size_t b; (b = next++) < blocks.size();)
    draw(b);
  for (std::thread &t : threads)
    t.join();
  return inputs;
}

/// Runs the reference and an independent computation of the same payload on the inputs of seed 0 and
/// compares them, so that a bug shared by candidate and reference cannot pass unnoticed.
static json checkReference(LoadedArtifact &candidate, LoadedArtifact &reference, LoadedArtifact &independent,
                           double tolerance, std::string &error) {
  std::vector<std::vector<float>> inputs = makeInputs(candidate, 0);
  if ((error = prepare(reference, inputs)).size() || (error = runOnce(reference)).size())
    return {};
  if ((error = prepare(independent, inputs)).size() || (error = runOnce(independent)).size())
    return {};
  json result = {{"independent", independent.manifest.directory}, {"status", "correct"}};
  for (size_t i = 0; i < reference.host.size(); ++i) {
    if (!reference.manifest.arguments[i].isOutput)
      continue;
    Comparison c = compare(reference.host[i], independent.host[i]);
    std::string why, status = verdict(c, tolerance, why);
    result["rel_l2_error"] = c.relL2Error;
    result["max_abs_error"] = c.maxAbsError;
    if (status != "correct") {
      result["status"] = status;
      result["why"] = why;
    }
  }
  return result;
}

namespace {

/// One evaluation of a candidate against a reference, building its report.
class Evaluation {
public:
  explicit Evaluation(const RunnerOptions &options)
      : options(options), report({{"candidate", options.candidate}, {"reference", options.reference}}) {}

  /// The report's text.
  std::string run();

private:
  enum class SeedEnd { Verified, TooSlow, Failed };

  std::string fail(const std::string &why) {
    report["status"] = "failed";
    report["reason"] = why;
    return report.dump();
  }
  /// Loads both artifacts, checks that they take the same arguments, picks the tolerance and checks the
  /// reference against --check-reference-against. Empty, or why the evaluation failed.
  std::string load();
  /// The seed cache's key (the reference build, the arguments' shapes and types) and argument layout.
  void layOutSeeds();
  /// Runs the candidate (then, unless the seed cache has its outputs, the reference) on `seed`'s inputs and
  /// compares the outputs; stops early on a run over the too-slow cutoff.
  SeedEnd verifySeed(int seed, const SeedCache &cache, bool useDeviceSeeds, std::string &error);
  /// Whether the candidate's run of `seed` (`runMs`) makes it too slow; then the report says so.
  bool tooSlow(int seed, double runMs);
  /// Compares the candidate's outputs with `expected` into the report's "seeds".
  void compareOutputs(int seed, const std::vector<std::vector<float>> &expected);
  /// Times the candidate (and with --time-reference the reference). Empty, or why the evaluation failed.
  std::string timeCandidate();

  const RunnerOptions &options;
  json report;
  LoadedArtifact candidate, reference;
  double tolerance = 0;
  std::string cacheKey;
  std::vector<size_t> inputIndices, outputIndices, sizes;
  std::string overall = "correct";
  double lastRunMs = 0; // the candidate's last verification run, with its copies: an upper bound of a timed call
  double fastestLaterMs = std::numeric_limits<double>::infinity(); // its fastest run after the first
  int candidateKernels[2] = {0, 0}; // the runtime's kernel registry entries the candidate's first run added
};

} // namespace

std::string Evaluation::load() {
  if (auto e = loadArtifact(options.candidate, options.candidateName, options, candidate); !e.empty())
    return e;
  if (auto e = loadArtifact(options.reference, options.referenceName, options, reference); !e.empty())
    return e;
  const auto &cArgs = candidate.manifest.arguments, &rArgs = reference.manifest.arguments;
  bool same = cArgs.size() == rArgs.size();
  for (size_t i = 0; same && i < cArgs.size(); ++i)
    same = cArgs[i].shape == rArgs[i].shape && cArgs[i].isOutput == rArgs[i].isOutput;
  // The reference may compute in a wider type (e.g. an f32 reference for a bf16 task); inputs are rounded to
  // the candidate's type, so both see the same values.
  if (!same)
    return "candidate and reference do not take the same arguments";
  report["target"] = candidate.manifest.target;
  report["hash"] = candidate.manifest.hash;
  // By default the tolerance of the least precise output type (fp32 1e-4, fp16/bf16 1e-2).
  tolerance = options.tolerance;
  if (tolerance <= 0) {
    tolerance = 0;
    for (size_t i = 0; i < cArgs.size(); ++i)
      if (cArgs[i].isOutput)
        tolerance = std::max(tolerance, defaultTolerance(candidate.types[i]));
  }
  report["tolerance"] = tolerance;
  if (options.independent.empty())
    return "";
  LoadedArtifact independent;
  if (auto e = loadArtifact(options.independent, "kernel", options, independent); !e.empty())
    return e;
  std::string error;
  json check = checkReference(candidate, reference, independent, tolerance, error);
  if (!error.empty())
    return "checking the reference: " + error;
  report["reference_check"] = check;
  if (check["status"] == "incorrect")
    return "the reference disagrees with the independent computation: " + check["why"].get<std::string>();
  return "";
}

void Evaluation::layOutSeeds() {
  // The reference build, and the arguments' shapes and types, name the cached inputs and outputs ("inputs2":
  // the block-wise generation of makeInputs; files from the earlier scheme are not reused).
  const auto &cArgs = candidate.manifest.arguments;
  cacheKey = (reference.manifest.hash.empty() ? reference.manifest.directory : reference.manifest.hash) + "-inputs2";
  for (size_t i = 0; i < cArgs.size(); ++i) {
    cacheKey += "-" + cArgs[i].dtype;
    for (int64_t d : cArgs[i].shape)
      cacheKey += "x" + std::to_string(d);
    (cArgs[i].isOutput ? outputIndices : inputIndices).push_back(i);
    sizes.push_back(static_cast<size_t>(cArgs[i].numElements()));
  }
}

bool Evaluation::tooSlow(int seed, double firstMs) {
  // The cutoff looks at the runs after the first when there are several seeds (the first also loads the GPU
  // module), and at the fastest of them: a run can also pay one-time host costs (page faults on a first large
  // output buffer made the 0.2 ms kernel of an 8192^2 bf16 output take 200 ms on the H200). A run ten times
  // over the cutoff stops at once.
  // The first run of several is judged too, with a second of allowance for the module load and first
  // touches: a kernel whose launch takes seconds (one thread doing a block's work) stops there instead of
  // running once more.
  int cutoffSeed = options.seeds > 1 ? 1 : 0;
  if (seed >= cutoffSeed)
    fastestLaterMs = std::min(fastestLaterMs, firstMs);
  bool farOver = (seed == cutoffSeed && firstMs > 10 * options.cutoffMs) ||
                 (seed == 0 && cutoffSeed == 1 && firstMs > 10 * options.cutoffMs + options.firstRunAllowanceMs);
  bool over = seed == options.seeds - 1 && fastestLaterMs > options.cutoffMs;
  if (options.cutoffMs <= 0 || !(farOver || over))
    return false;
  // A search does not need to know how slow exactly: a run (with its launch and copies) says enough.
  double runMs = farOver ? firstMs : fastestLaterMs;
  report["status"] = "too-slow";
  report["reason"] = "a run took " + std::to_string(runMs) + " ms, more than the cutoff of " +
                     std::to_string(options.cutoffMs) + " ms; not verified or timed further";
  report["decided_at_seed"] = seed;
  report["run_ms"] = runMs;
  return true;
}

void Evaluation::compareOutputs(int seed, const std::vector<std::vector<float>> &expected) {
  const auto &cArgs = candidate.manifest.arguments;
  for (size_t i = 0; i < cArgs.size(); ++i) {
    if (!cArgs[i].isOutput)
      continue;
    Comparison c = compare(candidate.host[i], expected[i]);
    std::string why, status = verdict(c, tolerance, why);
    report["seeds"].push_back({{"seed", seed},
                               {"argument", i},
                               {"status", status},
                               {"why", why},
                               {"max_abs_error", c.maxAbsError},
                               {"max_rel_error", c.maxRelError},
                               {"rel_l2_error", c.relL2Error},
                               {"cosine", c.cosine},
                               {"non_finite", c.nonFinite},
                               {"unwritten", c.unwritten},
                               {"reference_max_abs", c.referenceMaxAbs}});
    if (status == "incorrect" || (status == "inconclusive" && overall == "correct"))
      overall = status;
    if (status != "correct" && !report.contains("reason"))
      report["reason"] = "seed " + std::to_string(seed) + ": " + why;
  }
}

Evaluation::SeedEnd Evaluation::verifySeed(int seed, const SeedCache &cache, bool useDeviceSeeds, std::string &error) {
  const auto &cArgs = candidate.manifest.arguments;
  std::string seedKey = useDeviceSeeds ? cacheKey + "/seed" + std::to_string(seed) : std::string();
  bool inputsOnDevice = useDeviceSeeds;
  for (size_t i : inputIndices)
    inputsOnDevice = inputsOnDevice && hasDeviceSeed(seedKey, i, cArgs[i].dtype);
  std::vector<std::vector<float>> inputs(cArgs.size());
  auto loadInputs = [&] {
    if (!cache.load(seed, "inputs", inputIndices, sizes, inputs)) {
      inputs = makeInputs(candidate, seed);
      cache.store(seed, "inputs", inputIndices, inputs);
    }
  };
  if (!inputsOnDevice)
    loadInputs();
  // The candidate first, then the reference, each on fresh buffers.
  if ((error = prepare(candidate, inputs, seedKey)).size())
    return SeedEnd::Failed;
  int before = kernelCount();
  auto started = std::chrono::steady_clock::now();
  if (auto e = runOnce(candidate); !e.empty()) {
    error = "candidate: " + e;
    return SeedEnd::Failed;
  }
  double firstMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  lastRunMs = firstMs;
  // Each verification run's wall time (launch, copies, host work): what calibrates the too-slow cutoff.
  report["verification_runs_ms"].push_back(firstMs);
  if (tooSlow(seed, firstMs))
    return SeedEnd::TooSlow;
  if (seed == 0) {
    candidateKernels[0] = before;
    candidateKernels[1] = kernelCount();
  }
  std::vector<std::vector<float>> expected(cArgs.size());
  if (!cache.load(seed, "outputs", outputIndices, sizes, expected)) {
    if (inputsOnDevice)
      loadInputs(); // the reference runs from host inputs
    if ((error = prepare(reference, inputs)).size())
      return SeedEnd::Failed;
    if (auto e = runOnce(reference); !e.empty()) {
      error = "reference: " + e;
      return SeedEnd::Failed;
    }
    expected = reference.host;
    cache.store(seed, "outputs", outputIndices, expected);
  }
  compareOutputs(seed, expected);
  return SeedEnd::Verified;
}

std::string Evaluation::timeCandidate() {
  std::string error;
  RunnerOptions timed = options;
  if (options.timingBudgetMs > 0 && lastRunMs > 0)
    timed.reps =
        std::clamp(static_cast<int>(options.timingBudgetMs / lastRunMs), std::min(10, options.reps), options.reps);
  json t = timeArtifact(candidate, timed, error);
  if (!error.empty())
    return "timing: " + error;
  report["timing"] = t;
  if (!options.timeReference)
    return "";
  json r = timeArtifact(reference, options, error);
  if (!error.empty())
    return "timing the reference: " + error;
  double speedup = r["median_ms"].get<double>() / t["median_ms"].get<double>();
  report["reference_timing"] = r;
  report["speedup_over_reference"] = speedup;
  if (speedup > 10)
    report["flags"].push_back("speed-up above 10x over the reference: check the measurement before trusting");
  return "";
}

std::string Evaluation::run() {
  if (std::string error = load(); !error.empty())
    return fail(error);
  layOutSeeds();
  SeedCache cache(reference.manifest.hash.empty() ? std::string() : options.cacheDir, cacheKey,
                  /*inMemory=*/options.serve && !reference.manifest.hash.empty());
  if (cache.enabled())
    report["seed_cache"] = options.cacheDir;
  // A long-lived runner keeps each seed's inputs on the device (see prepare) when the seed cache knows the
  // reference's outputs: a candidate's inputs are then copied on the device and never touch the host.
  bool useDeviceSeeds = options.serve && candidate.gpu && cache.enabled() && enableDeviceSeeds();
  for (int seed = 0; seed < options.seeds; ++seed) {
    std::string error;
    SeedEnd end = verifySeed(seed, cache, useDeviceSeeds, error);
    if (end == SeedEnd::Failed)
      return fail(error);
    if (end == SeedEnd::TooSlow)
      return report.dump();
  }
  report["status"] = overall;
  if (options.reps > 0)
    if (std::string error = timeCandidate(); !error.empty())
      return fail(error);
  if (candidate.gpu)
    report["resources"] = kernelResources(candidateKernels[0], candidateKernels[1]);
  return report.dump();
}

std::string kforge::evaluate(const RunnerOptions &options) { return Evaluation(options).run(); }

int kforge::evaluateIsolated(const RunnerOptions &options) {
  // Only CPU work gets an address-space limit: CUDA reserves far more virtual memory than it uses.
  Manifest probe;
  bool cpuOnly = readManifest(options.candidate, options.candidateName, probe).empty() && probe.target == "cpu";
  Manifest probeRef;
  cpuOnly =
      cpuOnly && readManifest(options.reference, options.referenceName, probeRef).empty() && probeRef.target == "cpu";
  size_t memoryLimit = cpuOnly ? static_cast<size_t>(options.memoryLimitMB) << 20 : 0;

  ChildOutcome outcome = runIsolated([&] { return evaluate(options); }, options.timeout, memoryLimit);
  json report = json::parse(outcome.output, nullptr, /*allow_exceptions=*/false);
  if (outcome.status != "ok" || report.is_discarded()) {
    std::string reason = outcome.status == "ok" ? "the evaluation returned no report" : outcome.reason;
    // The runtime aborts after naming the failed CUDA call and its error: that is the reason to report.
    size_t at = outcome.errors.rfind("kforge runtime: ");
    if (at != std::string::npos) {
      std::string line = outcome.errors.substr(at + 16);
      reason = line.substr(0, line.find('\n')) + " (" + reason + ")";
    }
    report = {
        {"candidate", options.candidate}, {"reference", options.reference}, {"status", "failed"}, {"reason", reason}};
    if (!outcome.errors.empty())
      report["stderr"] = outcome.errors;
  }
  std::string text = report.dump(2);
  if (!options.output.empty() && !writeReportFile(options.output, text)) {
    std::cerr << "kforge-run: error: cannot write " << options.output << "\n";
    return 2;
  }
  std::cout << text << std::endl;
  return report["status"] == "correct" ? 0 : 1;
}
