//===- Judge.h - the process that decides verdicts --------------*- C++ -*-===//
//
// See Executor.h for the split: the judge (this process) stages artifacts, makes inputs, compares outputs
// and writes reports; executors run the artifacts. Workers are the judge's executors and their staging
// directory; one evaluation uses them, --serve keeps them for the next request.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_JUDGE_H
#define KFORGE_RUNNER_JUDGE_H

#include "Executor.h"
#include "Manifest.h"
#include "RunnerOptions.h"

#include <set>
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

  ExecutorProcess candidate, reference;
  std::set<int> deviceSeeds;  ///< Seeds whose inputs the candidate's executor keeps on the device.
  bool referenceLoaded = false; ///< The reference executor holds the reference in slot "reference".

private:
  std::string staging;
  int staged = 0;
};

/// One evaluation of `options.candidate` against `options.reference` by the judge with `workers`: the JSON
/// report's text.
std::string judge(const RunnerOptions &options, Workers &workers);

} // namespace kforge

#endif // KFORGE_RUNNER_JUDGE_H
