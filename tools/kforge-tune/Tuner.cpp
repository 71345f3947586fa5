//===- Tuner.cpp - kforge-tune's search loop ------------------------------===//

#include "Tuner.h"

#include "Database.h"
#include "Files.h"
#include "Report.h"
#include "RunnerServer.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <mutex>

#ifndef KFORGE_VERSION
#define KFORGE_VERSION "unknown"
#endif

using namespace kforge::tune;
using llvm::StringRef;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Files and processes
//===----------------------------------------------------------------------===//

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

static std::string nowText() {
  std::time_t t = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buffer;
}

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
  int rc = llvm::sys::ExecuteAndWait(tools.compile, argv, std::nullopt, {}, 300, 0, &message);
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
// Evaluating one candidate
//===----------------------------------------------------------------------===//

namespace {

struct Candidate {
  int id = 0;
  Proposal proposal;
  std::string dir, recipePath;
  std::vector<int> actionLines;
  // Compile outcome.
  bool compiled = false;
  std::string stage, compileStatus, message;
  json::Array diagnostics;
  int faultyAction = -1;
  double compileSeconds = 0;
};

struct RunOutcome {
  std::string status; ///< correct, incorrect, inconclusive, failed
  double medianMs = 0;
  std::string reason;
  json::Value report = nullptr;
  double seconds = 0;
};

} // namespace

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

/// kforge-compile for one candidate (recipe empty: the untransformed payload; `naive`: the GPU reference).
static void compileCandidate(const TuneConfig &config, const Tools &tools, Candidate &c, bool naive) {
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
  // Trace the first error located in the schedule back to the action that rendered it.
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

/// Applies a transform library to the payload without lowering it (kforge-compile --schedule-only): ""
/// when it parses, passes the handle checks, applies and verifies, else the errors as text.
static std::string checkScript(const TuneConfig &config, const Tools &tools, const std::string &script) {
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
  return args;
}

/// One trial's verification and timing by the search's long-lived runner.
static RunOutcome runOnServer(const TuneConfig &config, RunnerServer &server, StringRef candidateDir, int seeds,
                              int reps, double cutoffMs) {
  auto start = std::chrono::steady_clock::now();
  std::string output = joinPath(candidateDir, "run.json");
  llvm::sys::fs::remove(output);
  json::Object request{{"candidate", candidateDir.str()}, {"seeds", seeds}, {"reps", reps}, {"output", output}};
  if (cutoffMs > 0)
    request["cutoff_ms"] = cutoffMs;
  if (config.timingBudgetMs > 0)
    request["timing_budget_ms"] = config.timingBudgetMs;
  std::string why;
  std::optional<std::string> reply =
      server.request(llvm::formatv("{0}", json::Value(std::move(request))).str(), config.runTimeout, why);
  std::optional<json::Value> report;
  if (reply) {
    if (auto parsed = json::parse(*reply))
      report = std::move(*parsed);
    else
      why = "unreadable reply: " + llvm::toString(parsed.takeError());
  }
  RunOutcome outcome = outcomeOf(std::move(report), why);
  outcome.seconds = secondsSince(start);
  return outcome;
}

static RunOutcome runCandidate(const TuneConfig &config, const Tools &tools, StringRef candidateDir,
                               StringRef referenceDir, int seeds, int reps, double cutoffMs = 0) {
  auto start = std::chrono::steady_clock::now();
  std::string output = joinPath(candidateDir, "run.json");
  std::vector<std::string> args = {"--candidate", candidateDir.str(), "--reference", referenceDir.str(),
                                   "--seeds", std::to_string(seeds), "--reps", std::to_string(reps),
                                   "--timeout", std::to_string(config.runTimeout), "--output", output};
  if (config.target == "gpu") {
    if (!tools.runtime.empty())
      args.insert(args.end(), {"--runtime", tools.runtime});
    args.insert(args.end(), {"--l2-flush", config.l2Flush});
  }
  if (cutoffMs > 0)
    args.insert(args.end(), {"--cutoff-ms", std::to_string(cutoffMs)});
  if (config.timingBudgetMs > 0)
    args.insert(args.end(), {"--timing-budget-ms", std::to_string(config.timingBudgetMs)});
  // Inputs and the reference's outputs are computed once per seed for the whole run, not per candidate.
  args.insert(args.end(), {"--cache-dir", joinPath(config.runDir, "seed-cache")});
  llvm::sys::fs::remove(output);
  std::string message;
  runProgram(tools.run, args, joinPath(candidateDir, "run.log"), config.runTimeout + 60, message);
  RunOutcome outcome = outcomeOf(readJSON(output), message);
  outcome.seconds = secondsSince(start);
  return outcome;
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

static json::Object versions() {
  return json::Object{{"kforge", KFORGE_VERSION}, {"llvm", LLVM_VERSION_STRING}};
}

/// The history as the policies see it.
static std::vector<TrialRecord> historyOf(const Database &db) {
  std::vector<TrialRecord> history;
  for (const json::Object &record : db.records()) {
    if (record.getString("kind") != StringRef("candidate"))
      continue;
    TrialRecord r;
    r.id = static_cast<int>(record.getInteger("id").value_or(0));
    if (const json::Value *schedule = record.get("schedule"))
      parseSchedule(*schedule, r.schedule);
    r.hash = record.getString("schedule_hash").value_or("").str();
    r.status = record.getString("status").value_or("").str();
    r.timeMs = record.getNumber("time_ms").value_or(0);
    r.island = record.getString("island").value_or("").str();
    r.reason = record.getString("reason").value_or("").str();
    r.description = record.getString("description").value_or("").str();
    r.policy = record.getString("policy").value_or("").str();
    history.push_back(std::move(r));
  }
  return history;
}

static const json::Object *baselineRecord(const Database &db) {
  for (const json::Object &record : db.records())
    if (record.getString("kind") == StringRef("baseline"))
      return &record;
  return nullptr;
}

static const json::Object *bestRecord(const Database &db) {
  const json::Object *best = nullptr;
  for (const json::Object &record : db.records()) {
    if (record.getString("kind") != StringRef("candidate") || record.getString("status") != StringRef("correct"))
      continue;
    double t = record.getNumber("time_ms").value_or(0);
    if (t > 0 && (!best || t < best->getNumber("time_ms").value_or(0)))
      best = &record;
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Progress
//===----------------------------------------------------------------------===//

namespace {
class Progress {
public:
  Progress(bool quiet, int total) : quiet(quiet), total(total), terminal(llvm::sys::Process::StandardErrIsDisplayed()) {}
  void trial(int done, int failures, double bestSpeedup, double bestMs, double elapsed, const std::string &line) {
    if (quiet)
      return;
    if (!terminal) {
      llvm::errs() << line << "\n";
      return;
    }
    double eta = done > 0 ? elapsed / done * std::max(0, total - done) : 0;
    llvm::errs() << llvm::formatv("\r\x1b[K[kforge-tune] trial {0}/{1} | {2} failed | best {3:F2}x ({4:F3} ms) | "
                                  "ETA {5}s",
                                  done, total, failures, bestSpeedup, bestMs, static_cast<int>(eta));
    llvm::errs().flush();
  }
  void note(const std::string &text) {
    if (quiet)
      return;
    if (terminal)
      llvm::errs() << "\r\x1b[K";
    llvm::errs() << text << "\n";
  }
  void end() {
    if (!quiet && terminal)
      llvm::errs() << "\n";
  }

private:
  bool quiet;
  int total;
  bool terminal;
};
} // namespace

//===----------------------------------------------------------------------===//
// The run directory
//===----------------------------------------------------------------------===//

/// run.json: what the run tunes and how; a resumed run must match it.
static json::Object runDescription(const TuneConfig &config, const PayloadFacts &facts) {
  return json::Object{{"format", "kforge-tune-run/1"},
                      {"payload", config.payloadPath},
                      {"payload_hash", facts.structuralHash},
                      {"facts", toJSON(facts)},
                      {"target", config.target},
                      {"chip", config.target == "gpu" ? json::Value(config.chip) : json::Value(nullptr)},
                      {"l2_flush", config.target == "gpu" ? json::Value(config.l2Flush) : json::Value(nullptr)},
                      {"entry", facts.entry},
                      {"policy", config.policy},
                      {"seed", static_cast<int64_t>(config.seed)},
                      {"hardware", toJSON(config.profile)},
                      {"score", json::Object{{"compiles", config.weights.compiles},
                                             {"correct", config.weights.correct},
                                             {"speedup", config.weights.speedup}}},
                      {"versions", versions()}};
}

/// Exports the best schedule and its artifact; writes the report.
static void finishRun(const TuneConfig &config, const PayloadFacts &facts, const Database &db, Progress &progress) {
  const json::Object *best = bestRecord(db);
  if (best) {
    int id = static_cast<int>(best->getInteger("id").value_or(0));
    Schedule schedule;
    parseSchedule(*best->get("schedule"), schedule);
    std::optional<StringRef> script = best->getString("script");
    writeText(joinPath(config.runDir, "best.mlir"),
              script ? script->str() : renderSchedule(schedule, facts, config.target));
    writeJSON(joinPath(config.runDir, "best.json"), json::Object(*best));
    std::string from = joinPath(joinPath(config.runDir, "candidates"), std::to_string(id));
    std::string to = joinPath(config.runDir, "best");
    // A stale best/ (an earlier best, before a resume) must not survive next to the new best.json.
    llvm::sys::fs::remove_directories(to);
    if (llvm::sys::fs::exists(joinPath(from, "kernel.so"))) {
      llvm::sys::fs::create_directories(to);
      for (StringRef file : {"kernel.so", "kernel.json", "kernel.scheduled.mlir", "kernel.host.mlir"})
        llvm::sys::fs::copy_file(joinPath(from, file), joinPath(to, file));
    } else {
      progress.note("kforge-tune: the best candidate's artifact is gone (a run carried without its candidates); "
                    "kforge-tune --replay " + config.runDir + " rebuilds it");
    }
  }
  writeReport(config.runDir, db.records(), json::Object(runDescription(config, facts)));
  progress.note(best ? "kforge-tune: best schedule in " + joinPath(config.runDir, "best.mlir") + ", kernel in " +
                           joinPath(config.runDir, "best") + ", report in " + joinPath(config.runDir, "report.md")
                     : "kforge-tune: no correct kernel found; report in " + joinPath(config.runDir, "report.md"));
}

/// Keeps what a later look needs (schedule, diagnostics, logs, run report) and drops the compiled files.
static void pruneCandidate(const std::string &dir) {
  for (StringRef file : {"kernel.so", "kernel.host.mlir"})
    llvm::sys::fs::remove(joinPath(dir, file));
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

namespace {
class Tuner {
public:
  Tuner(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts, Database &db,
        std::unique_ptr<Policy> policy)
      : config(config), tools(tools), facts(facts), db(db), progress(config.quiet || config.json, config.trials),
        policy(std::move(policy)) {}

  int run() {
    start = std::chrono::steady_clock::now();
    if (!baselineRecord(db) && !measureBaseline())
      return 1;
    if (!ensureBaselineArtifact())
      return 1;
    const json::Object *baseline = baselineRecord(db);
    baselineMs = baseline->getNumber("time_ms").value_or(0);
    bestMs = baselineMs;
    if (const json::Object *best = bestRecord(db))
      bestCandidateMs = best->getNumber("time_ms").value_or(bestCandidateMs);
    if (const json::Object *best = bestRecord(db))
      bestMs = std::min(bestMs, best->getNumber("time_ms").value_or(bestMs));
    int done = 0, failures = 0, sinceImprovement = 0;
    for (const json::Object &r : db.records())
      if (r.getString("kind") == StringRef("candidate")) {
        ++done;
        if (r.getString("status") != StringRef("correct"))
          ++failures;
      }
    if (done > 0)
      progress.note("kforge-tune: resuming after " + std::to_string(done) + " finished trials");

    std::string why;
    unsigned jobs = config.jobs > 0 ? config.jobs : llvm::hardware_concurrency().compute_thread_count();
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
    while (true) {
      if (done >= config.trials) {
        why = "trial budget reached";
        break;
      }
      if (config.timeBudget > 0 && secondsSince(start) >= config.timeBudget) {
        why = "time budget reached";
        break;
      }
      if (config.earlyStop > 0 && sinceImprovement >= config.earlyStop) {
        why = "no improvement in " + std::to_string(config.earlyStop) + " trials";
        break;
      }
      int batch = std::min<int>(std::max<unsigned>(jobs, 2), config.trials - done);
      std::vector<Proposal> proposals = policy->propose(historyOf(db), batch);
      if (proposals.empty()) {
        why = "the policy has nothing new to try";
        break;
      }
      std::vector<Candidate> candidates = prepare(proposals);
      TuneConfig batchConfig = config;
      if (config.timeBudget > 0)
        batchConfig.compileTimeout = std::max(
            10, std::min(config.compileTimeout, static_cast<int>(config.timeBudget - secondsSince(start)) + 1));
      for (Candidate &c : candidates)
        pool.async([&, ptr = &c] { compileCandidate(batchConfig, tools, *ptr, /*naive=*/false); });
      pool.wait();
      for (Candidate &c : candidates) {
        // Candidates compiled but not measured are not recorded: a resumed run proposes them again.
        if (config.timeBudget > 0 && secondsSince(start) >= config.timeBudget)
          break;
        double before = bestMs;
        json::Object record = evaluate(c);
        // A run cut off because the time budget ran out was not measured: like the candidates after it, it is
        // not recorded, and a resumed run proposes it again.
        if (config.timeBudget > 0 && secondsSince(start) >= config.timeBudget &&
            record.getString("status") == StringRef("failed") &&
            record.getString("reason").value_or("").contains("timed out"))
          break;
        if (llvm::Error e = db.append(record)) {
          llvm::errs() << "kforge-tune: error: " << llvm::toString(std::move(e)) << "\n";
          return 1;
        }
        ++done;
        bool correct = record.getString("status") == StringRef("correct");
        if (!correct)
          ++failures;
        sinceImprovement = bestMs < before ? 0 : sinceImprovement + 1;
        // The artifact is kept while it is the best candidate's, even one slower than the untransformed payload
        // (best/ exports the search's best kernel; a payload too small for any schedule to pay off has one).
        double time = record.getNumber("time_ms").value_or(0);
        bool bestCandidate = correct && time > 0 && time < bestCandidateMs;
        if (bestCandidate)
          bestCandidateMs = time;
        if (!config.keepCandidates && !bestCandidate)
          pruneCandidate(c.dir);
        progress.trial(done, failures, baselineMs / bestMs, bestMs, secondsSince(start), trialLine(record));
      }
    }
    progress.end();
    progress.note("kforge-tune: stopped: " + why);
    finishRun(config, facts, db, progress);
    if (config.json)
      printSummary(why);
    return bestRecord(db) ? 0 : 1;
  }

private:
  bool measureBaseline() {
    Candidate c;
    c.dir = joinPath(config.runDir, "baseline");
    compileCandidate(config, tools, c, /*naive=*/config.target == "gpu");
    json::Object record{{"format", "kforge-tune-record/1"},
                        {"id", 0},
                        {"kind", "baseline"},
                        {"schedule", json::Array()},
                        {"description", config.target == "gpu" ? "naive GPU mapping (one thread per output point, "
                                                                 "one kernel per op)"
                                                               : "untransformed payload (loops)"},
                        {"payload_hash", facts.structuralHash},
                        {"target", config.target},
                        {"versions", versions()},
                        {"timestamp", nowText()},
                        {"compile_s", c.compileSeconds}};
    if (!c.compiled) {
      llvm::errs() << "kforge-tune: error: the untransformed payload does not compile (" << c.stage
                   << "): " << c.message << "\n";
      return false;
    }
    // The baseline against itself: one seed (it is the reference), timed. Every speed-up is measured against
    // it, so it gets all its repetitions unless that takes more than 10 s (then at least 10): the naive
    // 8192^3 matmul runs 0.86 s a call on the H200, and 23 calls took a short tuning budget whole.
    TuneConfig fullTiming = config;
    fullTiming.timingBudgetMs = 10000;
    RunOutcome run = runCandidate(fullTiming, tools, c.dir, c.dir, 1, config.reps);
    if (run.status != "correct" || run.medianMs <= 0) {
      llvm::errs() << "kforge-tune: error: the untransformed payload does not run: " << run.reason << "\n";
      if (config.target == "gpu")
        llvm::errs() << "kforge-tune: note: is there a GPU, and is the runtime (" << tools.runtime
                     << ") built? --target cpu tunes for the CPU\n";
      return false;
    }
    record["status"] = "correct";
    record["time_ms"] = run.medianMs;
    record["run"] = std::move(run.report);
    if (llvm::Error e = db.append(record)) {
      llvm::errs() << "kforge-tune: error: " << llvm::toString(std::move(e)) << "\n";
      return false;
    }
    progress.note(llvm::formatv("kforge-tune: baseline ({0}) {1:F3} ms", config.target == "gpu" ? "naive GPU" : "loops",
                                run.medianMs));
    return true;
  }

  /// A resumed run may have carried only its database (another machine, a pruned directory): the baseline
  /// every candidate is verified against is rebuilt from the payload, as it was first built.
  bool ensureBaselineArtifact() {
    std::string dir = joinPath(config.runDir, "baseline");
    if (llvm::sys::fs::exists(joinPath(dir, "kernel.so")))
      return true;
    Candidate c;
    c.dir = dir;
    compileCandidate(config, tools, c, /*naive=*/config.target == "gpu");
    if (!c.compiled) {
      llvm::errs() << "kforge-tune: error: cannot rebuild the baseline (" << c.stage << "): " << c.message << "\n";
      return false;
    }
    progress.note("kforge-tune: rebuilt the baseline artifact the database was measured against");
    return true;
  }

  std::vector<Candidate> prepare(const std::vector<Proposal> &proposals) {
    int nextId = 0;
    for (const json::Object &r : db.records())
      nextId = std::max<int>(nextId, static_cast<int>(r.getInteger("id").value_or(0)) + 1);
    std::vector<Candidate> out;
    for (const Proposal &p : proposals) {
      Candidate c;
      c.id = nextId++;
      c.proposal = p;
      c.dir = joinPath(joinPath(config.runDir, "candidates"), std::to_string(c.id));
      llvm::sys::fs::create_directories(c.dir);
      c.recipePath = joinPath(c.dir, "schedule.mlir");
      if (!p.script.empty()) {
        writeText(c.recipePath, p.script); // a transform library as proposed, no actions to trace
      } else {
        writeText(c.recipePath, renderSchedule(p.schedule, facts, config.target, &c.actionLines));
        writeJSON(joinPath(c.dir, "schedule.json"), toJSON(p.schedule));
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  int parentId(const std::string &hash) {
    if (hash.empty())
      return -1;
    for (const json::Object &r : db.records())
      if (r.getString("schedule_hash") == StringRef(hash))
        return static_cast<int>(r.getInteger("id").value_or(-1));
    return -1;
  }

  json::Object evaluate(Candidate &c) {
    json::Object record{{"format", "kforge-tune-record/1"},
                        {"id", c.id},
                        {"kind", "candidate"},
                        {"policy", c.proposal.policy},
                        {"island", c.proposal.island},
                        {"step", c.proposal.step},
                        {"schedule", toJSON(c.proposal.schedule)},
                        {"schedule_hash", proposalHash(c.proposal)},
                        {"description", c.proposal.script.empty() ? describe(c.proposal.schedule)
                                                                  : std::string("transform script")},
                        {"payload_hash", facts.structuralHash},
                        {"target", config.target},
                        {"chip", config.target == "gpu" ? json::Value(config.chip) : json::Value(nullptr)},
                        {"l2_flush", config.target == "gpu" ? json::Value(config.l2Flush) : json::Value(nullptr)},
                        {"versions", versions()},
                        {"timestamp", nowText()},
                        {"compile_s", c.compileSeconds}};
    if (!c.proposal.script.empty())
      record["script"] = c.proposal.script;
    int parent = parentId(c.proposal.parentHash);
    record["parent"] = parent >= 0 ? json::Value(parent) : json::Value(nullptr);
    double score = 0;
    if (!c.compiled) {
      if (c.faultyAction < 0 && c.proposal.script.empty() && (c.stage == "apply" || c.stage == "verify"))
        c.faultyAction = bisectFailingAction(config, tools, facts, c);
      record["status"] = "compile-failed";
      record["stage"] = c.stage;
      record["reason"] = c.message;
      record["diagnostics"] = json::Array(c.diagnostics);
      record["action"] = c.faultyAction >= 0 ? json::Value(c.faultyAction) : json::Value(nullptr);
      record["score"] = 0.0;
      return record;
    }
    score += config.weights.compiles;
    double cutoff = tooSlowCutoffMs(config.cutoffFactor, baselineMs, config.cutoffBestFactor, bestMs);
    std::string baselineDir = joinPath(config.runDir, "baseline");
    TuneConfig runConfig = config;
    double budgetLeft = config.timeBudget > 0 ? std::max(1e-3, config.timeBudget - secondsSince(start)) : 0;
    runConfig.runTimeout = trialRunTimeoutSeconds(config.runTimeout, cutoff, config.seeds, config.reps, budgetLeft);
    RunOutcome run;
    if (config.runner == "serve") {
      if (!server)
        server = std::make_unique<RunnerServer>(tools.run, serverArgs(config, tools, baselineDir),
                                                joinPath(config.runDir, "runner.log"));
      run = runOnServer(runConfig, *server, c.dir, config.seeds, config.reps, cutoff);
    } else {
      run = runCandidate(runConfig, tools, c.dir, baselineDir, config.seeds, config.reps, cutoff);
    }
    record["run_timeout_s"] = runConfig.runTimeout;
    record["status"] = run.status;
    record["run_s"] = run.seconds;
    if (!run.reason.empty())
      record["reason"] = run.reason;
    if (const json::Object *report = run.report.getAsObject()) {
      if (const json::Value *resources = report->get("resources"))
        record["resources"] = *resources;
      if (const json::Value *server = report->get("server"))
        record["runner"] = *server; // which long-lived runner process measured it, and its request number
      // The wall time of each verification run (the first also loads the module): the too-slow cutoff's
      // slack and first-run allowance are judged against these.
      if (const json::Value *runs = report->get("verification_runs_ms"))
        record["verification_runs_ms"] = *runs;
    }
    if (run.status == "correct" && run.medianMs > 0) {
      score += config.weights.correct + config.weights.speedup * std::log(bestMs / run.medianMs);
      record["time_ms"] = run.medianMs;
      record["speedup_vs_baseline"] = baselineMs / run.medianMs;
      record["speedup_vs_previous_best"] = bestMs / run.medianMs;
      if (const json::Object *report = run.report.getAsObject())
        if (const json::Object *timing = report->getObject("timing"))
          record["timing"] = json::Object(*timing);
      bestMs = std::min(bestMs, run.medianMs);
    }
    record["score"] = score;
    return record;
  }

  std::string trialLine(const json::Object &record) {
    std::string status = record.getString("status").value_or("").str();
    std::string line = llvm::formatv("trial {0}: {1}", record.getInteger("id").value_or(0), status);
    if (auto t = record.getNumber("time_ms"))
      line += llvm::formatv(" {0:F3} ms ({1:F2}x)", *t, baselineMs / *t);
    if (auto stage = record.getString("stage"))
      line += " at " + stage->str();
    line += " | " + record.getString("description").value_or("").str();
    if (status != "correct")
      if (auto reason = record.getString("reason"))
        line += " | " + reason->substr(0, 160).str();
    return line;
  }

  void printSummary(const std::string &why) {
    json::Object summary{{"run_dir", config.runDir},  {"stopped", why},          {"target", config.target},
                         {"baseline_ms", baselineMs}, {"trials", 0},             {"failures", 0}};
    int trials = 0, failures = 0;
    for (const json::Object &r : db.records())
      if (r.getString("kind") == StringRef("candidate")) {
        ++trials;
        failures += r.getString("status") != StringRef("correct");
      }
    summary["trials"] = trials;
    summary["failures"] = failures;
    if (const json::Object *best = bestRecord(db)) {
      summary["best"] = json::Object{{"id", *best->getInteger("id")},
                                     {"time_ms", *best->getNumber("time_ms")},
                                     {"speedup_vs_baseline", baselineMs / *best->getNumber("time_ms")},
                                     {"schedule", *best->get("schedule")},
                                     {"description", *best->getString("description")}};
      summary["best_schedule"] = joinPath(config.runDir, "best.mlir");
      summary["best_artifact"] = joinPath(config.runDir, "best");
    }
    llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(summary))) << "\n";
  }

  const TuneConfig &config;
  const Tools &tools;
  const PayloadFacts &facts;
  Database &db;
  Progress progress;
  std::unique_ptr<Policy> policy;
  std::unique_ptr<RunnerServer> server; ///< --runner serve: started at the first trial, restarted after a crash.
  std::chrono::steady_clock::time_point start;
  double baselineMs = 0, bestMs = 0;
  double bestCandidateMs = std::numeric_limits<double>::infinity(); ///< The fastest correct candidate's time.
};
} // namespace

/// Checks a resumed run's description against this invocation.
static bool matchesRun(const json::Object &saved, const json::Object &now, std::string &why) {
  for (StringRef key : {"payload_hash", "target", "chip", "entry"}) {
    const json::Value *a = saved.get(key), *b = now.get(key);
    if (!a || !b || *a != *b) {
      why = "the run directory was made for another " + key.str() + " (see its run.json)";
      return false;
    }
  }
  // A GPU run from before --l2-flush was timed with the dirty flush.
  auto l2 = [](const json::Object &run) {
    return run.getString("l2_flush").value_or(run.getString("target").value_or("") == "gpu" ? "dirty" : "").str();
  };
  if (l2(saved) != l2(now)) {
    why = "the run directory was tuned with --l2-flush " + l2(saved) + ", not " + l2(now) +
          " (its trials' times would not compare; see its run.json)";
    return false;
  }
  return true;
}

static std::optional<Database> openRun(TuneConfig &config, const PayloadFacts &facts, bool resume) {
  if (std::error_code ec = llvm::sys::fs::create_directories(config.runDir)) {
    llvm::errs() << "kforge-tune: error: cannot create " << config.runDir << ": " << ec.message() << "\n";
    return std::nullopt;
  }
  std::string dbPath = joinPath(config.runDir, "db.jsonl");
  std::string runPath = joinPath(config.runDir, "run.json");
  json::Object description = runDescription(config, facts);
  bool exists = llvm::sys::fs::exists(dbPath);
  if (exists && !resume) {
    llvm::errs() << "kforge-tune: error: " << config.runDir
                 << " already holds a tuning database: --resume continues it, or choose another --output\n";
    return std::nullopt;
  }
  if (exists) {
    std::optional<json::Value> saved = readJSON(runPath);
    std::string why = "its run.json is missing or unreadable";
    if (!saved || !saved->getAsObject() || !matchesRun(*saved->getAsObject(), description, why)) {
      llvm::errs() << "kforge-tune: error: cannot resume " << config.runDir << ": " << why << "\n";
      return std::nullopt;
    }
  } else if (!writeJSON(runPath, json::Value(json::Object(description))) ||
             !writeText(joinPath(config.runDir, "payload.mlir"), readText(config.payloadPath))) {
    return std::nullopt;
  }
  llvm::Expected<Database> db = Database::open(dbPath);
  if (!db) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(db.takeError()) << "\n";
    return std::nullopt;
  }
  if (db->droppedLines() && !config.quiet)
    llvm::errs() << "kforge-tune: note: dropped an unfinished last record of " << dbPath << "\n";
  return std::move(*db);
}

int kforge::tune::runTuner(const TuneConfig &original, const Tools &tools) {
  TuneConfig config = original;
  std::optional<PayloadFacts> facts = loadFacts(tools, config.payloadPath, config.entry);
  if (!facts)
    return 1;
  std::string error;
  std::unique_ptr<Policy> policy;
  if (config.policy == "llm" || config.policy == "llm+evolve") {
#ifdef KFORGE_TUNE_WITHOUT_LLM
    llvm::errs() << "kforge-tune: error: this kforge-tune was built without the LLM client\n";
    return 2;
#else
    LLMPolicyOptions options = config.llm;
    options.payloadText = readText(config.payloadPath);
    options.transcriptPath = joinPath(config.runDir, "llm-transcript.jsonl");
    bool quiet = config.quiet;
    options.note = [quiet](const std::string &text) {
      if (!quiet)
        llvm::errs() << text << "\n";
    };
    options.checkScript = [config, tools](const std::string &script) { return checkScript(config, tools, script); };
    options.hybrid = config.policy == "llm+evolve";
    policy = createLLMPolicy(options, *facts, config.profile, config.seed);
#endif
  } else {
    policy = createPolicy(config.policy, *facts, config.profile, config.seed, error);
  }
  if (!policy) {
    llvm::errs() << "kforge-tune: error: " << error << "\n";
    return 2;
  }
  std::optional<Database> db = openRun(config, *facts, config.resume);
  if (!db)
    return 1;
  return Tuner(config, tools, *facts, *db, std::move(policy)).run();
}

namespace {
/// The policy of `--try`: one given schedule.
class GivenSchedule : public Policy {
public:
  explicit GivenSchedule(Schedule s) : s(std::move(s)) {}
  std::string name() const override { return "user"; }
  std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int) override {
    std::string hash = scheduleHash(s);
    if (llvm::any_of(history, [&](const TrialRecord &r) { return r.hash == hash; }))
      return {};
    return {{s, "user", "", "", "given schedule"}};
  }

private:
  Schedule s;
};
} // namespace

int kforge::tune::tryScheduleFile(const TuneConfig &original, const Tools &tools, const std::string &schedulePath) {
  TuneConfig config = original;
  std::optional<PayloadFacts> facts = loadFacts(tools, config.payloadPath, config.entry);
  if (!facts)
    return 1;
  std::optional<json::Value> value = readJSON(schedulePath);
  if (!value) {
    llvm::errs() << "kforge-tune: error: " << schedulePath << " is not a readable JSON file\n";
    return 2;
  }
  Schedule schedule;
  std::vector<Problem> problems = checkSchedule(*value, *facts, config.target, schedule);
  if (!problems.empty()) {
    llvm::outs() << llvm::formatv("{0:2}", invalidScheduleReport(problems)) << "\n";
    return 1;
  }
  std::optional<Database> db = openRun(config, *facts, /*resume=*/true);
  if (!db)
    return 1;
  std::vector<TrialRecord> history = historyOf(*db);
  if (llvm::any_of(history, [&](const TrialRecord &r) { return r.hash == scheduleHash(schedule); })) {
    llvm::errs() << "kforge-tune: this schedule was tried before in " << config.runDir << " (see db.jsonl)\n";
    return 0;
  }
  config.trials = static_cast<int>(history.size()) + 1;
  return Tuner(config, tools, *facts, *db, std::make_unique<GivenSchedule>(schedule)).run();
}

int kforge::tune::replayRun(const std::string &runDir, const Tools &tools, bool quiet, bool verify) {
  std::optional<json::Value> saved = readJSON(joinPath(runDir, "run.json"));
  const json::Object *run = saved ? saved->getAsObject() : nullptr;
  if (!run) {
    llvm::errs() << "kforge-tune: error: " << runDir << " is not a tuning run (no readable run.json)\n";
    return 1;
  }
  TuneConfig config;
  config.runDir = runDir;
  config.timingBudgetMs = 0; // a replay times every repetition
  config.payloadPath = joinPath(runDir, "payload.mlir");
  config.target = run->getString("target").value_or("cpu").str();
  config.chip = run->getString("chip").value_or("sm_90").str();
  config.entry = run->getString("entry").value_or("").str();
  config.l2Flush = run->getString("l2_flush").value_or("dirty").str(); // timed as it was tuned
  config.quiet = quiet;
  std::optional<PayloadFacts> facts = loadFacts(tools, config.payloadPath, config.entry);
  if (!facts)
    return 1;
  if (facts->structuralHash != run->getString("payload_hash").value_or("")) {
    llvm::errs() << "kforge-tune: error: " << config.payloadPath << " is not the payload the run tuned\n";
    return 1;
  }
  llvm::Expected<Database> db = Database::open(joinPath(runDir, "db.jsonl"));
  if (!db) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(db.takeError()) << "\n";
    return 1;
  }
  const json::Object *best = bestRecord(*db);
  if (!best) {
    llvm::errs() << "kforge-tune: error: the run has no correct kernel to replay\n";
    return 1;
  }
  Candidate c;
  parseSchedule(*best->get("schedule"), c.proposal.schedule);
  c.dir = joinPath(runDir, "best");
  c.recipePath = joinPath(runDir, "best.mlir");
  std::optional<StringRef> script = best->getString("script");
  if (script)
    c.proposal.script = script->str();
  if (!writeText(c.recipePath, script ? script->str()
                                      : renderSchedule(c.proposal.schedule, *facts, config.target, &c.actionLines)))
    return 1;
  // Rebuilt from the schedule, not copied from a cache.
  for (StringRef file : {"kernel.so", "kernel.json", "kernel.scheduled.mlir", "kernel.host.mlir"})
    llvm::sys::fs::remove(joinPath(c.dir, file));
  config.useCache = false;
  compileCandidate(config, tools, c, /*naive=*/false);
  if (!c.compiled) {
    llvm::errs() << "kforge-tune: error: the best schedule no longer compiles (" << c.stage << "): " << c.message
                 << "\n";
    return 1;
  }
  json::Object summary{{"schedule", *best->get("schedule")},
                       {"description", best->getString("description").value_or("")},
                       {"transform_library", c.recipePath},
                       {"artifact", c.dir},
                       {"recorded_time_ms", best->getNumber("time_ms").value_or(0)}};
  if (!verify) {
    summary["verified"] = "not run (--build-only)";
    llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(summary))) << "\n";
    return 0;
  }
  int rc = 0;
  Tools runTools = tools;
  std::string baseline = joinPath(runDir, "baseline");
  std::string baselineProblem;
  if (!llvm::sys::fs::exists(joinPath(baseline, "kernel.so"))) {
    // A run directory carried without its artifacts: the reference is rebuilt from the payload, as it was
    // first built (the naive GPU mapping, or plain loops on the CPU).
    Candidate reference;
    reference.dir = baseline;
    compileCandidate(config, tools, reference, /*naive=*/config.target == "gpu");
    if (!reference.compiled)
      baselineProblem = "cannot rebuild the baseline (" + reference.stage + "): " + reference.message;
    else
      summary["baseline"] = "rebuilt from the payload";
  }
  if (baselineProblem.empty()) {
    RunOutcome outcome = runCandidate(config, runTools, c.dir, baseline, 5, 20);
    summary["verified"] = outcome.status;
    if (outcome.medianMs > 0)
      summary["time_ms"] = outcome.medianMs;
    if (!outcome.reason.empty())
      summary["reason"] = outcome.reason;
    rc = outcome.status == "correct" ? 0 : 1;
  } else {
    summary["verified"] = "not run (" + baselineProblem + ")";
    rc = 1;
  }
  llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(summary))) << "\n";
  return rc;
}
