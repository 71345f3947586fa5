//===- Runner.h - kforge-run's modes, as a library ------------*- C++ -*-===//
//
// kforge-run's main parses the command line (RunnerOptions.h) and calls one of these. An evaluation loads a
// candidate and a reference artifact (LoadedArtifact.h), verifies the candidate on several seeds (Metrics.h,
// SeedCache.h), times it (Timing.h) and reports JSON. See docs/runner.md.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_RUNNER_H
#define KFORGE_RUNNER_RUNNER_H

#include "RunnerOptions.h"

#include <string>

namespace kforge {

/// The whole evaluation of `options.candidate` against `options.reference`, in this process: the JSON
/// report's text ("status": correct, incorrect, inconclusive, too-slow or failed, with the reason).
std::string evaluate(const RunnerOptions &options);

/// The evaluation in a child process with `options.timeout` and, for CPU artifacts, a memory limit, so that a
/// crash, an illegal address or a hang is a report, not the end of kforge-run. Prints the report (and writes
/// it to --output); returns the exit code: 0 correct, 1 anything else, 2 when --output cannot be written.
int evaluateIsolated(const RunnerOptions &options);

/// `--serve`: one long-lived process verifies and times many candidates against one reference, so that a
/// search pays for starting CUDA, reading the cached inputs and reference outputs, and the process itself
/// once, not per candidate (those were most of a trial's time on the H200: docs/perf/search-h200.md).
/// Requests come one per stdin line ({"candidate": DIR, "seeds", "reps", "warmup", "cutoff_ms", "output",
/// "candidate_name"}), reports go out one per line, in order, on the original stdout; anything else the
/// process prints goes to stderr. There is no child process per candidate: the caller (kforge-tune) owns
/// the time limit and restarts the server after a crash. After a GPU error that poisons the context (an
/// illegal address, say) the server answers and exits (status 3), for the same reason.
int serve(const RunnerOptions &base);

/// Writes a report where --output (or a request's "output") names, through a temporary file beside it; empty,
/// or why not (an existing path that is not a regular file is never replaced).
std::string writeReportFile(const std::string &path, const std::string &text);

/// `--device-info`: the GPU's properties the search's heuristics use, as JSON; exit 1 when there is no GPU.
int printDeviceInfo(int ordinal);

} // namespace kforge

#endif // KFORGE_RUNNER_RUNNER_H
