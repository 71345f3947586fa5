//===- Search.cpp - kforge-tune's search loop -----------------------------===//
//
// The policy proposes a batch; the batch compiles in parallel; each candidate that compiled is measured, one
// at a time, and every finished trial is appended to the database before the next, so that a killed search
// resumes where it stopped. On the GPU a candidate is measured as soon as its compile ends (the compiles take
// CPU cores, not the GPU it is timed on), so one slow compile does not hold the batch's others. The loop stops
// at the trial or time budget, after --early-stop trials without a faster kernel, or when the policy has
// nothing new.
//
//===----------------------------------------------------------------------===//

#include "Tuner.h"

#include "Database.h"
#include "Evaluate.h"
#include "Files.h"
#include "Report.h"
#include "RunDirectory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <future>
#include <limits>

using namespace kforge::tune;
using llvm::StringRef;
namespace json = llvm::json;

/// Consecutive compile failures with one message after which the search stops: no schedule got past it, so the
/// payload (an op no action maps, say) is what needs attention, not more schedules.
static constexpr int kSameFailureLimit = 32;

namespace {

/// The progress line on a terminal (one line per trial otherwise), and notes.
class Progress {
public:
  Progress(bool quiet, int total)
      : quiet(quiet), total(total), terminal(llvm::sys::Process::StandardErrIsDisplayed()) {}
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

class Tuner {
public:
  Tuner(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts, Database &db,
        std::unique_ptr<Policy> policy)
      : config(config), tools(tools), facts(facts), db(db), progress(config.quiet || config.json, config.trials),
        policy(std::move(policy)), evaluator(config, tools, facts) {}

  int run();

private:
  /// Measures the baseline if the database has none yet (checking the reference once per payload on the
  /// way) and makes sure its artifact is there. On the GPU the first batch starts compiling meanwhile.
  bool setUp(unsigned jobs, llvm::DefaultThreadPool &pool);
  /// Checks the reference of a run that has a baseline but no check yet (a run from before the check).
  bool checkExistingReference();
  /// Says the check's outcome and keeps it in run.json; false when the reference disagrees.
  bool settleReferenceCheck();
  /// Sets `key` of RUN/run.json (warns when it cannot be written).
  void updateRunJSON(llvm::StringRef key, llvm::json::Value value) const;
  /// Why the search stops before its next batch, or "" to go on.
  std::string stopReason() const;
  enum class BatchEnd { Measured, PolicyExhausted, WriteError };
  /// Proposes the next batch and starts compiling it in `pool`; false when the policy has nothing new.
  BatchEnd startBatch(unsigned jobs, llvm::DefaultThreadPool &pool);
  /// Proposes (unless a batch is already compiling), compiles and measures one batch.
  BatchEnd runBatch(unsigned jobs, llvm::DefaultThreadPool &pool);
  /// The first candidate (by index) whose compile has ended and that is not yet measured, waiting for one;
  /// nothing when every candidate is measured or the time budget runs out while waiting.
  std::optional<size_t> nextCompiled(const std::vector<std::shared_future<void>> &done,
                                     const std::vector<bool> &measured) const;
  /// Time to the first correct trial and trials per minute: kept in run.json, said on stderr.
  void recordSpeed();
  /// Records one measured candidate and reports it; false after a database error.
  bool recordTrial(const Candidate &c, const DatabaseRecord &record);
  /// The proposals as candidates, their schedules written; nothing (said on stderr) when they cannot be written.
  std::optional<std::vector<Candidate>> prepare(const std::vector<Proposal> &proposals);
  std::optional<int64_t> parentId(const std::string &hash) const;
  /// The time budget counts the search (proposing, compiling, verifying and timing candidates), not the one-time
  /// set-up (the baseline's compile and timing, the reference check).
  bool outOfTime() const { return config.timeBudget > 0 && secondsSince(searchStart) >= config.timeBudget; }
  std::string trialLine(const DatabaseRecord &record) const;
  void printSummary(const std::string &why) const;
  /// --no-search: exports the best and the report of what the database holds; the candidates other than the
  /// best lose their compiled files (records measured by kforge.distributed's trial servers keep theirs until here).
  int finishWithoutSearch();

  const TuneConfig &config;
  const Tools &tools;
  const PayloadFacts &facts;
  Database &db;
  Progress progress;
  std::unique_ptr<Policy> policy;
  Evaluator evaluator;
  std::chrono::steady_clock::time_point start, searchStart;
  double baselineMs = 0, bestMs = 0;
  double bestCandidateMs = std::numeric_limits<double>::infinity(); ///< The fastest correct candidate's time.
  int done = 0, failures = 0, sinceImprovement = 0;
  /// The latest candidates' compile failures with one message (the payload, not the schedules, at fault: a
  /// dispatch with an op that no schedule of its root maps to the GPU failed 612 times in 12 s on the H200).
  int sameFailureRun = 0;
  std::string sameFailure;
  ReferenceCheck check;              ///< The reference's check (run.json's "reference_check").
  std::vector<Candidate> compiling;  ///< A batch proposed and compiling in the pool, not yet measured.
  std::vector<std::shared_future<void>> compiled; ///< compiling[i]'s compile, done when ready.
  double setupSeconds = 0;
  int trialsNow = 0;                 ///< Trials finished by this invocation.
  bool correctBefore = false;        ///< A correct trial was recorded before this invocation.
  std::optional<double> firstCorrectSeconds; ///< Seconds from the start to this invocation's first correct trial.
  std::optional<int64_t> firstCorrectId;
  /// When this invocation's first trials compiled and were measured, in seconds from the start (run.json's
  /// search_speed.first_trials): where a large problem's time to its first kernel goes between the set-up and
  /// the runner's own phases (each trial's phases_ms).
  struct TrialTimes {
    int64_t id;
    double compiledAt, measureStart, measureEnd;
  };
  static constexpr size_t kTimedTrials = 8;
  std::vector<TrialTimes> firstTrials;
};

} // namespace

void Tuner::updateRunJSON(StringRef key, json::Value value) const {
  std::string path = joinPath(config.runDir, "run.json");
  std::optional<json::Value> saved = readJSON(path);
  json::Object run = saved && saved->getAsObject() ? *saved->getAsObject() : runDescription(config, facts);
  run[key] = std::move(value);
  if (!writeJSON(path, json::Value(std::move(run))))
    llvm::errs() << "kforge-tune: warning: run.json's " << key << " was not updated\n";
}

bool Tuner::settleReferenceCheck() {
  updateRunJSON("reference_check", check.toJSON());
  if (check.status == "disagrees")
    return false; // said on stderr where it was found
  std::string text = "kforge-tune: reference " + check.reason; // "not checked: why"
  if (check.status != "skipped") {
    text = "kforge-tune: reference check: the reference " + check.status + " with " + check.against;
    if (check.relL2Error)
      text += llvm::formatv(" (relative L2 error {0:e})", *check.relL2Error).str();
    if (check.status != "agrees")
      text += ": " + check.reason;
  }
  progress.note(text);
  return true;
}

bool Tuner::checkExistingReference() {
  if (!ensureBaselineArtifact(config, tools, [&](const std::string &text) { progress.note(text); }))
    return false;
  check = planReferenceCheck(config, facts);
  if (check.status.empty()) {
    std::string baselineDir = joinPath(config.runDir, "baseline");
    Candidate independent = check.method == "samples" ? prepareReferenceSamples(config, tools, baselineDir)
                                                      : compileIndependent(config, tools);
    check.prepareSeconds = independent.compileSeconds;
    RunOutcome first = firstBaselineRun(config, tools, baselineDir, &independent, check);
    (void)first; // the baseline was measured before; only the check is new
  }
  return settleReferenceCheck();
}

bool Tuner::setUp(unsigned jobs, llvm::DefaultThreadPool &pool) {
  std::optional<json::Value> saved = readJSON(joinPath(config.runDir, "run.json"));
  const json::Object *run = saved ? saved->getAsObject() : nullptr;
  std::optional<ReferenceCheck> savedCheck = ReferenceCheck::fromJSON(run ? run->get("reference_check") : nullptr);
  bool haveBaseline = findBaseline(db.entries()) != nullptr;
  // Once per payload: a resumed run keeps the check its first invocation made (a failed one is not kept as
  // settled: the search never started on it).
  if (savedCheck && savedCheck->status != "disagrees") {
    check = *savedCheck;
    if (haveBaseline)
      return ensureBaselineArtifact(config, tools, [&](const std::string &text) { progress.note(text); });
  }
  if (haveBaseline)
    return checkExistingReference();
  if (!savedCheck || savedCheck->status == "disagrees")
    check = planReferenceCheck(config, facts);
  // The baseline and the independent build compile first; on the GPU the first batch compiles while they are
  // measured (its compiles take CPU cores, not the GPU the baseline is timed on; on the CPU target they would
  // disturb the baseline's timing, so there they wait).
  Candidate baseline, independent;
  bool wantIndependent = check.status.empty();
  std::shared_future<void> baselineDone = pool.async([&] { baseline = compileBaseline(config, tools); });
  std::shared_future<void> independentDone;
  if (wantIndependent && check.method == "cpu-build")
    independentDone = pool.async([&] { independent = compileIndependent(config, tools); });
  bool early = config.search && config.target == "gpu" && config.policy != "llm" && config.policy != "llm+evolve";
  if (early && startBatch(jobs, pool) == BatchEnd::WriteError) {
    pool.wait();
    return false;
  }
  baselineDone.wait();
  if (independentDone.valid())
    independentDone.wait();
  // The sampled check reads the baseline's manifest (argument order, input domains), so it follows the
  // baseline's compile; the early batch keeps compiling meanwhile. With the long-lived runner the samples are
  // computed while the baseline runs (1.7 s of a 4096 x 393216 softmax's set-up on the H100, when they came
  // first) and checked afterwards against the seed-0 outputs the runner keeps; otherwise before, and checked on
  // the baseline's first run (and on the CPU target, whose baseline timing the sampling would disturb).
  bool samples = wantIndependent && check.method == "samples" && baseline.compiled;
  bool samplesBeside = samples && config.runner == "serve" && config.target == "gpu";
  std::future<Candidate> samplesLater;
  if (samplesBeside)
    samplesLater = std::async(std::launch::async, [&] { return prepareReferenceSamples(config, tools, baseline.dir); });
  else if (samples)
    independent = prepareReferenceSamples(config, tools, baseline.dir);
  if (wantIndependent && !samplesBeside)
    check.prepareSeconds = independent.compileSeconds;
  std::optional<DatabaseRecord> record = measureBaseline(
      config, tools, facts, baseline, wantIndependent && !samplesBeside ? &independent : nullptr, check, &evaluator);
  if (samplesBeside) {
    independent = samplesLater.get();
    check.prepareSeconds = independent.compileSeconds;
    if (record)
      checkHeldReference(config, independent, check, evaluator);
  }
  if (check.status == "disagrees" || !record) {
    if (!check.status.empty())
      updateRunJSON("reference_check", check.toJSON());
    pool.wait(); // the early batch's compiles write into the run directory
    return false;
  }
  if (llvm::Error e = db.append(*record)) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(std::move(e)) << "\n";
    pool.wait();
    return false;
  }
  std::string timing;
  if (const json::Object *report = record->run ? record->run->getAsObject() : nullptr)
    if (report->getBoolean("slow_baseline").value_or(false))
      timing = llvm::formatv(", a slow baseline (first run {0:F0} ms): timed with 10 repetitions after 1 warm-up",
                             report->getNumber("first_run_ms").value_or(0))
                   .str();
  progress.note(llvm::formatv("kforge-tune: baseline ({0}) {1:F3} ms{2}",
                              config.target == "gpu" ? "naive GPU" : "loops", *record->timeMs, timing));
  return settleReferenceCheck();
}

int Tuner::run() {
  start = std::chrono::steady_clock::now();
  unsigned jobs = config.jobs > 0 ? config.jobs : llvm::hardware_concurrency().compute_thread_count();
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
  if (!setUp(jobs, pool))
    return 1;
  if (!config.search)
    return finishWithoutSearch();
  searchStart = std::chrono::steady_clock::now();
  setupSeconds = secondsSince(start);
  const DatabaseRecord *baseline = findBaseline(db.entries());
  baselineMs = baseline->timeMs.value_or(0);
  evaluator.setBaseline(*baseline);
  bestMs = baselineMs;
  if (const DatabaseRecord *best = findBest(db.entries())) {
    bestCandidateMs = best->timeMs.value_or(bestCandidateMs);
    bestMs = std::min(bestMs, best->timeMs.value_or(bestMs));
    correctBefore = true;
  }
  for (const DatabaseRecord &r : db.entries())
    if (r.isCandidate()) {
      ++done;
      if (!r.isCorrect())
        ++failures;
    }
  if (done > 0)
    progress.note("kforge-tune: resuming after " + std::to_string(done) + " finished trials");

  std::string why;
  while ((why = stopReason()).empty()) {
    BatchEnd end = runBatch(jobs, pool);
    if (end == BatchEnd::WriteError)
      return 1;
    if (end == BatchEnd::PolicyExhausted) {
      why = "the policy has nothing new to try";
      if (std::string several = severalKernelsReason(facts, config.target == "gpu"); !several.empty())
        why += ": " + several;
      break;
    }
  }
  pool.wait(); // a batch compiled ahead and left unmeasured (the budget ran out) must finish writing first
  progress.end();
  progress.note("kforge-tune: stopped: " + why);
  recordSpeed();
  if (!finishRun(config, facts, db, [&](const std::string &text) { progress.note(text); }))
    return 1;
  if (config.json)
    printSummary(why);
  return findBest(db.entries()) ? 0 : 1;
}

int Tuner::finishWithoutSearch() {
  const DatabaseRecord *best = findBest(db.entries());
  if (!config.keepCandidates)
    for (const DatabaseRecord &r : db.entries())
      if (r.isCandidate() && &r != best)
        pruneCandidate(joinPath(joinPath(config.runDir, "candidates"), std::to_string(r.id)));
  if (!finishRun(config, facts, db, [&](const std::string &text) { progress.note(text); }))
    return 1;
  return 0;
}

void Tuner::recordSpeed() {
  double searchSeconds = secondsSince(searchStart);
  double perMinute = searchSeconds > 0 ? trialsNow * 60.0 / searchSeconds : 0;
  json::Object speed{{"setup_s", setupSeconds},
                     {"search_s", searchSeconds},
                     {"trials", trialsNow},
                     {"trials_per_minute", perMinute},
                     {"time_to_first_correct_trial_s", nullptr},
                     {"first_correct_trial", nullptr}};
  json::Array timeline;
  for (const TrialTimes &t : firstTrials)
    timeline.push_back(json::Object{{"trial", t.id},
                                    {"compiled_s", t.compiledAt},
                                    {"measure_start_s", t.measureStart},
                                    {"measure_end_s", t.measureEnd}});
  speed["first_trials"] = std::move(timeline);
  std::string first;
  if (firstCorrectSeconds) {
    speed["time_to_first_correct_trial_s"] = *firstCorrectSeconds;
    speed["first_correct_trial"] = *firstCorrectId;
    first = llvm::formatv("first correct trial (#{0}) {1:F1} s after the start", *firstCorrectId,
                          *firstCorrectSeconds)
                .str();
  } else if (correctBefore) {
    // Found by an earlier invocation: its figure stays.
    std::optional<json::Value> saved = readJSON(joinPath(config.runDir, "run.json"));
    const json::Object *run = saved ? saved->getAsObject() : nullptr;
    if (const json::Object *before = run ? run->getObject("search_speed") : nullptr) {
      if (const json::Value *v = before->get("time_to_first_correct_trial_s"))
        speed["time_to_first_correct_trial_s"] = *v;
      if (const json::Value *v = before->get("first_correct_trial"))
        speed["first_correct_trial"] = *v;
    }
    first = "first correct trial found by an earlier invocation";
  } else {
    first = "no correct trial";
  }
  progress.note(llvm::formatv("kforge-tune: {0} trials in {1:F1} s of search ({2:F1} trials per minute; set-up "
                              "{3:F1} s: baseline and reference check); {4}",
                              trialsNow, searchSeconds, perMinute, setupSeconds, first));
  updateRunJSON("search_speed", std::move(speed));
}

std::string Tuner::stopReason() const {
  if (done >= config.trials)
    return "trial budget reached";
  if (outOfTime())
    return "time budget reached";
  if (config.earlyStop > 0 && sinceImprovement >= config.earlyStop)
    return "no improvement in " + std::to_string(config.earlyStop) + " trials";
  if (sameFailureRun >= kSameFailureLimit)
    return "the last " + std::to_string(sameFailureRun) +
           " candidates all failed to compile with the same error, whatever their schedule: " +
           (sameFailure.size() > 300 ? sameFailure.substr(0, 300) + "..." : sameFailure);
  return "";
}

Tuner::BatchEnd Tuner::startBatch(unsigned jobs, llvm::DefaultThreadPool &pool) {
  int batch = std::min<int>(std::max<unsigned>(jobs, 2), config.trials - done);
  std::vector<Proposal> proposals = policy->propose(historyOf(db.entries()), batch);
  if (proposals.empty())
    return BatchEnd::PolicyExhausted;
  std::optional<std::vector<Candidate>> prepared = prepare(proposals);
  if (!prepared)
    return BatchEnd::WriteError;
  compiling = std::move(*prepared);
  TuneConfig batchConfig = config;
  if (config.timeBudget > 0) {
    double left = searchStart == std::chrono::steady_clock::time_point() ? config.timeBudget
                                                                        : config.timeBudget - secondsSince(searchStart);
    batchConfig.compileTimeout = std::max(10, std::min(config.compileTimeout, static_cast<int>(left) + 1));
  }
  compiled.clear();
  for (Candidate &c : compiling)
    compiled.push_back(pool.async([this, batchConfig, ptr = &c] {
      compileCandidate(batchConfig, tools, *ptr, /*naive=*/false);
      ptr->compiledAtSeconds = secondsSince(start);
    }));
  return BatchEnd::Measured;
}

std::optional<size_t> Tuner::nextCompiled(const std::vector<std::shared_future<void>> &done,
                                          const std::vector<bool> &measured) const {
  for (;;) {
    std::optional<size_t> waiting;
    for (size_t i = 0; i < done.size(); ++i) {
      if (measured[i])
        continue;
      if (done[i].wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        return i;
      if (!waiting)
        waiting = i;
    }
    if (!waiting || outOfTime())
      return std::nullopt;
    done[*waiting].wait_for(std::chrono::milliseconds(20));
  }
}

Tuner::BatchEnd Tuner::runBatch(unsigned jobs, llvm::DefaultThreadPool &pool) {
  if (compiling.empty())
    if (BatchEnd end = startBatch(jobs, pool); end != BatchEnd::Measured)
      return end;
  std::vector<Candidate> candidates = std::move(compiling);
  std::vector<std::shared_future<void>> done = std::move(compiled);
  compiling.clear();
  compiled.clear();
  // On the CPU target the candidates' compiles would disturb the one being timed: the batch compiles first.
  if (config.target != "gpu")
    pool.wait();
  std::vector<bool> measured(candidates.size(), false);
  for (size_t left = candidates.size(); left > 0; --left) {
    // Candidates compiled but not measured are not recorded: a resumed run proposes them again.
    std::optional<size_t> next = outOfTime() ? std::nullopt : nextCompiled(done, measured);
    if (!next) {
      size_t stillCompiling = 0;
      for (size_t i = 0; i < done.size(); ++i)
        stillCompiling += !measured[i] && done[i].wait_for(std::chrono::seconds(0)) != std::future_status::ready;
      progress.note(llvm::formatv("kforge-tune: the time budget ran out with {0} of the batch's {1} candidates not "
                                  "measured ({2} still compiling)",
                                  left, candidates.size(), stillCompiling));
      break;
    }
    measured[*next] = true;
    Candidate &c = candidates[*next];
    double budgetLeft = config.timeBudget > 0 ? std::max(1e-3, config.timeBudget - secondsSince(searchStart)) : 0;
    double measureStart = secondsSince(start);
    DatabaseRecord record = evaluator.evaluate(c, baselineMs, bestMs, budgetLeft, parentId(c.proposal.parentHash));
    double measureEnd = secondsSince(start);
    // A run cut off because the time budget ran out was not measured: like the candidates after it, it is
    // not recorded, and a resumed run proposes it again.
    if (outOfTime() && record.status == "failed" && record.reason.value_or("").find("timed out") != std::string::npos)
      break;
    if (firstTrials.size() < kTimedTrials)
      firstTrials.push_back({c.id, c.compiledAtSeconds, measureStart, measureEnd});
    if (!recordTrial(c, record)) {
      pool.wait();
      return BatchEnd::WriteError;
    }
  }
  // The candidates left unmeasured may still be compiling into `candidates`: their compiles end (at the latest
  // at their timeout, bounded by the budget) before the batch goes.
  pool.wait();
  return BatchEnd::Measured;
}

bool Tuner::recordTrial(const Candidate &c, const DatabaseRecord &record) {
  if (llvm::Error e = db.append(record)) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(std::move(e)) << "\n";
    return false;
  }
  ++done;
  ++trialsNow;
  if (record.isCorrect() && !correctBefore && !firstCorrectSeconds) {
    firstCorrectSeconds = secondsSince(start);
    firstCorrectId = record.id;
  }
  double before = bestMs;
  double time = record.timeMs.value_or(0);
  if (record.timeMs)
    bestMs = std::min(bestMs, time);
  if (!record.isCorrect())
    ++failures;
  sinceImprovement = bestMs < before ? 0 : sinceImprovement + 1;
  if (record.status == "compile-failed" && record.reason && !record.reason->empty()) {
    sameFailureRun = *record.reason == sameFailure ? sameFailureRun + 1 : 1;
    sameFailure = *record.reason;
  } else {
    sameFailureRun = 0;
    sameFailure.clear();
  }
  // The artifact is kept while it is the best candidate's, even one slower than the untransformed payload
  // (best/ exports the search's best kernel; a payload too small for any schedule to pay off has one).
  bool bestCandidate = record.isCorrect() && time > 0 && time < bestCandidateMs;
  if (bestCandidate)
    bestCandidateMs = time;
  if (!config.keepCandidates && !bestCandidate)
    pruneCandidate(c.dir);
  progress.trial(done, failures, baselineMs / bestMs, bestMs, secondsSince(start), trialLine(record));
  return true;
}

std::optional<std::vector<Candidate>> Tuner::prepare(const std::vector<Proposal> &proposals) {
  int nextId = 1; // 0 is the baseline's, even while it is being measured (the first batch compiles meanwhile)
  for (const DatabaseRecord &r : db.entries())
    nextId = std::max<int>(nextId, static_cast<int>(r.id) + 1);
  std::vector<Candidate> out;
  for (const Proposal &p : proposals) {
    Candidate c;
    c.id = nextId++;
    c.proposal = p;
    c.dir = joinPath(joinPath(config.runDir, "candidates"), std::to_string(c.id));
    if (std::error_code ec = llvm::sys::fs::create_directories(c.dir)) {
      llvm::errs() << "kforge-tune: error: cannot create " << c.dir << ": " << ec.message() << "\n";
      return std::nullopt;
    }
    c.recipePath = joinPath(c.dir, "schedule.mlir");
    bool written = !p.script.empty()
                       ? writeText(c.recipePath, p.script) // a transform library as proposed, no actions to trace
                       : writeText(c.recipePath, renderSchedule(p.schedule, facts, config.target, &c.actionLines)) &&
                             writeJSON(joinPath(c.dir, "schedule.json"), toJSON(p.schedule));
    if (!written)
      return std::nullopt;
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<int64_t> Tuner::parentId(const std::string &hash) const {
  if (hash.empty())
    return std::nullopt;
  for (const DatabaseRecord &r : db.entries())
    if (r.scheduleHash == hash)
      return r.id;
  return std::nullopt;
}

std::string Tuner::trialLine(const DatabaseRecord &record) const {
  std::string line = llvm::formatv("trial {0}: {1}", record.id, record.status);
  if (std::optional<double> t = record.timeMs)
    line += llvm::formatv(" {0:F3} ms ({1:F2}x)", *t, baselineMs / *t);
  if (record.stage)
    line += " at " + *record.stage;
  line += " | " + record.description;
  if (!record.isCorrect() && record.reason)
    line += " | " + StringRef(*record.reason).substr(0, 160).str();
  return line;
}

void Tuner::printSummary(const std::string &why) const {
  json::Object summary{{"run_dir", config.runDir},  {"stopped", why}, {"target", config.target},
                       {"baseline_ms", baselineMs}, {"trials", 0},    {"failures", 0}};
  int trials = 0, failed = 0;
  for (const DatabaseRecord &r : db.entries())
    if (r.isCandidate()) {
      ++trials;
      failed += !r.isCorrect();
    }
  summary["trials"] = trials;
  summary["failures"] = failed;
  summary["reference_check"] = check.toJSON();
  if (std::optional<json::Value> saved = readJSON(joinPath(config.runDir, "run.json")))
    if (const json::Object *run = saved->getAsObject())
      if (const json::Value *speed = run->get("search_speed"))
        summary["search_speed"] = *speed;
  if (const DatabaseRecord *best = findBest(db.entries())) {
    summary["best"] = json::Object{{"id", best->id},
                                   {"time_ms", *best->timeMs},
                                   {"speedup_vs_baseline", baselineMs / *best->timeMs},
                                   {"schedule", best->schedule},
                                   {"description", best->description}};
    if (std::string slower = slowerThanBaselineWarning(db.entries()); !slower.empty())
      summary["warning"] = slower;
    summary["best_schedule"] = joinPath(config.runDir, "best.mlir");
    summary["best_artifact"] = joinPath(config.runDir, "best");
  }
  llvm::outs() << jsonText(json::Value(std::move(summary)));
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// --policy llm / llm+evolve, through the tool's factory.
static std::unique_ptr<Policy> makeLLMPolicy(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts) {
  LLMPolicyContext context;
  context.payloadText = readText(config.payloadPath);
  context.transcriptPath = joinPath(config.runDir, "llm-transcript.jsonl");
  bool quiet = config.quiet;
  context.note = [quiet](const std::string &text) {
    if (!quiet)
      llvm::errs() << text << "\n";
  };
  context.checkScript = [config, tools](const std::string &script) { return checkScript(config, tools, script); };
  context.hybrid = config.policy == "llm+evolve";
  return config.llmPolicy(context, facts, config.profile, config.seed);
}

std::unique_ptr<Policy> kforge::tune::makePolicy(const TuneConfig &config, const Tools &tools,
                                                 const PayloadFacts &facts, std::string &error) {
  if (config.policy != "llm" && config.policy != "llm+evolve")
    return createPolicy(config.policy, facts, config.profile, config.seed, error);
  if (!config.llmPolicy) {
    error = "this kforge-tune was built without the LLM client";
    return nullptr;
  }
  return makeLLMPolicy(config, tools, facts);
}

int kforge::tune::runTuner(const TuneConfig &given, const Tools &tools) {
  std::optional<PayloadFacts> facts = loadFacts(tools, given.payloadPath, given.entry);
  if (!facts)
    return 1;
  facts->allowTf32 = given.allowTf32; // the request's, not the IR's: what the policies and the validator see
  TuneConfig config = given;
  if (std::string note = largeProblemSeeds(config, *facts); !note.empty())
    llvm::errs() << note << "\n";
  // Held until the run ends: the LLM policy's transcript is in the run directory too.
  std::optional<RunLock> lock = RunLock::acquire(config.runDir);
  if (!lock)
    return 1;
  std::string error;
  std::unique_ptr<Policy> policy = makePolicy(config, tools, *facts, error);
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
  if (std::string note = largeProblemSeeds(config, *facts); !note.empty())
    llvm::errs() << note << "\n";
  llvm::Expected<json::Value> value = readJSONFile(schedulePath, kMaxScheduleBytes);
  if (!value) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(value.takeError()) << "\n";
    return 2;
  }
  Schedule schedule;
  std::vector<Problem> problems = checkSchedule(*value, *facts, config.target, schedule);
  if (!problems.empty()) {
    llvm::outs() << llvm::formatv("{0:2}", invalidScheduleReport(problems)) << "\n";
    return 1;
  }
  std::optional<RunLock> lock = RunLock::acquire(config.runDir);
  if (!lock)
    return 1;
  std::optional<Database> db = openRun(config, *facts, /*resume=*/true);
  if (!db)
    return 1;
  std::vector<TrialRecord> history = historyOf(db->entries());
  if (llvm::any_of(history, [&](const TrialRecord &r) { return r.hash == scheduleHash(schedule); })) {
    llvm::errs() << "kforge-tune: this schedule was tried before in " << config.runDir << " (see db.jsonl)\n";
    return 0;
  }
  config.trials = static_cast<int>(history.size()) + 1;
  return Tuner(config, tools, *facts, *db, std::make_unique<GivenSchedule>(schedule)).run();
}
