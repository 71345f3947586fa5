//===- RunDirectory.h - a tuning run's files --------------------*- C++ -*-===//
//
//   RUN/run.json         what the run tunes and how (a resumed run must match it)
//   RUN/payload.mlir     the payload, as it was when the run began
//   RUN/db.jsonl         one record per finished trial (Database.h)
//   RUN/baseline/        the untransformed payload's artifact every candidate is verified against
//   RUN/candidates/N/    each candidate's schedule, logs and run report (and its artifact while it is the best)
//   RUN/best.json, RUN/best.mlir, RUN/best/   the best record, its transform library and its kernel
//   RUN/report.md, RUN/report.svg
//   RUN/lock             held (flock) by the one kforge-tune that writes the directory
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_RUNDIRECTORY_H
#define KFORGE_TUNE_RUNDIRECTORY_H

#include "Database.h"
#include "Tuner.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace kforge::tune {

/// An exclusive advisory lock on RUN/lock, held while it lives: two tuners writing one run directory would
/// interleave their trials' ids and databases.
class RunLock {
public:
  /// Locks `runDir` (created if missing) without waiting; says on stderr why not (another tuner holds it) and
  /// returns nothing, touching nothing else, when it cannot.
  static std::optional<RunLock> acquire(const std::string &runDir);
  RunLock(RunLock &&other) : fd(other.fd) { other.fd = -1; }
  RunLock(const RunLock &) = delete;
  RunLock &operator=(const RunLock &) = delete;
  RunLock &operator=(RunLock &&) = delete;
  ~RunLock();

private:
  explicit RunLock(int fd) : fd(fd) {}
  int fd;
};

/// `dir` as an absolute path (the working directory prepended): a run directory is handed to child processes
/// and written into records, so a relative one would mean something else to them.
std::string absoluteRunDir(llvm::StringRef dir);

/// run.json's contents for this invocation.
llvm::json::Object runDescription(const TuneConfig &config, const PayloadFacts &facts);

/// Creates RUN (run.json, payload.mlir) and its database, or opens an existing run's when `resume` is set and
/// its run.json matches this invocation. Says on stderr why not, and returns nothing, otherwise.
std::optional<Database> openRun(const TuneConfig &config, const PayloadFacts &facts, bool resume);

/// A resumed run may have carried only its database (another machine, a pruned directory): the baseline
/// every candidate is verified against is rebuilt from the payload, as it was first built. False (said on
/// stderr) when it does not compile.
bool ensureBaselineArtifact(const TuneConfig &config, const Tools &tools,
                            llvm::function_ref<void(const std::string &)> note);

/// Keeps what a later look needs (schedule, diagnostics, logs, run report) and drops the compiled files.
void pruneCandidate(const std::string &dir);

/// Exports the best schedule (best.json, best.mlir) and its artifact (best/); writes the report. False (said
/// on stderr) when the export could not be written, leaving the earlier export as it was.
bool finishRun(const TuneConfig &config, const PayloadFacts &facts, const Database &db,
               llvm::function_ref<void(const std::string &)> note);

} // namespace kforge::tune

#endif // KFORGE_TUNE_RUNDIRECTORY_H
