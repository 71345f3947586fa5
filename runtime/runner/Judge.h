//===- Judge.h - the process that decides verdicts --------------*- C++ -*-===//
//
// See Executor.h for the split: the judge (this process) stages artifacts, makes inputs, compares outputs
// and writes reports; executors run the artifacts. Workers are the judge's executors and their staging
// directory. The candidate's executor serves exactly one candidate: it is killed and reaped when that
// candidate's evaluation ends, so nothing a candidate leaves in its process (a thread, a changed descriptor,
// memory) meets the next one. The reference's executor never runs candidate code, so --serve keeps it.
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_JUDGE_H
#define KFORGE_RUNNER_JUDGE_H

#include "Executor.h"
#include "Manifest.h"
#include "RunnerOptions.h"

#include <string>

namespace kforge {

class Workers {
public:
  Workers() = default;
  Workers(const Workers &) = delete;
  Workers &operator=(const Workers &) = delete;
  ~Workers();

  /// Copies the artifact's manifest and library (only those: the manifest names a plain file beside it)
  /// into a fresh directory of the judge's private staging area, which the executors may read. Empty, or
  /// why not; `stagedDir` is where the executor loads it from.
  std::string stage(const Manifest &manifest, const std::string &name, std::string &stagedDir);
  /// The staging area (created on first use).
  const std::string &stagingArea();

  /// Ends the candidate's executor (killed, reaped, its channel closed) and removes its staged files.
  void retireCandidate();

  ExecutorProcess candidate, reference;
  bool referenceLoaded = false; ///< The reference executor holds the reference in slot "reference".
  std::string candidateStage; ///< The staged copy of the current candidate.
  /// Why the reference's executor could not make inputs on the device (DeviceInputs.h), once it said so: the
  /// judge then draws every input for the rest of its session.
  std::string deviceInputsUnavailable;

private:
  std::string staging;
  int staged = 0;
};

/// One evaluation of `options.candidate` against `options.reference` by the judge with `workers`: the JSON
/// report's text.
std::string judge(const RunnerOptions &options, Workers &workers);

} // namespace kforge

#endif // KFORGE_RUNNER_JUDGE_H
