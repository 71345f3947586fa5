//===- RunDirectory.cpp - a tuning run's files ----------------------------===//

#include "RunDirectory.h"

#include "Evaluate.h"
#include "Files.h"
#include "Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace kforge::tune;
using llvm::StringRef;
namespace json = llvm::json;

/// The files of a kernel artifact (kforge-compile's output).
static const StringRef kArtifactFiles[] = {"kernel.so", "kernel.json", "kernel.scheduled.mlir", "kernel.host.mlir"};

std::optional<RunLock> RunLock::acquire(const std::string &runDir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(runDir)) {
    llvm::errs() << "kforge-tune: error: cannot create " << runDir << ": " << ec.message() << "\n";
    return std::nullopt;
  }
  std::string path = joinPath(runDir, "lock");
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::openFileForReadWrite(path, fd, llvm::sys::fs::CD_OpenAlways, llvm::sys::fs::OF_None)) {
    llvm::errs() << "kforge-tune: error: cannot lock " << runDir << ": " << path << ": " << ec.message() << "\n";
    return std::nullopt;
  }
  if (std::error_code ec = llvm::sys::fs::tryLockFile(fd)) {
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    if (ec == std::errc::no_lock_available || ec == std::errc::resource_unavailable_try_again)
      llvm::errs() << "kforge-tune: error: " << runDir << " is in use by another kforge-tune (it holds " << path
                   << "); wait for it to finish, or choose another run directory\n";
    else
      llvm::errs() << "kforge-tune: error: cannot lock " << runDir << ": " << path << ": " << ec.message() << "\n";
    return std::nullopt;
  }
  return RunLock(fd);
}

RunLock::~RunLock() {
  if (fd < 0)
    return;
  llvm::sys::fs::unlockFile(fd);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
}

std::string kforge::tune::absoluteRunDir(StringRef dir) {
  llvm::SmallString<256> path(dir);
  if (llvm::sys::fs::make_absolute(path))
    return dir.str(); // no working directory to prepend: the path as given
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/false);
  return std::string(path);
}

json::Object kforge::tune::runDescription(const TuneConfig &config, const PayloadFacts &facts) {
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
                      {"versions", toolVersions()}};
}

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
  // Its trials were verified against one precision's tolerance (a run from before --allow-tf32 had none).
  auto tf32 = [](const json::Object &run) {
    const json::Object *facts = run.getObject("facts");
    return facts && facts->getBoolean("allow_tf32").value_or(false);
  };
  if (tf32(saved) != tf32(now)) {
    why = std::string("the run directory was tuned ") + (tf32(saved) ? "with" : "without") +
          " --allow-tf32 (its trials were verified against that precision's tolerance; see its run.json)";
    return false;
  }
  return true;
}

std::optional<Database> kforge::tune::openRun(const TuneConfig &config, const PayloadFacts &facts, bool resume) {
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
    llvm::Expected<json::Value> saved = readJSONFile(runPath);
    std::string why = "its run.json is not a JSON object";
    if (!saved)
      why = llvm::toString(saved.takeError());
    if (!saved || !saved->getAsObject() || !matchesRun(*saved->getAsObject(), description, why)) {
      llvm::errs() << "kforge-tune: error: cannot resume " << config.runDir << ": " << why << "\n";
      return std::nullopt;
    }
  } else {
    llvm::Expected<std::string> payload = readFile(config.payloadPath, kMaxPayloadBytes);
    if (!payload) {
      llvm::errs() << "kforge-tune: error: " << llvm::toString(payload.takeError()) << "\n";
      return std::nullopt;
    }
    if (!writeJSON(runPath, json::Value(json::Object(description))) ||
        !writeText(joinPath(config.runDir, "payload.mlir"), *payload))
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

bool kforge::tune::ensureBaselineArtifact(const TuneConfig &config, const Tools &tools,
                                          llvm::function_ref<void(const std::string &)> note) {
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
  note("kforge-tune: rebuilt the baseline artifact the database was measured against");
  return true;
}

void kforge::tune::pruneCandidate(const std::string &dir) {
  for (StringRef file : {"kernel.so", "kernel.host.mlir"})
    llvm::sys::fs::remove(joinPath(dir, file));
}

/// Copies the best candidate's artifact into a fresh directory beside best/; its path, or "" (said on stderr,
/// nothing left behind) when a copy fails.
static std::string stageBestArtifact(const std::string &runDir, const std::string &from) {
  llvm::SmallString<256> staging;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(joinPath(runDir, "best.partial"), staging)) {
    llvm::errs() << "kforge-tune: error: cannot export the best kernel into " << runDir << ": " << ec.message() << "\n";
    return "";
  }
  for (StringRef file : kArtifactFiles) {
    std::string source = joinPath(from, file);
    if (!llvm::sys::fs::exists(source))
      continue;
    if (std::error_code ec = llvm::sys::fs::copy_file(source, joinPath(staging, file))) {
      llvm::errs() << "kforge-tune: error: cannot export the best kernel: cannot copy " << source << ": "
                   << ec.message() << "\n";
      llvm::sys::fs::remove_directories(staging);
      return "";
    }
  }
  return std::string(staging);
}

/// Writes best.json (the record as stored), best.mlir and best/ for the record at `index`. Everything is written
/// aside first and renamed into place only when all of it was written, so a failure (a full disk) leaves the
/// earlier export whole.
static bool exportBest(const TuneConfig &config, const PayloadFacts &facts, const Database &db, size_t index,
                       llvm::function_ref<void(const std::string &)> note) {
  const DatabaseRecord &best = db.entries()[index];
  std::string from = joinPath(joinPath(config.runDir, "candidates"), std::to_string(best.id));
  std::string to = joinPath(config.runDir, "best");
  bool haveArtifact = llvm::sys::fs::exists(joinPath(from, "kernel.so"));
  std::string staging;
  if (haveArtifact && (staging = stageBestArtifact(config.runDir, from)).empty())
    return false;
  std::string mlirPath = joinPath(config.runDir, "best.mlir"), jsonPath = joinPath(config.runDir, "best.json");
  auto fail = [&](llvm::Error error) {
    if (!staging.empty())
      llvm::sys::fs::remove_directories(staging);
    llvm::errs() << "kforge-tune: error: cannot export the best schedule: " << llvm::toString(std::move(error)) << "\n";
    return false;
  };
  llvm::Expected<llvm::sys::fs::TempFile> mlir =
      stageText(mlirPath, best.script ? *best.script : renderSchedule(best.parsedSchedule(), facts, config.target));
  if (!mlir)
    return fail(mlir.takeError());
  llvm::Expected<llvm::sys::fs::TempFile> record = stageText(jsonPath, jsonText(json::Object(db.records()[index])));
  if (!record) {
    llvm::consumeError(mlir->discard());
    return fail(record.takeError());
  }
  // A stale best/ (an earlier best, before a resume) must not survive next to the new best.json.
  llvm::sys::fs::remove_directories(to);
  std::error_code moved = staging.empty() ? std::error_code() : llvm::sys::fs::rename(staging, to);
  llvm::Error kept = llvm::joinErrors(mlir->keep(mlirPath), record->keep(jsonPath));
  if (moved || kept) {
    if (moved)
      llvm::sys::fs::remove_directories(staging);
    llvm::errs() << "kforge-tune: error: cannot export the best schedule into " << config.runDir << ": "
                 << (moved ? moved.message() : llvm::toString(std::move(kept))) << "\n";
    llvm::consumeError(std::move(kept));
    return false;
  }
  if (!haveArtifact)
    note("kforge-tune: the best candidate's artifact is gone (a run carried without its candidates); " +
         std::string("kforge-tune --replay ") + config.runDir + " rebuilds it");
  return true;
}

bool kforge::tune::finishRun(const TuneConfig &config, const PayloadFacts &facts, const Database &db,
                             llvm::function_ref<void(const std::string &)> note) {
  const DatabaseRecord *best = findBest(db.entries());
  if (best && !exportBest(config, facts, db, static_cast<size_t>(best - db.entries().data()), note))
    return false;
  writeReport(config.runDir, db.entries(), json::Object(runDescription(config, facts)));
  note(best ? "kforge-tune: best schedule in " + joinPath(config.runDir, "best.mlir") + ", kernel in " +
                  joinPath(config.runDir, "best") + ", report in " + joinPath(config.runDir, "report.md")
            : "kforge-tune: no correct kernel found; report in " + joinPath(config.runDir, "report.md"));
  if (std::string slower = slowerThanBaselineWarning(db.entries()); !slower.empty())
    note("kforge-tune: warning: " + slower);
  return true;
}

//===----------------------------------------------------------------------===//
// Replay
//===----------------------------------------------------------------------===//

/// The configuration a finished run was tuned with, from its run.json; nothing (said on stderr) when there
/// is no readable run.json.
static std::optional<TuneConfig> replayConfig(const std::string &runDir, std::string &payloadHash) {
  llvm::Expected<json::Value> saved = readJSONFile(joinPath(runDir, "run.json"));
  const json::Object *run = saved ? saved->getAsObject() : nullptr;
  if (!run) {
    llvm::errs() << "kforge-tune: error: " << runDir << " is not a tuning run (no readable run.json)";
    if (!saved)
      llvm::errs() << ": " << llvm::toString(saved.takeError());
    llvm::errs() << "\n";
    return std::nullopt;
  }
  TuneConfig config;
  config.runDir = runDir;
  config.timingBudgetMs = 0; // a replay times every repetition
  config.payloadPath = joinPath(runDir, "payload.mlir");
  config.target = run->getString("target").value_or("cpu").str();
  config.chip = run->getString("chip").value_or("sm_90").str();
  config.entry = run->getString("entry").value_or("").str();
  config.l2Flush = run->getString("l2_flush").value_or("dirty").str(); // timed as it was tuned
  if (const json::Object *facts = run->getObject("facts"))             // verified as it was tuned
    config.allowTf32 = facts->getBoolean("allow_tf32").value_or(false);
  payloadHash = run->getString("payload_hash").value_or("").str();
  return config;
}

/// Verifies the rebuilt best kernel `c` against the run's baseline (rebuilt too when it is gone) into
/// `summary`; the exit code.
static int verifyReplay(const TuneConfig &config, const Tools &tools, const Candidate &c, json::Object &summary) {
  std::string baseline = joinPath(config.runDir, "baseline");
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
  if (!baselineProblem.empty()) {
    summary["verified"] = "not run (" + baselineProblem + ")";
    return 1;
  }
  RunOutcome outcome = runCandidate(config, tools, c.dir, baseline, 5, 20);
  summary["verified"] = outcome.status;
  if (outcome.medianMs > 0)
    summary["time_ms"] = outcome.medianMs;
  if (!outcome.reason.empty())
    summary["reason"] = outcome.reason;
  return outcome.status == "correct" ? 0 : 1;
}

int kforge::tune::replayRun(const std::string &givenDir, const Tools &tools, bool quiet, bool verify) {
  std::string runDir = absoluteRunDir(givenDir);
  std::string payloadHash;
  std::optional<TuneConfig> config = replayConfig(runDir, payloadHash);
  if (!config)
    return 1;
  // A replay rewrites best.mlir and best/: not while a search writes them.
  std::optional<RunLock> lock = RunLock::acquire(runDir);
  if (!lock)
    return 1;
  config->quiet = quiet;
  std::optional<PayloadFacts> facts = loadFacts(tools, config->payloadPath, config->entry);
  if (!facts)
    return 1;
  if (facts->structuralHash != payloadHash) {
    llvm::errs() << "kforge-tune: error: " << config->payloadPath << " is not the payload the run tuned\n";
    return 1;
  }
  llvm::Expected<Database> db = Database::open(joinPath(runDir, "db.jsonl"));
  if (!db) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(db.takeError()) << "\n";
    return 1;
  }
  const DatabaseRecord *best = findBest(db->entries());
  if (!best) {
    llvm::errs() << "kforge-tune: error: the run has no correct kernel to replay\n";
    return 1;
  }
  Candidate c;
  c.proposal.schedule = best->parsedSchedule();
  c.dir = joinPath(runDir, "best");
  c.recipePath = joinPath(runDir, "best.mlir");
  if (best->script)
    c.proposal.script = *best->script;
  if (!writeText(c.recipePath, best->script
                                   ? *best->script
                                   : renderSchedule(c.proposal.schedule, *facts, config->target, &c.actionLines)))
    return 1;
  // Rebuilt from the schedule, not copied from a cache.
  for (StringRef file : kArtifactFiles)
    llvm::sys::fs::remove(joinPath(c.dir, file));
  config->useCache = false;
  compileCandidate(*config, tools, c, /*naive=*/false);
  if (!c.compiled) {
    llvm::errs() << "kforge-tune: error: the best schedule no longer compiles (" << c.stage << "): " << c.message
                 << "\n";
    return 1;
  }
  json::Object summary{{"schedule", best->schedule},
                       {"description", best->description},
                       {"transform_library", c.recipePath},
                       {"artifact", c.dir},
                       {"recorded_time_ms", best->timeMs.value_or(0)}};
  int rc = 0;
  if (verify)
    rc = verifyReplay(*config, tools, c, summary);
  else
    summary["verified"] = "not run (--build-only)";
  llvm::outs() << jsonText(json::Value(std::move(summary)));
  return rc;
}
