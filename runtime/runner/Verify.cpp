//===- Verify.cpp - the judge's evaluation: verification over seeds, then timing ---===//
//
// The judge never runs artifact code (Executor.h): it stages the candidate and the reference, makes the
// inputs, has the candidate's executor run the candidate and a separate executor the reference, and compares
// the outputs itself. What an executor says (run times, timings, resources) is the candidate's claim: checked
// for plausibility, never able to turn an output comparison into "correct".
//
//===----------------------------------------------------------------------===//

#include "DeviceInputs.h"
#include "Evaluation.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <iostream>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

using namespace kforge;

//===----------------------------------------------------------------------===//
// Staging
//===----------------------------------------------------------------------===//

/// The largest library the judge stages (a GPU artifact with its fatbin is a few MB).
static constexpr size_t kMaxLibraryBytes = size_t(512) << 20;

/// Copies `from` (the `what`: a regular file of at most `maxBytes`; with `noFollow` not a symbolic link) to `to` (a new
/// file). Empty, or why not.
static std::string copyFile(const std::string &from, const std::string &what, const std::string &to, bool noFollow,
                            size_t maxBytes) {
  std::string why;
  int in = openRegularFile(from, what, noFollow, maxBytes, why);
  if (in < 0)
    return why;
  int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) {
    close(in);
    return "cannot write " + to + ": " + std::strerror(errno);
  }
  char buffer[1 << 16];
  std::string error;
  size_t copied = 0;
  while (error.empty()) {
    ssize_t n = read(in, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      error = "cannot read " + from + ": " + std::strerror(errno);
    if (n <= 0)
      break;
    if ((copied += static_cast<size_t>(n)) > maxBytes) {
      error = from + " grew past its bound while it was copied";
      break;
    }
    for (ssize_t done = 0; done < n && error.empty();) {
      ssize_t w = write(out, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        error = "cannot write " + to + ": " + std::strerror(errno);
      else
        done += w;
    }
  }
  close(in);
  if (close(out) != 0 && error.empty())
    error = "cannot write " + to + ": " + std::strerror(errno);
  return error;
}

/// Removes what stage() made: <area>/<n>/<files>.
static void removeTree(const std::string &dir) {
  if (dir.empty())
    return;
  if (DIR *listing = opendir(dir.c_str())) {
    while (dirent *entry = readdir(listing)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..")
        continue;
      std::string path = dir + "/" + name;
      struct stat info;
      if (lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
        removeTree(path);
      else
        unlink(path.c_str());
    }
    closedir(listing);
  }
  rmdir(dir.c_str());
}

void Workers::retireCandidate() {
  candidate.stop();
  removeTree(candidateStage);
  candidateStage.clear();
}

Workers::~Workers() {
  candidate.stop();
  reference.stop(/*graceful=*/true);
  removeTree(staging);
}

const std::string &Workers::stagingArea() {
  if (staging.empty()) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kforge-run-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      staging = buffer.data();
  }
  return staging;
}

std::string Workers::stage(const Manifest &manifest, const std::string &name, std::string &stagedDir) {
  if (stagingArea().empty())
    return std::string("cannot create a staging directory: ") + std::strerror(errno);
  stagedDir = staging + "/" + std::to_string(++staged);
  if (mkdir(stagedDir.c_str(), 0700) != 0)
    return "cannot create " + stagedDir + ": " + std::strerror(errno);
  if (std::string e = copyFile(manifest.directory + "/" + name + ".json", "manifest", stagedDir + "/" + name + ".json",
                               /*noFollow=*/false, size_t(1) << 20);
      !e.empty())
    return e;
  // The library must be a regular file beside the manifest: not a FIFO (the copy would wait for a writer), a
  // device, or a symbolic link to somewhere else.
  return copyFile(manifest.libraryPath(), "library", stagedDir + "/" + manifest.library, /*noFollow=*/true, kMaxLibraryBytes);
}

//===----------------------------------------------------------------------===//
// The evaluation (Evaluation.h; its inputs are in VerifyInputs.cpp, its timed phases in VerifyTiming.cpp)
//===----------------------------------------------------------------------===//

/// Whether `a` and `b` name the same directory (after links and relative paths are resolved).
static bool sameDirectory(const std::string &a, const std::string &b) {
  char *realA = realpath(a.c_str(), nullptr), *realB = realpath(b.c_str(), nullptr);
  bool same = realA && realB && std::strcmp(realA, realB) == 0;
  std::free(realA);
  std::free(realB);
  return same;
}

std::string Evaluation::checkManifests() {
  if (auto e = readManifest(options.candidate, options.candidateName, candidate); !e.empty())
    return e;
  if (auto e = readManifest(options.reference, options.referenceName, reference); !e.empty())
    return e;
  candidateIsReference =
      options.candidateName == options.referenceName && sameDirectory(options.candidate, options.reference);
  const auto &cArgs = candidate.arguments, &rArgs = reference.arguments;
  if (cArgs.empty() || cArgs.size() > 8)
    return "artifact '" + options.candidate + "' has " + std::to_string(cArgs.size()) +
           " arguments (1 to 8 supported)";
  bool same = cArgs.size() == rArgs.size();
  for (size_t i = 0; same && i < cArgs.size(); ++i)
    same = cArgs[i].shape == rArgs[i].shape && cArgs[i].isOutput == rArgs[i].isOutput;
  // The reference may compute in a wider type (e.g. an f32 reference for a bf16 task); inputs are rounded to
  // the candidate's type, so both see the same values.
  if (!same)
    return "candidate and reference do not take the same arguments";
  // What values the inputs are drawn from is the reference's to say (kforge-compile records it from the
  // payload): a candidate's manifest could narrow them to hide a wrong result.
  for (size_t i = 0; i < cArgs.size(); ++i)
    candidate.arguments[i].domain = rArgs[i].domain;
  int64_t outputElements = 0;
  for (const ManifestArgument &argument : cArgs) {
    std::optional<DType> type = parseDType(argument.dtype);
    if (!type)
      return "artifact '" + options.candidate + "' has a " + argument.dtype +
             " argument; kforge-run supports f32, f64, f16 and bf16 (and i64 / i32 outputs, index inputs)";
    if (isInteger(*type) && !argument.isOutput && parseDomain(argument.domain).value_or(0) == 0)
      return "artifact '" + options.candidate + "' has an " + argument.dtype +
             " input with no index domain; kforge-run draws random normal inputs, which an integer input cannot "
             "take: integer inputs are supported where the payload uses them as indices (kforge-compile records "
             "\"domain\": \"index:N\"), integer outputs (argmax's indices) always";
    types.push_back(*type);
    if (argument.isOutput)
      outputElements += argument.numElements();
  }
  for (const ManifestArgument &argument : rArgs)
    if (!parseDType(argument.dtype))
      return "artifact '" + options.reference + "' has a " + argument.dtype + " argument";
  // Nothing to compare proves nothing: never "correct".
  if (outputElements == 0)
    return "the artifact has no output elements to compare (no output argument, or only empty ones): nothing "
           "can be verified";
  // A GPU candidate may be checked against a CPU build (an independent computation) and the other way round:
  // each executor runs its own artifact on its own device and the judge compares host copies. Timing is
  // calibrated with the reference's executor, so it needs both on one device.
  if (candidate.target != reference.target && options.reps > 0)
    return "candidate and reference target different devices (" + candidate.target + ", " + reference.target +
           "): verify them with --reps 0; timing needs a reference on the candidate's device";
  gpu = candidate.target == "gpu";
  std::vector<size_t> counts;
  for (const ManifestArgument &argument : cArgs)
    counts.push_back(static_cast<size_t>(argument.numElements()));
  layout = ArgumentLayout::of(counts);
  return "";
}

/// The directory part of `path` ("." when it has none).
static std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string Evaluation::ensureStarted(ExecutorProcess &executor) {
  if (executor.running())
    return "";
  ContainmentPlan plan;
  plan.readableDirs.push_back(workers.stagingArea());
  std::string runtime = options.runtime;
  if (runtime.empty() && std::getenv("KFORGE_RUNTIME"))
    runtime = std::getenv("KFORGE_RUNTIME");
  if (!runtime.empty())
    plan.readableDirs.push_back(directoryOf(runtime));
  // The driver (or a test's mock of it) may come from the library path.
  if (const char *path = std::getenv("LD_LIBRARY_PATH"))
    for (std::string rest = path; !rest.empty();) {
      size_t colon = rest.find(':');
      std::string dir = rest.substr(0, colon);
      if (!dir.empty())
        plan.readableDirs.push_back(dir);
      rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    }
  if (!options.cacheDir.empty()) {
    plan.secretDirs.push_back(options.cacheDir);
    plan.secretDirs.push_back(cacheKeyPath());
  }
  RunnerOptions withRuntime = options;
  withRuntime.runtime = runtime;
  executor.describeTimeout(options.timeout);
  executor.echoErrors(options.serve);
  std::string why;
  // An address-space limit only where no GPU artifact will be loaded (the CUDA driver reserves huge ranges).
  bool runsGpuCode = &executor == &workers.candidate
                         ? candidate.target == "gpu"
                         : reference.target == "gpu" || !options.independent.empty();
  if (!executor.start(withRuntime, layout, plan, /*cpuMemoryLimit=*/!runsGpuCode, deadline, why))
    return why;
  if (&executor == &workers.reference)
    workers.referenceLoaded = false;
  return "";
}

std::optional<json> Evaluation::call(ExecutorProcess &executor, const json &command, const std::string &what,
                                     std::string &error, Deadline until) {
  std::string why;
  std::optional<json> reply = executor.call(command, std::min(deadline, until), why);
  if (!reply) {
    // The runtime names the failed CUDA call before it aborts: that is the reason to report.
    const std::string &errors = executor.errors();
    size_t at = errors.rfind("kforge runtime: ");
    if (at != std::string::npos) {
      std::string line = errors.substr(at + 16);
      why = line.substr(0, line.find('\n')) + " (" + why + ")";
    }
    if (!errors.empty())
      report["stderr"] = errors.size() > 2000 ? errors.substr(errors.size() - 2000) : errors;
    error = (&executor == &workers.reference && what != "independent" ? "reference: " : "") + why;
    return std::nullopt;
  }
  if (reply->contains("error")) {
    const json &e = (*reply)["error"];
    error = what + ": " + (e.is_string() ? e.get<std::string>() : e.dump());
    if (reply->contains("poisoned") && (*reply)["poisoned"] == true)
      executor.stop(); // it exits after saying so; the next evaluation starts a fresh one
    return std::nullopt;
  }
  return reply;
}

std::string Evaluation::loadInto(ExecutorProcess &executor, const Manifest &manifest, const std::string &name,
                                 const std::string &slot) {
  std::string staged, error;
  std::string e = workers.stage(manifest, name, staged);
  if (&executor == &workers.candidate)
    workers.candidateStage = staged;
  if (!e.empty())
    return e;
  if (!call(executor, {{"op", "load"}, {"slot", slot}, {"dir", staged}, {"name", name}}, "loading " + slot, error))
    return error;
  return "";
}

std::string Evaluation::ensureReference() {
  if (std::string e = ensureStarted(workers.reference); !e.empty())
    return "starting the reference's executor: " + e;
  if (workers.referenceLoaded)
    return "";
  if (std::string e = loadInto(workers.reference, reference, options.referenceName, "reference"); !e.empty())
    return e;
  workers.referenceLoaded = true;
  return "";
}

/// Milliseconds since `start` on the judge's clock.
static double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void Evaluation::fillArguments(ExecutorProcess &executor, const std::vector<const float *> &inputs) {
  auto started = std::chrono::steady_clock::now();
  for (size_t i : hostInputIndices)
    copyFloats(executor.argument(i), inputs[i], layout.counts[i]);
  poisonOutputs(executor);
  phases.copies += msSince(started);
}

std::string Evaluation::runOn(ExecutorProcess &executor, const std::string &slot,
                              const std::vector<const float *> &inputs, std::vector<Floats> &outputs, int seed) {
  fillArguments(executor, inputs);
  std::string error;
  auto started = std::chrono::steady_clock::now();
  std::optional<json> reply = call(executor, runCommand(slot, seed), slot, error);
  phases.reference += msSince(started);
  if (!reply)
    return error;
  if (seed >= 0)
    if (std::string e = checkDeviceInputs(*reply, seed); !e.empty())
      return e;
  started = std::chrono::steady_clock::now();
  outputs.resize(candidate.arguments.size()); // each output's vector kept from an earlier seed
  for (size_t i : outputIndices) {
    outputs[i].resize(layout.counts[i]);
    copyFloats(outputs[i].data(), executor.argument(i), layout.counts[i]);
  }
  phases.copies += msSince(started);
  return "";
}

/// Runs the reference and an independent computation of the same payload on the inputs of seed 0 and
/// compares them, so that a bug shared by candidate and reference cannot pass unnoticed. Both run in the
/// reference's executor, never in the candidate's.
std::string Evaluation::checkReference() {
  Manifest independent;
  if (auto e = readManifest(options.independent, "kernel", independent); !e.empty())
    return "checking the reference: " + e;
  if (std::string e = ensureReference(); !e.empty())
    return "checking the reference: " + e;
  if (std::string e = loadInto(workers.reference, independent, "kernel", "independent"); !e.empty())
    return "checking the reference: " + e;
  std::vector<Floats> inputs = makeInputs(candidate.arguments, types, 0), expected, other;
  if (std::string e = runOn(workers.reference, "reference", pointersTo(inputs), expected); !e.empty())
    return "checking the reference: " + e;
  if (std::string e = runOn(workers.reference, "independent", pointersTo(inputs), other); !e.empty())
    return "checking the reference: " + e;
  std::string error;
  call(workers.reference, {{"op", "unload"}, {"slot", "independent"}}, "independent", error);
  json result = {{"independent", independent.directory}, {"status", "correct"}};
  for (size_t i : outputIndices) {
    Comparison c = compare(expected[i].data(), other[i].data(), other[i].size());
    std::string why, status = verdict(c, tolerance, why);
    result["rel_l2_error"] = c.relL2Error;
    result["max_abs_error"] = c.maxAbsError;
    if (status != "correct") {
      result["status"] = status;
      result["why"] = why;
    }
  }
  report["reference_check"] = result;
  if (result["status"] == "incorrect")
    return "the reference disagrees with the independent computation: " + result["why"].get<std::string>();
  return "";
}

std::string Evaluation::prepare() {
  if (prepared)
    return ""; // (a reference_check_only request that found no held outputs, now running seed 0)
  prepared = true;
  if (std::string e = checkManifests(); !e.empty())
    return e;
  report["target"] = candidate.target;
  report["hash"] = candidate.hash;
  // By default the tolerance of the least precise output type (fp32 1e-4, fp16/bf16 1e-2), or of the narrowest
  // type the computation rounds an intermediate to, from the reference's manifest (kforge-compile records it
  // from the payload; a candidate's manifest could claim anything).
  tolerance = options.tolerance;
  if (tolerance <= 0) {
    tolerance = 0;
    for (size_t i = 0; i < candidate.arguments.size(); ++i)
      if (candidate.arguments[i].isOutput)
        tolerance = std::max(tolerance, defaultTolerance(types[i]));
    if (std::optional<DType> rounding = parseDType(reference.narrowestRounding); rounding && !isInteger(*rounding))
      tolerance = std::max(tolerance, defaultTolerance(*rounding));
    // TF32 allowed (by the user, never by a candidate): fp32 contractions may round their operands to TF32.
    if (options.precision == "tf32" && tolerance > 0)
      tolerance = std::max(tolerance, kTf32Tolerance);
  }
  report["tolerance"] = tolerance;
  report["precision"] = options.precision;
  layOutSeeds();
  if (!options.referenceSamples.empty())
    if (std::string e = readReferenceSamples(); !e.empty())
      return e;
  return "";
}

std::string Evaluation::load() {
  if (std::string e = prepare(); !e.empty())
    return e;
  if (std::string e = ensureStarted(workers.candidate); !e.empty())
    return "starting the candidate's executor: " + e;
  report["containment"] = workers.candidate.containment();
  if (std::string e = loadInto(workers.candidate, candidate, options.candidateName, "candidate"); !e.empty())
    return e;
  if (options.independent.empty())
    return "";
  return checkReference();
}

void Evaluation::layOutSeeds() {
  // The reference build, and the arguments' shapes and types, name the cached inputs and outputs ("inputs5":
  // Random.h's hashed values, positive ones never zero; files from the earlier schemes are not reused).
  const auto &cArgs = candidate.arguments;
  cacheKey = (reference.hash.empty() ? reference.directory : reference.hash) + "-inputs5";
  for (size_t i = 0; i < cArgs.size(); ++i) {
    cacheKey += "-" + cArgs[i].dtype + (cArgs[i].domain.empty() ? "" : "+" + cArgs[i].domain);
    for (int64_t d : cArgs[i].shape)
      cacheKey += "x" + std::to_string(d);
    (cArgs[i].isOutput ? outputIndices : inputIndices).push_back(i);
    sizes.push_back(static_cast<size_t>(cArgs[i].numElements()));
  }
  // f32 inputs of a GPU candidate checked against a GPU reference are made on the device by each executor
  // (DeviceInputs.h), not drawn here and copied over PCIe for every seed and candidate.
  bool bothOnGpu = candidate.target == "gpu" && reference.target == "gpu" && !options.hostInputs &&
                   workers.deviceInputsUnavailable.empty();
  deviceInput.assign(cArgs.size(), false);
  deviceInputIndices.clear();
  hostInputIndices.clear();
  for (size_t i : inputIndices) {
    deviceInput[i] = bothOnGpu && types[i] == DType::F32 && reference.arguments[i].dtype == "f32";
    (deviceInput[i] ? deviceInputIndices : hostInputIndices).push_back(i);
  }
  if (!deviceInputIndices.empty())
    report["inputs"] = "f32 inputs made on the device by each executor";
  else if (!workers.deviceInputsUnavailable.empty())
    report["inputs"] = "drawn by the judge: " + workers.deviceInputsUnavailable;
}

double Evaluation::runLimitMs(int seed) const {
  if (options.cutoffMs <= 0)
    return std::numeric_limits<double>::infinity();
  bool allowance = seed == 0 && options.seeds > 1;
  return 10 * options.cutoffMs + (allowance ? options.firstRunAllowanceMs : 0);
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
  // (Ten times over, the first of several seeds with its allowance: the limit a run is stopped at, runLimitMs.)
  bool farOver = seed <= cutoffSeed && firstMs > runLimitMs(seed);
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

void Evaluation::compareOutputs(int seed, const std::vector<const float *> &actual,
                                const std::vector<const float *> &expected, const SeedCache &cache) {
  auto started = std::chrono::steady_clock::now();
  for (size_t i : outputIndices) {
    // The reference's summary is read once per seed for a whole search (the serve cache keeps it beside the
    // outputs), not once per candidate: a comparison then reads the reference once.
    size_t n = layout.counts[i];
    std::optional<ReferenceSummary> summary = cache.summary(seed, i, n);
    if (!summary) {
      summary = summarize(expected[i], n);
      cache.keepSummary(seed, i, n, *summary);
    }
    Comparison c = compare(actual[i], expected[i], n, *summary);
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
  phases.compare += msSince(started);
}

Evaluation::SeedEnd Evaluation::verifySeed(int seed, const SeedCache &cache, std::string &error) {
  // The seed's inputs and the reference's outputs are read where the seed cache keeps them in memory, and
  // otherwise kept in members reused from seed to seed: a multi-GB argument in a fresh vector costs seconds of
  // page faults each time, and each copy of it a second or more.
  size_t arguments = candidate.arguments.size();
  std::vector<const float *> inputs(arguments), actual(arguments), expected(arguments);
  auto started = std::chrono::steady_clock::now();
  if (!hostInputIndices.empty() && !cache.view(seed, "inputs", hostInputIndices, sizes, inputs)) {
    seedInputs.resize(arguments);
    bool held = false; // by the in-memory cache, which took the vectors over (no multi-GB copy)
    if (!cache.load(seed, "inputs", hostInputIndices, sizes, seedInputs)) {
      makeInputs(candidate.arguments, types, seed, seedInputs, deviceInput);
      held = cache.adopt(seed, "inputs", hostInputIndices, seedInputs) &&
             cache.view(seed, "inputs", hostInputIndices, sizes, inputs);
    }
    if (!held)
      inputs = pointersTo(seedInputs);
  }
  phases.inputs += msSince(started);
  // The candidate first, then the reference (unless the candidate is the reference), each in its own executor.
  fillArguments(workers.candidate, inputs);
  started = std::chrono::steady_clock::now();
  // A run far over the cutoff is stopped where it is (its executor killed): a kernel with one thread per block
  // ran 4.6 s a seed where 2.1 s said enough (results/benchmarks-h100/2026-12-07/s64-call-4, matmul_prime).
  double limitMs = runLimitMs(seed);
  Deadline until = std::isfinite(limitMs) ? started + std::chrono::microseconds(static_cast<int64_t>(limitMs * 1e3))
                                          : Deadline::max();
  std::optional<json> reply = call(workers.candidate, runCommand("candidate", seed), "candidate", error, until);
  double wallMs = msSince(started);
  phases.candidate += wallMs;
  if (!reply && until < deadline && std::chrono::steady_clock::now() >= until) {
    report["status"] = "too-slow";
    report["reason"] = "a run took more than " + std::to_string(limitMs) + " ms, 10 x the cutoff of " +
                       std::to_string(options.cutoffMs) + " ms" +
                       (seed == 0 && options.seeds > 1 ? " plus the first run's allowance" : "") +
                       ": stopped there (its executor killed); not verified or timed further";
    report["decided_at_seed"] = seed;
    report["run_ms"] = wallMs;
    report["verification_runs_ms"].push_back(wallMs);
    return SeedEnd::TooSlow;
  }
  if (!reply) {
    if (!fallBackToHostInputs(error, /*fromReference=*/candidateIsReference))
      return SeedEnd::Failed;
    error.clear(); // the executor cannot make inputs on the device: the seed again, every input drawn here
    return verifySeed(seed, cache, error);
  }
  // Inputs the candidate's executor made on the device are checked too: a candidate that disagrees answers for
  // other inputs than the reference's, and fails.
  if ((error = checkDeviceInputs(*reply, seed)).size())
    return SeedEnd::Failed;
  // The executor's own measure of the call (without the judge's round trip), but never more than the judge
  // saw pass, and never a non-number.
  double claimed = (*reply)["run_ms"].is_number() ? (*reply)["run_ms"].get<double>() : wallMs;
  double firstMs = std::isfinite(claimed) ? std::clamp(claimed, 0.0, wallMs) : wallMs;
  if (seed >= 1 || options.seeds == 1)
    fastestRunWallMs = std::min(fastestRunWallMs, wallMs);
  lastRunMs = firstMs;
  // Each verification run's wall time (launch, copies, host work): what calibrates the too-slow cutoff.
  report["verification_runs_ms"].push_back(firstMs);
  if (tooSlow(seed, firstMs))
    return SeedEnd::TooSlow;
  if (seed == 0 && (*reply)["kernels"].is_array() && (*reply)["kernels"].size() == 2 &&
      (*reply)["kernels"][0].is_number_integer() && (*reply)["kernels"][1].is_number_integer()) {
    candidateKernels[0] = (*reply)["kernels"][0].get<int>();
    candidateKernels[1] = (*reply)["kernels"][1].get<int>();
  }
  // The candidate's outputs: compared where its executor left them, in the shared memory (the comparison
  // reads each element once, so whatever the executor's process still writes there, each element is judged on
  // one value it wrote: a 6 GB output no longer costs a copy a seed). A baseline's run is the reference's
  // outputs, which the seed cache keeps: copied out first.
  started = std::chrono::steady_clock::now();
  if (candidateIsReference) {
    seedActual.resize(arguments);
    for (size_t i : outputIndices) {
      seedActual[i].resize(layout.counts[i]);
      copyFloats(seedActual[i].data(), workers.candidate.argument(i), layout.counts[i]);
    }
    actual = pointersTo(seedActual);
  } else {
    for (size_t i : outputIndices)
      actual[i] = workers.candidate.argument(i);
  }
  phases.copies += msSince(started);
  if (!cache.view(seed, "outputs", outputIndices, sizes, expected)) {
    seedExpected.resize(arguments);
    bool held = false; // by the in-memory cache, which took the vectors over
    if (!cache.load(seed, "outputs", outputIndices, sizes, seedExpected)) {
      if (candidateIsReference) {
        // The candidate is the reference's own artifact (a baseline's run): its run was the reference's run,
        // and running it again would only cost a multi-GB problem seconds per seed.
        std::swap(seedExpected, seedActual);
        actual = pointersTo(seedExpected);
        report["reference_outputs"] = "the candidate's run (the candidate is the reference)";
      } else {
        if ((error = ensureReference()).size())
          return SeedEnd::Failed;
        if ((error = runOn(workers.reference, "reference", inputs, seedExpected, seed)).size()) {
          if (!fallBackToHostInputs(error, /*fromReference=*/true))
            return SeedEnd::Failed;
          error.clear();
          return verifySeed(seed, cache, error);
        }
      }
      // (A baseline's `actual` points into the same buffers, which the cache may now own: moving a vector
      // keeps its elements where they are.)
      held = cache.adopt(seed, "outputs", outputIndices, seedExpected) &&
             cache.view(seed, "outputs", outputIndices, sizes, expected);
    }
    if (!held)
      expected = pointersTo(seedExpected);
  }
  if (seed == 0 && !referenceSamples.empty() && (error = checkReferenceSamples(expected)).size())
    return SeedEnd::Failed;
  compareOutputs(seed, actual, expected, cache);
  return SeedEnd::Verified;
}

std::string Evaluation::run() {
  if (options.referenceCheckOnly)
    if (std::optional<std::string> text = checkHeldReference())
      return *text;
  auto started = std::chrono::steady_clock::now();
  std::string loadError = load();
  phases.load = msSince(started);
  if (!loadError.empty())
    return fail(loadError);
  size_t seedBytes = 0;
  for (size_t count : sizes)
    seedBytes += count * sizeof(float);
  SeedCache cache(reference.hash.empty() ? std::string() : options.cacheDir, cacheKey,
                  /*inMemory=*/options.serve && !reference.hash.empty(), seedBytes);
  if (cache.enabled())
    report["seed_cache"] = options.cacheDir;
  if (!cache.disabledBecause().empty())
    report["seed_cache_note"] = cache.disabledBecause();
  for (int seed = 0; seed < options.seeds; ++seed) {
    std::string error;
    SeedEnd end = verifySeed(seed, cache, error);
    if (end == SeedEnd::Failed)
      return fail(error);
    if (end == SeedEnd::TooSlow) {
      report["phases_ms"] = phases.toJson();
      return report.dump();
    }
  }
  report["status"] = overall;
  if (options.reps > 0) {
    started = std::chrono::steady_clock::now();
    std::string error = timeCandidate();
    phases.timing = msSince(started);
    if (!error.empty())
      return fail(error);
  }
  report["phases_ms"] = phases.toJson();
  if (gpu) {
    std::string error;
    if (auto reply = call(workers.candidate,
                          {{"op", "resources"}, {"first", candidateKernels[0]}, {"last", candidateKernels[1]}},
                          "resources", error))
      report["resources"] = (*reply)["resources"];
  }
  return report.dump();
}

std::string kforge::judge(const RunnerOptions &options, Workers &workers) {
  std::string text = Evaluation(options, workers).run();
  // One executor per candidate: whatever the candidate left in its process ends with it.
  workers.retireCandidate();
  return text;
}

std::string kforge::evaluate(const RunnerOptions &options) {
  Workers workers;
  return judge(options, workers);
}

int kforge::evaluateIsolated(const RunnerOptions &options) {
  makeJudgeNonDumpable();
  // Refused before any work: the report could never be written there.
  struct stat info;
  if (!options.output.empty() && lstat(options.output.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    std::cerr << "kforge-run: error: --output: " << options.output << " exists and is not a regular file\n";
    return 2;
  }
  json report = json::parse(evaluate(options), nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded())
    report = {{"candidate", options.candidate},
              {"reference", options.reference},
              {"status", "failed"},
              {"reason", "internal: the evaluation returned no report"}};
  std::string text = report.dump(2);
  if (!options.output.empty())
    if (std::string e = writeReportFile(options.output, text); !e.empty()) {
      std::cerr << "kforge-run: error: --output: " << e << "\n";
      return 2;
    }
  std::cout << text << std::endl;
  return report["status"] == "correct" ? 0 : 1;
}
