//===- Executor.h - the process that runs candidate code --------*- C++ -*-===//
//
// kforge-run is two kinds of process (docs/runner.md, "Who decides a verdict"):
//  - the judge: reads manifests, makes the inputs, holds the reference's outputs, compares, decides and
//    writes the report. It never loads an artifact and never initialises CUDA.
//  - executors: `kforge-run --executor`, started by the judge (fork + exec of the same binary, so an
//    executor holds none of the judge's memory), contained (Containment.h) before they load anything. One
//    runs the candidate, another (never the same process) the reference. An executor copies each output
//    into memory it shares with the judge and answers one JSON line per command; the judge treats every byte
//    an executor sends, and every value in the shared memory, as the candidate's claim, never as a verdict.
//
// ExecutorProcess is the judge's handle of one executor: start, one command at a time with a deadline, and
// the end of the process (timeout, crash, broken protocol) turned into a reason.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_EXECUTOR_H
#define KFORGE_RUNNER_EXECUTOR_H

#include "Containment.h"
#include "RunnerOptions.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kforge {

using Deadline = std::chrono::steady_clock::time_point;

/// Where each argument's float values live in the memory an executor shares with the judge.
struct ArgumentLayout {
  std::vector<size_t> offsets, counts; ///< In floats.
  size_t totalFloats = 0;
  static ArgumentLayout of(const std::vector<size_t> &counts);
};

class ExecutorProcess {
public:
  ExecutorProcess() = default;
  ExecutorProcess(const ExecutorProcess &) = delete;
  ExecutorProcess &operator=(const ExecutorProcess &) = delete;
  ~ExecutorProcess() { stop(); }

  /// Starts `kforge-run --executor` with shared memory for `layout`, sends it the options it needs and waits
  /// (until `deadline`) for it to contain itself. False with `why` set when it could not start.
  bool start(const RunnerOptions &options, const ArgumentLayout &layout, const ContainmentPlan &plan,
             bool cpuMemoryLimit, Deadline deadline, std::string &why);
  bool running() const { return pid > 0; }

  /// Sends `command`, waits for one reply line until `deadline`. The reply object, or nothing with `why` set
  /// ("timed out after ...", "crashed: signal ...", "exited with status ...", a protocol violation) and the
  /// process stopped. A reply {"error": ...} is returned as is: the caller decides.
  std::optional<nlohmann::json> call(const nlohmann::json &command, Deadline deadline, std::string &why);

  /// Kills the executor (its whole process group) and waits for it. `graceful`: first closes the channel and
  /// gives an idle executor a moment to exit by itself (its exit handlers run).
  void stop(bool graceful = false);

  /// The shared floats of argument `i` (inputs the judge writes, outputs the executor writes).
  float *argument(size_t i) { return shared + layout.offsets[i]; }
  const ArgumentLayout &argumentLayout() const { return layout; }

  /// What the executor reported about its containment when it started.
  const nlohmann::json &containment() const { return containmentReport; }
  /// The tail of the executor's stderr (diagnostics only: the candidate can write anything there).
  const std::string &errors() const { return stderrTail; }
  /// Echo the executor's stderr on this process's stderr as it arrives (--serve: it goes to the tuner's log).
  void echoErrors(bool on) { echo = on; }
  /// The timeout (seconds) a deadline was computed from, for the message when it passes.
  void describeTimeout(int seconds) { timeoutSeconds = seconds; }

private:
  void drainErrors();
  std::string endedBecause();

  pid_t pid = -1;
  int channel = -1, errorPipe = -1;
  float *shared = nullptr;
  size_t sharedBytes = 0;
  int memoryFd = -1; ///< The shared memory's memfd, kept to hand the region on to the next executor.
  ArgumentLayout layout;
  std::string pending, stderrTail;
  nlohmann::json containmentReport;
  bool echo = false;
  int timeoutSeconds = 0;
  uint64_t sequence = 0; ///< The number of the last command sent; its reply must echo it.
};

/// `kforge-run --executor`: the executor's main (descriptor 3 is the channel, 4 the shared memory).
int runExecutor();

} // namespace kforge

#endif // KFORGE_RUNNER_EXECUTOR_H
