//===- Record.h - one line of the tuning database, typed ---------*- C++ -*-===//
//
// db.jsonl holds one JSON object per finished trial ("format": "kforge-tune-record/1"): the untransformed
// payload's measurement (kind "baseline", id 0) and then each candidate's. DatabaseRecord is that object
// typed. toJSON writes exactly the keys the format has always had (an unset optional field is an absent key);
// fromJSON reads what any kforge-tune wrote, every key optional. What kforge-run and kforge-compile reported
// (the run report, timing, resources, diagnostics) stays JSON: kforge-tune only passes it through.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_RECORD_H
#define KFORGE_TUNE_RECORD_H

#include "kforge/Tune/Policies.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::tune {

struct DatabaseRecord {
  std::string format = "kforge-tune-record/1";
  int64_t id = 0;
  std::string kind;   ///< "baseline" or "candidate".
  std::string status; ///< correct, incorrect, inconclusive, too-slow, failed or compile-failed.
  /// The actions as recorded (the registry's JSON, read with parseSchedule), kept verbatim.
  llvm::json::Value schedule = llvm::json::Array();
  std::string description; ///< The schedule in a line ("transform script" for a script).
  std::string payloadHash, target;
  llvm::json::Value versions = llvm::json::Object(); ///< {"kforge": ..., "llvm": ...}
  std::string timestamp;
  double compileSeconds = 0;

  /// Written for every candidate, never for the baseline. chip and l2Flush are null off the GPU; parent (the
  /// record whose schedule this one was derived from) is null when there is none.
  std::string policy, island, step, scheduleHash;
  std::optional<std::string> chip, l2Flush;
  std::optional<int64_t> parent;

  std::optional<std::string> script;            ///< A whole transform library (the LLM policy's) instead of actions.
  std::optional<std::string> stage;             ///< compile-failed: where kforge-compile stopped.
  std::optional<std::string> reason;            ///< Why the trial failed (the compiler's or the runner's message).
  std::optional<llvm::json::Value> diagnostics; ///< compile-failed: kforge-compile's diagnostics.
  /// compile-failed: the schedule's action at fault; written (null when not found) for every compile failure.
  std::optional<int64_t> action;
  std::optional<int64_t> runTimeoutSeconds; ///< The time limit the trial's run had.
  std::optional<double> runSeconds;         ///< Wall time of the verification and timing.
  /// From kforge-run's report: the kernels' resources, the long-lived runner that measured it (pid and request
  /// number), and each verification run's wall time.
  std::optional<llvm::json::Value> resources, runner, verificationRunsMs, phasesMs;
  /// Correct trials: the median time, and the speed-ups over the baseline and over the best before it.
  std::optional<double> timeMs, speedupVsBaseline, speedupVsPreviousBest;
  std::optional<llvm::json::Value> timing; ///< Correct trials: kforge-run's timing statistics.
  std::optional<double> score;             ///< Candidates: the trial's score (TuneConfig::weights).
  std::optional<llvm::json::Value> run;    ///< The baseline: kforge-run's whole report.

  bool isBaseline() const { return kind == "baseline"; }
  bool isCandidate() const { return kind == "candidate"; }
  bool isCorrect() const { return status == "correct"; }
  /// The recorded schedule, parsed as far as the registry reads it.
  Schedule parsedSchedule() const;
};

llvm::json::Value toJSON(const DatabaseRecord &record);
bool fromJSON(const llvm::json::Value &value, DatabaseRecord &record, llvm::json::Path path);

/// {"kforge": ..., "llvm": ...}: the versions every record and run.json name.
llvm::json::Object toolVersions();
/// The current UTC time as a record's timestamp (2024-01-31T12:00:00Z).
std::string timestampNow();

/// The baseline's record, or null.
const DatabaseRecord *findBaseline(llvm::ArrayRef<DatabaseRecord> records);
/// The fastest correct candidate's record (the first of equals), or null.
const DatabaseRecord *findBest(llvm::ArrayRef<DatabaseRecord> records);
/// The candidates' records as the policies see them.
std::vector<TrialRecord> historyOf(llvm::ArrayRef<DatabaseRecord> records);

} // namespace kforge::tune

#endif // KFORGE_TUNE_RECORD_H
