//===- Distributed.h - kforge-tune's modes for a distributed driver ----*- C++ -*-===//
//
// kforge.distributed (python/kforge/distributed.py) tunes many payloads on a Ray cluster. It does not search
// itself: kforge-tune keeps the policies, the rendering, the compile arguments and the record format, and the
// search loop is cut at its seams into modes that work on a run directory `kforge-tune --no-search` set up:
//
//   --propose N [--pending FILE]   the policy's next N proposals, given the database and the trials in flight
//   --compile-trial DIR            one proposal (DIR/proposal.json) rendered and compiled (DIR/compile.json)
//   --trial-server                 compiled candidates measured by one long-lived kforge-run --serve; each
//                                  request on stdin gets its database record on stdout (the caller appends it)
//
// Each takes the payload's copy, facts, target, chip, L2 flush, entry, policy, seed, hardware profile and score
// weights from RUN/run.json, so none of them probes a GPU or re-analyses the payload. See docs/distributed.md.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_DISTRIBUTED_H
#define KFORGE_TUNE_DISTRIBUTED_H

#include "Tuner.h"

#include <optional>
#include <string>

namespace kforge::tune {

/// `given` (limits, budgets, cutoffs as the command line set them) completed from RUN/run.json; nothing
/// (said on stderr) when `runDir` holds no run.json that `--no-search` wrote.
std::optional<TuneConfig> loadRunConfig(const TuneConfig &given, const std::string &runDir, PayloadFacts &facts);

/// --propose N: prints the policy's next `count` proposals as JSON lines (policy, island, step, parent_hash,
/// schedule_hash, description, actions, script), given RUN/db.jsonl (read without repairing it: its writer may
/// be appending) and the schedules in `pendingPath` (JSON lines with "actions" or "script"; measured by nobody
/// yet, they count as tried). Fewer lines, or none, when the policy has nothing new.
int proposeTrials(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts, int count,
                  const std::string &pendingPath);

/// --compile-trial DIR: renders DIR/proposal.json (a --propose line) into DIR/schedule.mlir and compiles it as
/// the search does (kforge-compile with the run's limits and RUN/cache); the outcome goes to DIR/compile.json.
/// 0 when the compile ran (whether or not it succeeded), else 1 (said on stderr).
int compileTrial(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts, const std::string &dir);

/// --trial-server: one request per stdin line, {"dir": D, "id": N, "parent": P|null, "baseline_ms": B,
/// "best_ms": M, "budget_left_s": S}, for a candidate --compile-trial compiled in D; one line back per request:
/// the trial's record (kforge-tune-record/1), or {"error": why}. The records are not appended here: the caller
/// owns the database. Candidates not verified correct lose their compiled files at once. Ends at end of input.
int serveTrials(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts);

} // namespace kforge::tune

#endif // KFORGE_TUNE_DISTRIBUTED_H
