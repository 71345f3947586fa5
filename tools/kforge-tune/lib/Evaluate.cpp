//===- Evaluate.cpp - one proposal: compile, run, record ------------------===//

#include "Evaluate.h"

#include "Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

using namespace kforge::tune;
using llvm::StringRef;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// The payload
//===----------------------------------------------------------------------===//

std::optional<PayloadFacts> kforge::tune::loadFacts(const Tools &tools, StringRef payloadPath, StringRef entry) {
  llvm::SmallString<128> out;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("kforge-facts", "json", out)) {
    llvm::errs() << "kforge-tune: error: cannot create a temporary file: " << ec.message() << "\n";
    return std::nullopt;
  }
  std::vector<StringRef> argv = {tools.compile, payloadPath, "--facts-json", out};
  if (!entry.empty())
    argv.insert(argv.end(), {"--entry", entry});
  std::string message;
  // The compiler's diagnostics (a payload it cannot parse or tune) go straight to the user.
  ChildEnvironment env;
  int rc = llvm::sys::ExecuteAndWait(tools.compile, argv, env.refs(), {}, 300, 0, &message);
  std::optional<json::Value> value = readJSON(out);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !value) {
    if (rc < 0)
      llvm::errs() << "kforge-tune: error: " << tools.compile << " did not run: " << message << "\n";
    llvm::errs() << "kforge-tune: error: cannot analyse " << payloadPath << "\n";
    return std::nullopt;
  }
  PayloadFacts facts;
  json::Path::Root root;
  if (!fromJSON(*value, facts, root)) {
    llvm::errs() << "kforge-tune: error: unexpected facts from " << tools.compile << "\n";
    return std::nullopt;
  }
  return facts;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// The kforge-compile arguments every use shares: payload, output, target, limits, entry, and the recipe if any.
static std::vector<std::string> compileArgs(const TuneConfig &config, StringRef outputDir, StringRef recipe) {
  std::vector<std::string> args = {config.payloadPath, "-o", outputDir.str(), "--target", config.target,
                                   "--chip", config.chip, "--timeout", std::to_string(config.compileTimeout),
                                   "--memory-limit-mb", std::to_string(config.memoryLimitMB)};
  if (!config.entry.empty())
    args.insert(args.end(), {"--entry", config.entry});
  if (!recipe.empty())
    args.insert(args.end(), {"--recipe", recipe.str()});
  return args;
}

/// Reads kforge-compile's diagnostics report into `c` (`rc` and `message`: how the compile ended), and traces
/// the first error located in the schedule back to the action that rendered it.
static void readCompileReport(Candidate &c, StringRef diagnosticsPath, int rc, const std::string &message) {
  std::optional<json::Value> report = readJSON(diagnosticsPath);
  const json::Object *object = report ? report->getAsObject() : nullptr;
  c.stage = object && object->getString("stage") ? object->getString("stage")->str() : "unknown";
  c.compileStatus = object && object->getString("status") ? object->getString("status")->str()
                                                          : (c.compiled ? "ok" : "failed");
  if (object && object->getArray("diagnostics"))
    c.diagnostics = *object->getArray("diagnostics");
  if (object && object->getString("message"))
    c.message = object->getString("message")->str();
  if (!c.compiled && c.message.empty()) {
    c.message = rc < 0 ? "kforge-compile did not finish: " + message : "kforge-compile failed (exit " +
                                                                           std::to_string(rc) + ")";
    for (const json::Value &d : c.diagnostics)
      if (const json::Object *o = d.getAsObject(); o && o->getString("severity") == StringRef("error")) {
        c.message = o->getString("message")->str();
        break;
      }
  }
  for (const json::Value &d : c.diagnostics) {
    const json::Object *o = d.getAsObject();
    if (!o || o->getString("severity") != StringRef("error") || !o->getInteger("line"))
      continue;
    std::optional<StringRef> file = o->getString("file");
    if (file && !c.recipePath.empty() && llvm::sys::path::filename(*file) == llvm::sys::path::filename(c.recipePath)) {
      c.faultyAction = actionAtLine(c.actionLines, static_cast<int>(*o->getInteger("line")),
                                    static_cast<int>(c.proposal.schedule.size()));
      break;
    }
  }
}

void kforge::tune::compileCandidate(const TuneConfig &config, const Tools &tools, Candidate &c, bool naive) {
  auto start = std::chrono::steady_clock::now();
  llvm::sys::fs::create_directories(c.dir);
  std::string diagnosticsPath = joinPath(c.dir, "diagnostics.json");
  // wgmma exists only in the architecture-specific sm_90a target (the same GPU as sm_90).
  TuneConfig forChip = config;
  if (!naive && config.chip == "sm_90" && findSlot(c.proposal.schedule, "wgmma"))
    forChip.chip = "sm_90a";
  std::vector<std::string> args = compileArgs(forChip, c.dir, naive ? "" : c.recipePath);
  args.insert(args.end(), {"--diagnostics-json", diagnosticsPath});
  if (config.useCache)
    args.insert(args.end(), {"--cache-dir", joinPath(config.runDir, "cache")});
  if (naive)
    args.push_back("--naive");
  std::string message;
  int rc = runProgram(tools.compile, args, joinPath(c.dir, "compile.log"), config.compileTimeout + 30, message);
  c.compileSeconds = secondsSince(start);
  c.compiled = rc == 0;
  readCompileReport(c, diagnosticsPath, rc, message);
}

std::string kforge::tune::checkScript(const TuneConfig &config, const Tools &tools, const std::string &script) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("kforge-script", dir))
    return "cannot create a temporary directory";
  std::string recipe = joinPath(dir, "script.mlir"), diagnostics = joinPath(dir, "diagnostics.json");
  writeText(recipe, script);
  std::vector<std::string> args = compileArgs(config, dir, recipe);
  args.insert(args.end(), {"--schedule-only", "--diagnostics-json", diagnostics});
  std::string message;
  int rc = runProgram(tools.compile, args, joinPath(dir, "log"), config.compileTimeout + 30, message);
  std::string result;
  if (rc != 0) {
    result = "the script failed";
    if (std::optional<json::Value> report = readJSON(diagnostics))
      if (const json::Object *o = report->getAsObject()) {
        result += " at stage " + o->getString("stage").value_or("?").str() + ":";
        if (const json::Array *list = o->getArray("diagnostics"))
          for (const json::Value &d : *list)
            if (const json::Object *e = d.getAsObject())
              result += llvm::formatv("\n  line {0}: {1}: {2}", e->getInteger("line").value_or(0),
                                      e->getString("severity").value_or(""), e->getString("message").value_or(""))
                            .str();
        if (auto m = o->getString("message"))
          result += "\n  " + m->str();
      }
  }
  llvm::sys::fs::remove_directories(dir);
  return result;
}

/// When a schedule fails to apply and no diagnostic points into it (transform ops report at the payload op),
/// finds the action at fault: the first prefix of the schedule that fails to apply ends with it.
static int bisectFailingAction(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts,
                               const Candidate &c) {
  const Schedule &schedule = c.proposal.schedule;
  for (size_t n = 1; n <= schedule.size(); ++n) {
    Schedule prefix(schedule.begin(), schedule.begin() + n);
    if (!validateSchedule(prefix, facts, config.target).empty())
      continue; // e.g. a GPU prefix missing a fusion the full schedule has: not a compilable step
    std::string dir = joinPath(c.dir, "bisect");
    llvm::sys::fs::create_directories(dir);
    std::string recipe = joinPath(dir, "prefix.mlir");
    if (!writeText(recipe, renderSchedule(prefix, facts, config.target)))
      return -1;
    std::vector<std::string> args = compileArgs(config, dir, recipe);
    args.push_back("--schedule-only");
    std::string message;
    int rc = runProgram(tools.compile, args, joinPath(dir, "compile.log"), config.compileTimeout + 30, message);
    if (rc != 0)
      return static_cast<int>(n) - 1;
  }
  return -1;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// The outcome from kforge-run's report (a file or a reply line); "failed" with `why` when there is none.
static RunOutcome outcomeOf(std::optional<json::Value> report, const std::string &why) {
  RunOutcome outcome;
  const json::Object *object = report ? report->getAsObject() : nullptr;
  if (!object) {
    outcome.status = "failed";
    outcome.reason = "kforge-run wrote no report" + (why.empty() ? std::string() : ": " + why);
    return outcome;
  }
  outcome.status = object->getString("status") ? object->getString("status")->str() : "failed";
  if (object->getString("reason"))
    outcome.reason = object->getString("reason")->str();
  if (const json::Object *timing = object->getObject("timing"))
    outcome.medianMs = timing->getNumber("median_ms").value_or(0);
  outcome.report = json::Object(*object);
  return outcome;
}

/// The arguments that start `kforge-run --serve` against `referenceDir` for this run.
static std::vector<std::string> serverArgs(const TuneConfig &config, const Tools &tools, StringRef referenceDir) {
  std::vector<std::string> args = {"--serve", "--reference", referenceDir.str(), "--cache-dir",
                                   joinPath(config.runDir, "seed-cache")};
  if (config.target == "gpu") {
    if (!tools.runtime.empty())
      args.insert(args.end(), {"--runtime", tools.runtime});
    args.insert(args.end(), {"--l2-flush", config.l2Flush});
  }
  if (config.allowTf32)
    args.insert(args.end(), {"--precision", "tf32"});
  return args;
}

/// A fresh 128-bit nonce, in hex: the runner echoes it, a reply without it was not written for this request.
static std::string freshNonce() {
  std::random_device device;
  std::string text;
  for (int i = 0; i < 4; ++i)
    text += llvm::formatv("{0:x-8}", static_cast<uint32_t>(device())).str();
  return text;
}

/// One trial's verification and timing by the search's long-lived runner. The request carries an id and a
/// nonce the candidate never sees (they travel only between this process and the runner's judge); a reply
/// that does not echo both is not this request's verdict, and the runner is replaced.
static RunOutcome runOnServer(const TuneConfig &config, RunnerServer &server, StringRef candidateDir, int seeds,
                              int reps, double cutoffMs, int warmup = -1, StringRef outputName = "run.json",
                              StringRef referenceSamples = "", bool referenceCheckOnly = false) {
  static int64_t requests = 0;
  auto start = std::chrono::steady_clock::now();
  std::string output = joinPath(candidateDir, outputName);
  llvm::sys::fs::remove(output);
  std::string nonce = freshNonce();
  int64_t id = ++requests;
  json::Object request{{"candidate", candidateDir.str()}, {"seeds", seeds},   {"reps", reps},
                       {"output", output},                {"nonce", nonce},   {"id", id},
                       {"timeout_s", config.runTimeout}};
  if (cutoffMs > 0)
    request["cutoff_ms"] = cutoffMs;
  if (warmup >= 0)
    request["warmup"] = warmup;
  if (config.timingBudgetMs > 0)
    request["timing_budget_ms"] = config.timingBudgetMs;
  if (!referenceSamples.empty())
    request["check_reference_samples"] = referenceSamples.str();
  if (referenceCheckOnly)
    request["reference_check_only"] = true;
  if (config.slowRunMs >= 0)
    request["slow_run_ms"] = config.slowRunMs;
  std::string why;
  // The runner's judge enforces timeout_s itself; this side's limit is the backstop for a judge that hangs.
  std::optional<std::string> reply =
      server.request(llvm::formatv("{0}", json::Value(std::move(request))).str(), config.runTimeout + 30, why);
  std::optional<json::Value> report;
  if (reply) {
    if (auto parsed = json::parse(*reply)) {
      const json::Object *object = parsed->getAsObject();
      if (object && object->getString("nonce") == StringRef(nonce) && object->getInteger("id") == id) {
        report = std::move(*parsed);
      } else {
        why = "the runner's reply does not match the request (nonce or id): not a verdict; the runner was replaced";
        server.restart();
      }
    } else {
      why = "unreadable reply: " + llvm::toString(parsed.takeError());
      server.restart();
    }
  }
  RunOutcome outcome = outcomeOf(std::move(report), why);
  outcome.seconds = secondsSince(start);
  return outcome;
}

RunOutcome kforge::tune::runCandidate(const TuneConfig &config, const Tools &tools, StringRef candidateDir,
                                      StringRef referenceDir, int seeds, int reps, double cutoffMs,
                                      llvm::ArrayRef<std::string> extraArgs, StringRef outputName) {
  auto start = std::chrono::steady_clock::now();
  std::string output = joinPath(candidateDir, outputName);
  std::vector<std::string> args = {"--candidate", candidateDir.str(), "--reference", referenceDir.str(),
                                   "--seeds", std::to_string(seeds), "--reps", std::to_string(reps),
                                   "--timeout", std::to_string(config.runTimeout), "--output", output};
  if (config.target == "gpu") {
    if (!tools.runtime.empty())
      args.insert(args.end(), {"--runtime", tools.runtime});
    args.insert(args.end(), {"--l2-flush", config.l2Flush});
  }
  if (config.allowTf32)
    args.insert(args.end(), {"--precision", "tf32"});
  if (cutoffMs > 0)
    args.insert(args.end(), {"--cutoff-ms", std::to_string(cutoffMs)});
  if (config.timingBudgetMs > 0)
    args.insert(args.end(), {"--timing-budget-ms", std::to_string(config.timingBudgetMs)});
  if (config.slowRunMs >= 0)
    args.insert(args.end(), {"--slow-run-ms", std::to_string(config.slowRunMs)});
  // Inputs and the reference's outputs are computed once per seed for the whole run, not per candidate.
  args.insert(args.end(), {"--cache-dir", joinPath(config.runDir, "seed-cache")});
  args.insert(args.end(), extraArgs.begin(), extraArgs.end());
  llvm::sys::fs::remove(output);
  std::string message;
  runProgram(tools.run, args, joinPath(candidateDir, llvm::sys::path::stem(outputName).str() + ".log"),
             config.runTimeout + 60, message);
  RunOutcome outcome = outcomeOf(readJSON(output), message);
  outcome.seconds = secondsSince(start);
  return outcome;
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

json::Object ReferenceCheck::toJSON() const {
  json::Object o{{"status", status}, {"against", against}, {"method", method},
                 {"reason", reason}, {"seconds", seconds}, {"prepare_seconds", prepareSeconds}};
  if (relL2Error)
    o["rel_l2_error"] = *relL2Error;
  if (maxAbsError)
    o["max_abs_error"] = *maxAbsError;
  return o;
}

std::optional<ReferenceCheck> ReferenceCheck::fromJSON(const json::Value *value) {
  const json::Object *o = value ? value->getAsObject() : nullptr;
  if (!o || !o->getString("status"))
    return std::nullopt;
  ReferenceCheck check;
  check.status = o->getString("status")->str();
  check.against = o->getString("against").value_or("").str();
  check.reason = o->getString("reason").value_or("").str();
  check.method = o->getString("method").value_or("").str();
  check.prepareSeconds = o->getNumber("prepare_seconds").value_or(0);
  check.relL2Error = o->getNumber("rel_l2_error");
  check.maxAbsError = o->getNumber("max_abs_error");
  check.seconds = o->getNumber("seconds").value_or(0);
  return check;
}

std::string kforge::tune::largeProblemSeeds(TuneConfig &config, const PayloadFacts &facts) {
  constexpr int kLargeProblemSeeds = 3;
  // On the GPU the f32 inputs of a seed are made on the device (kforge-run's device inputs): a seed costs the
  // outputs and the other inputs only (a 2048 x 1048576 matvec's 8.6 GB of arguments, 8 KB of them output).
  bool gpu = config.target == "gpu";
  double bytes = static_cast<double>(facts.bytes - (gpu ? facts.f32ArgumentBytes : 0));
  if (config.seedsGiven || bytes <= kLargeProblemBytes || config.seeds <= kLargeProblemSeeds)
    return "";
  std::string note =
      llvm::formatv("kforge-tune: verifying each candidate on {0} seeds, not {1}: {2} take {3:f1} GB (over {4:f0}), "
                    "and every seed costs a pass over them (--seeds N overrides)",
                    kLargeProblemSeeds, config.seeds,
                    gpu ? "the outputs and the inputs not made on the device" : "the arguments", bytes / 1e9,
                    kLargeProblemBytes / 1e9)
          .str();
  config.seeds = kLargeProblemSeeds;
  return note;
}

ReferenceCheck kforge::tune::planReferenceCheck(const TuneConfig &config, const PayloadFacts &facts) {
  ReferenceCheck check;
  // Why the CPU build cannot be the check, when it cannot.
  std::string noCpuBuild;
  double gflop = static_cast<double>(facts.flops) / 1e9, gb = static_cast<double>(facts.bytes) / 1e9;
  if (config.target != "gpu") {
    // The CPU reference is the untransformed payload through the CPU pipeline the candidates take too.
    noCpuBuild = "the reference is the CPU build itself";
  } else if (config.referenceCheckMaxGflop <= 0 || config.referenceCheckMaxGB <= 0) {
    noCpuBuild = "the CPU build's check is turned off (--reference-check-max-gflop or --reference-check-max-gb is 0)";
  } else if (gflop > config.referenceCheckMaxGflop || gb > config.referenceCheckMaxGB) {
    char text[400];
    std::snprintf(text, sizeof(text),
                  "the problem is too large for the CPU build (%.3g GFLOP, %.3g GB of arguments; the bound is %g "
                  "GFLOP and %g GB, --reference-check-max-gflop/-gb: its untransformed loops run at ~0.3-1 GFLOP/s)",
                  gflop, gb, config.referenceCheckMaxGflop, config.referenceCheckMaxGB);
    noCpuBuild = text;
  }
  if (noCpuBuild.empty()) {
    check.method = "cpu-build";
    check.against = "the CPU build of the payload (kforge-compile --target cpu: untransformed loops, no GPU lowering)";
    return check; // status "": to be run
  }
  if (config.referenceSamples <= 0) {
    check.status = "skipped";
    check.reason = "not checked: " + noCpuBuild + ", and the sampled check is turned off (--reference-samples 0)";
    return check;
  }
  check.method = "samples";
  check.against = llvm::formatv("{0} output elements computed in float64 on the host from the payload's IR "
                                "(kforge-compile --sample-outputs: no kforge lowering; {1})",
                                config.referenceSamples, noCpuBuild)
                      .str();
  return check; // status "": to be run
}

Candidate kforge::tune::prepareReferenceSamples(const TuneConfig &config, const Tools &tools, StringRef baselineDir) {
  auto start = std::chrono::steady_clock::now();
  Candidate c;
  std::string dir = joinPath(config.runDir, "reference-check");
  llvm::sys::fs::create_directories(dir);
  c.dir = joinPath(dir, "samples.json");
  llvm::sys::fs::remove(c.dir);
  std::vector<std::string> args = {config.payloadPath,
                                   "--sample-outputs",
                                   c.dir,
                                   "--manifest",
                                   joinPath(baselineDir, "kernel.json"),
                                   "--samples",
                                   std::to_string(config.referenceSamples),
                                   "--sample-seconds",
                                   llvm::formatv("{0}", config.referenceSampleSeconds).str()};
  if (!config.entry.empty())
    args.insert(args.end(), {"--entry", config.entry});
  std::string message;
  std::string log = joinPath(dir, "samples.log");
  int rc = runProgram(tools.compile, args, log, config.referenceSampleSeconds + 120, message);
  c.compileSeconds = secondsSince(start);
  c.compiled = rc == 0;
  c.stage = "sample-outputs";
  if (!c.compiled) {
    // kforge-compile's own error line says why (an op the interpreter has no meaning for, the time limit).
    std::string text = readText(log);
    size_t at = text.find("error: ");
    c.message = at != std::string::npos ? text.substr(at + 7, text.find('\n', at) - at - 7)
                                        : (message.empty() ? "exit " + std::to_string(rc) : message);
  }
  return c;
}

Candidate kforge::tune::compileBaseline(const TuneConfig &config, const Tools &tools) {
  Candidate c;
  c.dir = joinPath(config.runDir, "baseline");
  compileCandidate(config, tools, c, /*naive=*/config.target == "gpu");
  return c;
}

Candidate kforge::tune::compileIndependent(const TuneConfig &config, const Tools &tools) {
  TuneConfig cpu = config;
  cpu.target = "cpu";
  Candidate c;
  c.dir = joinPath(config.runDir, "reference-check");
  compileCandidate(cpu, tools, c, /*naive=*/false);
  return c;
}

/// Reads the reference check's outcome from the first baseline run's report into `check`.
static void readReferenceCheck(const RunOutcome &run, ReferenceCheck &check) {
  const json::Object *report = run.report.getAsObject();
  const json::Object *result = report ? report->getObject("reference_check") : nullptr;
  if (result) {
    check.relL2Error = result->getNumber("rel_l2_error");
    check.maxAbsError = result->getNumber("max_abs_error");
  }
  StringRef status = result ? result->getString("status").value_or("") : "";
  if (StringRef(run.reason).starts_with("the reference disagrees") || status == "incorrect") {
    check.status = "disagrees";
    check.reason = result && result->getString("why") ? result->getString("why")->str() : run.reason;
    return;
  }
  if (status == "correct") {
    check.status = "agrees";
    check.reason = "seed 0 agrees within the runner's tolerance";
    return;
  }
  if (status == "inconclusive") {
    check.status = "inconclusive";
    check.reason = result->getString("why").value_or("the comparison proves nothing").str();
    return;
  }
  check.status = "skipped";
  check.reason = "not checked: the check could not run: " + (run.reason.empty() ? run.status : run.reason);
}

/// Whether the reference is still to be checked against `independent`; an independent computation that could
/// not be made leaves `check` "skipped", saying why.
static bool referenceCheckToRun(const Candidate *independent, ReferenceCheck &check) {
  if (!check.status.empty() || !independent)
    return false;
  if (independent->compiled)
    return true;
  check.status = "skipped";
  check.reason =
      check.method == "samples"
          ? "not checked: the output elements could not be computed: " + independent->message
          : "not checked: the independent build does not compile (" + independent->stage + "): " + independent->message;
  return false;
}

/// Says on stderr that the reference failed its check, and that the search stops.
static void reportDisagreement(const TuneConfig &config, const ReferenceCheck &check, StringRef report) {
  llvm::errs() << "kforge-tune: error: the reference (the untransformed payload's "
               << (config.target == "gpu" ? "naive GPU build" : "build") << ") disagrees with " << check.against << ": "
               << check.reason << "; no candidate can be verified against it, so the search stops (see " << report
               << ")\n";
}

RunOutcome kforge::tune::firstBaselineRun(const TuneConfig &config, const Tools &tools, StringRef baselineDir,
                                          const Candidate *independent, ReferenceCheck &check, Evaluator *runner) {
  std::vector<std::string> checkArgs;
  bool checking = referenceCheckToRun(independent, check);
  bool samples = check.method == "samples";
  if (!checking && runner)
    return runner->runBaseline(config, 1, 0, -1, "first-run.json");
  // The sampled check rides on the long-lived runner's first request (which then holds seed 0 for the search);
  // the CPU build is a third artifact, which only a runner process of its own loads.
  RunOutcome first;
  if (checking && samples && runner) {
    first = runner->runBaseline(config, 1, 0, -1, "first-run.json", independent->dir);
  } else {
    if (checking)
      checkArgs = {samples ? "--check-reference-samples" : "--check-reference-against", independent->dir};
    first = runCandidate(config, tools, baselineDir, baselineDir, 1, 0, 0, checkArgs, "first-run.json");
  }
  if (!checking)
    return first;
  check.seconds = first.seconds;
  readReferenceCheck(first, check);
  if (check.status == "disagrees") {
    reportDisagreement(config, check, joinPath(baselineDir, "first-run.json"));
    return first;
  }
  // A check that could not run (the CPU build crashed or timed out) leaves the baseline's own run to decide.
  if (check.status == "skipped" && first.status != "correct")
    first = runner ? runner->runBaseline(config, 1, 0, -1, "first-run.json")
                   : runCandidate(config, tools, baselineDir, baselineDir, 1, 0, 0, {}, "first-run.json");
  return first;
}

void kforge::tune::checkHeldReference(const TuneConfig &config, const Candidate &independent, ReferenceCheck &check,
                                      Evaluator &runner) {
  if (!referenceCheckToRun(&independent, check))
    return;
  RunOutcome run = runner.checkHeldReference(config, independent.dir);
  check.seconds = run.seconds;
  readReferenceCheck(run, check);
  if (check.status == "disagrees")
    reportDisagreement(config, check, joinPath(joinPath(config.runDir, "baseline"), "reference-check.json"));
}

/// The judge could not time the run because its clock disagreed with the claimed calls on every attempt: on an
/// honest build (the baseline), other work on the machine.
static bool timingDisturbed(const RunOutcome &run) {
  const json::Object *report = run.report.getAsObject();
  return report && report->getBoolean("timing_disturbed").value_or(false);
}

std::optional<DatabaseRecord> kforge::tune::measureBaseline(const TuneConfig &config, const Tools &tools,
                                                            const PayloadFacts &facts, const Candidate &c,
                                                            const Candidate *independent, ReferenceCheck &check,
                                                            Evaluator *runner) {
  DatabaseRecord record;
  record.id = 0;
  record.kind = "baseline";
  record.description = config.target == "gpu" ? "naive GPU mapping (one thread per output point, one kernel per op)"
                                              : "untransformed payload (loops)";
  record.payloadHash = facts.structuralHash;
  record.target = config.target;
  record.versions = toolVersions();
  record.timestamp = timestampNow();
  record.compileSeconds = c.compileSeconds;
  if (!c.compiled) {
    llvm::errs() << "kforge-tune: error: the untransformed payload does not compile (" << c.stage
                 << "): " << c.message << "\n";
    return std::nullopt;
  }
  auto cannotRun = [&](const RunOutcome &run) {
    llvm::errs() << "kforge-tune: error: the untransformed payload does not run: "
                 << (run.reason.empty() ? run.status : run.reason) << "\n";
    if (timingDisturbed(run))
      llvm::errs() << "kforge-tune: note: other work disturbed the baseline's timing on three tries, seconds apart: "
                      "tune on a quieter machine, or with fewer measurers per core\n";
    else if (config.target == "gpu" && run.status != "incorrect") // (a verdict on its outputs: it ran)
      llvm::errs() << "kforge-tune: note: is there a GPU, and is the runtime (" << tools.runtime
                   << ") built? --target cpu tunes for the CPU\n";
    return std::nullopt;
  };
  // With the search's long-lived runner, and no CPU build to check the reference against (a third artifact,
  // which only a runner process of its own loads), one request does it all: it verifies the baseline on every
  // seed the trials use (each run is the reference's own, kept in the runner's memory, so the first trial finds
  // its seeds drawn and their reference outputs computed, while the first batch compiles), checks the reference
  // against the sampled output elements on seed 0, and times it, with the runner's fewest repetitions when its
  // verification runs took longer than --slow-baseline-ms. (A first run of its own, which once told the timing
  // how slow the baseline is, ran and copied seed 0 twice: 4 of the 13 s of a 6.4 GB softmax's set-up.)
  // Otherwise: first one run of seed 0 with no timing (it stores seed 0's reference outputs in the seed cache,
  // says how long a baseline run takes, and checks the reference), then the timing.
  bool oneRequest = runner && config.runner == "serve" &&
                    !(check.status.empty() && independent && independent->compiled && check.method != "samples");
  RunOutcome first;
  std::string samples;
  if (oneRequest) {
    if (referenceCheckToRun(independent, check))
      samples = independent->dir;
  } else {
    first = firstBaselineRun(config, tools, c.dir, independent, check, runner);
    if (check.status == "disagrees")
      return std::nullopt;
    if (first.status != "correct")
      return cannotRun(first);
  }
  auto firstRunOf = [](const RunOutcome &outcome) {
    if (const json::Object *report = outcome.report.getAsObject())
      if (const json::Array *runs = report->getArray("verification_runs_ms"))
        if (!runs->empty())
          return (*runs)[0].getAsNumber().value_or(0);
    return 0.0;
  };
  double firstRunMs = oneRequest ? 0 : firstRunOf(first);
  // Every speed-up is measured against the baseline, so a fast one gets all its repetitions unless that takes
  // more than 10 s (then at least 10: the naive 8192^3 matmul runs 0.86 s a call on the H200, and 23 calls took
  // a short tuning budget whole). A slow one gets the runner's fewest: 10 repetitions after one warm-up (the
  // verification runs have loaded it). kforge-run refuses fewer than 10.
  bool slow = !oneRequest && firstRunMs > config.slowBaselineMs;
  TuneConfig timing = config;
  timing.timingBudgetMs = slow ? 0 : 10000;
  if (oneRequest)
    timing.slowRunMs = config.slowBaselineMs;
  std::vector<std::string> timingArgs;
  if (slow)
    timingArgs = {"--warmup", "1"};
  // Through the long-lived runner the timed run also verifies every seed the trials use (above).
  int seeds = runner && config.runner == "serve" ? config.seeds : 1;
  auto timeBaseline = [&](StringRef checkSamples) {
    int reps = slow ? 10 : config.reps;
    return runner ? runner->runBaseline(timing, seeds, reps, slow ? 1 : -1, "run.json", checkSamples)
                  : runCandidate(timing, tools, c.dir, c.dir, 1, reps, 0, timingArgs);
  };
  RunOutcome run = timeBaseline(samples);
  if (!samples.empty()) {
    check.seconds = run.seconds;
    readReferenceCheck(run, check);
    if (check.status == "disagrees") {
      reportDisagreement(config, check, joinPath(c.dir, "run.json"));
      return std::nullopt;
    }
  }
  // Every speed-up is relative to this one timing, so a phase the judge found disturbed (other work took the
  // machine meanwhile: compiles, another tuner, a Ray measurer beside this one) is timed again after a pause
  // rather than ending the run. The judge's check stays whole: each attempt is judged as before.
  for (int pauseSeconds : {1, 4}) {
    if (run.status == "correct" || !timingDisturbed(run))
      break;
    llvm::errs() << "kforge-tune: note: the baseline's timing was disturbed by other work on this machine; timing it "
                    "again in "
                 << pauseSeconds << " s\n";
    std::this_thread::sleep_for(std::chrono::seconds(pauseSeconds));
    run = timeBaseline("");
  }
  if (run.status != "correct" || run.medianMs <= 0)
    return cannotRun(run);
  if (oneRequest) {
    firstRunMs = firstRunOf(run);
    if (const json::Object *report = run.report.getAsObject())
      slow = report->getBoolean("slow_run").value_or(false);
  }
  record.status = "correct";
  record.timeMs = run.medianMs;
  record.runSeconds = first.seconds + run.seconds;
  if (json::Object *report = run.report.getAsObject()) {
    (*report)["first_run_ms"] = firstRunMs;
    // The seed-0 run's breakdown (inputs drawn, the reference run, the copies): most of a large problem's set-up.
    if (const json::Object *firstReport = first.report.getAsObject())
      if (const json::Value *phases = firstReport->get("phases_ms"))
        (*report)["first_run_phases_ms"] = *phases;
    (*report)["slow_baseline"] = slow;
  }
  record.run = std::move(run.report);
  return record;
}

Evaluator::Evaluator(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts)
    : config(config), tools(tools), facts(facts) {}

Evaluator::~Evaluator() = default;

DatabaseRecord Evaluator::candidateRecord(const Candidate &c, std::optional<int64_t> parent) const {
  const Proposal &p = c.proposal;
  DatabaseRecord record;
  record.id = c.id;
  record.kind = "candidate";
  record.policy = p.policy;
  record.island = p.island;
  record.step = p.step;
  record.schedule = toJSON(p.schedule);
  record.scheduleHash = proposalHash(p);
  record.description = p.script.empty() ? describe(p.schedule) : std::string("transform script");
  record.payloadHash = facts.structuralHash;
  record.target = config.target;
  if (config.target == "gpu") {
    record.chip = config.chip;
    record.l2Flush = config.l2Flush;
  }
  record.versions = toolVersions();
  record.timestamp = timestampNow();
  record.compileSeconds = c.compileSeconds;
  if (!p.script.empty())
    record.script = p.script;
  record.parent = parent;
  return record;
}

RunnerServer &Evaluator::runner() {
  if (!server)
    server = std::make_unique<RunnerServer>(tools.run, serverArgs(config, tools, joinPath(config.runDir, "baseline")),
                                            joinPath(config.runDir, "runner.log"));
  return *server;
}

RunOutcome Evaluator::measure(const TuneConfig &runConfig, const Candidate &c, double cutoffMs) {
  std::string baselineDir = joinPath(config.runDir, "baseline");
  if (config.runner != "serve")
    return runCandidate(runConfig, tools, c.dir, baselineDir, config.seeds, config.reps, cutoffMs);
  return runOnServer(runConfig, runner(), c.dir, config.seeds, config.reps, cutoffMs);
}

RunOutcome Evaluator::runBaseline(const TuneConfig &runConfig, int seeds, int reps, int warmup, StringRef outputName,
                                  StringRef referenceSamples) {
  std::string baselineDir = joinPath(config.runDir, "baseline");
  if (config.runner == "serve")
    return runOnServer(runConfig, runner(), baselineDir, seeds, reps, 0, warmup, outputName, referenceSamples);
  std::vector<std::string> args;
  if (warmup >= 0)
    args = {"--warmup", std::to_string(warmup)};
  if (!referenceSamples.empty())
    args.insert(args.end(), {"--check-reference-samples", referenceSamples.str()});
  return runCandidate(runConfig, tools, baselineDir, baselineDir, seeds, reps, 0, args, outputName);
}

RunOutcome Evaluator::checkHeldReference(const TuneConfig &runConfig, StringRef referenceSamples) {
  std::string baselineDir = joinPath(config.runDir, "baseline");
  return runOnServer(runConfig, runner(), baselineDir, 1, 0, 0, -1, "reference-check.json", referenceSamples,
                     /*referenceCheckOnly=*/true);
}

void Evaluator::setBaseline(const DatabaseRecord &baseline) {
  double firstRunMs = 0;
  if (baseline.run)
    if (const json::Object *report = baseline.run->getAsObject())
      firstRunMs = report->getNumber("first_run_ms").value_or(0);
  cutoffSlackMs = runSlackMs(firstRunMs, baseline.timeMs.value_or(0));
}

DatabaseRecord Evaluator::evaluate(Candidate &c, double baselineMs, double bestMs, double budgetLeft,
                                   std::optional<int64_t> parent) {
  DatabaseRecord record = candidateRecord(c, parent);
  if (!c.compiled) {
    if (c.faultyAction < 0 && c.proposal.script.empty() && (c.stage == "apply" || c.stage == "verify"))
      c.faultyAction = bisectFailingAction(config, tools, facts, c);
    record.status = "compile-failed";
    record.stage = c.stage;
    record.reason = c.message;
    record.diagnostics = json::Array(c.diagnostics);
    if (c.faultyAction >= 0)
      record.action = c.faultyAction;
    record.score = 0.0;
    return record;
  }
  double score = config.weights.compiles;
  double cutoff = tooSlowCutoffMs(config.cutoffFactor, baselineMs, config.cutoffBestFactor, bestMs, cutoffSlackMs);
  TuneConfig runConfig = config;
  runConfig.runTimeout = trialRunTimeoutSeconds(config.runTimeout, cutoff, config.seeds, config.reps, budgetLeft);
  RunOutcome run = measure(runConfig, c, cutoff);
  record.runTimeoutSeconds = runConfig.runTimeout;
  record.status = run.status;
  record.runSeconds = run.seconds;
  if (!run.reason.empty())
    record.reason = run.reason;
  const json::Object *report = run.report.getAsObject();
  if (report) {
    if (const json::Value *resources = report->get("resources"))
      record.resources = *resources;
    if (const json::Value *server = report->get("server"))
      record.runner = *server; // which long-lived runner process measured it, and its request number
    // The wall time of each verification run (the first also loads the module): the too-slow cutoff's
    // slack and first-run allowance are judged against these.
    if (const json::Value *runs = report->get("verification_runs_ms"))
      record.verificationRunsMs = *runs;
    // Where the runner's time went (its copies, the runs, the comparison): what a slow search is diagnosed by.
    if (const json::Value *phases = report->get("phases_ms"))
      record.phasesMs = *phases;
  }
  if (run.status == "correct" && run.medianMs > 0) {
    score += config.weights.correct + config.weights.speedup * std::log(bestMs / run.medianMs);
    record.timeMs = run.medianMs;
    record.speedupVsBaseline = baselineMs / run.medianMs;
    record.speedupVsPreviousBest = bestMs / run.medianMs;
    if (const json::Object *timing = report ? report->getObject("timing") : nullptr)
      record.timing = json::Object(*timing);
  }
  record.score = score;
  return record;
}
