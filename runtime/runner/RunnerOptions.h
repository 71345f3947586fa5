//===- RunnerOptions.h - kforge-run's command line --------------*- C++ -*-===//
//
// Hand-written parsing: kforge-run links no LLVM (see kforge-run.cpp), so no llvm::cl.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_RUNNEROPTIONS_H
#define KFORGE_RUNNER_RUNNEROPTIONS_H

#include <string>

namespace kforge {

struct RunnerOptions {
  std::string candidate, reference, candidateName = "kernel", referenceName = "kernel";
  std::string independent; ///< Optional third artifact the reference is checked against once (seed 0).
  /// Optional output elements of seed 0 computed elsewhere (kforge-compile --sample-outputs) that the
  /// reference's seed-0 outputs must agree with.
  std::string referenceSamples;
  /// A --serve request's "reference_check_only" (its candidate the reference's own artifact): only the check
  /// against referenceSamples, on the seed-0 outputs this runner holds from an earlier request (nothing runs),
  /// or, when it holds none, on a run of seed 0 as any request with the samples. The tuner can then compute the
  /// samples while the baseline runs instead of before it.
  bool referenceCheckOnly = false;
  std::string runtime, output;
  std::string cacheDir; ///< Inputs and reference outputs per seed, reused across runs (see SeedCache.h).
  int seeds = 5, reps = 20, warmup = 3, timeout = 120, device = 0;
  std::string l2Flush = "dirty"; ///< How the flush before each timed GPU repetition leaves L2 (L2Flush.h).
  /// The precision fp32 contractions are allowed: "ieee" (f32 arithmetic), or "tf32" (the user allowed TF32
  /// tensor cores, as torch.backends.cuda.matmul.allow_tf32): the fp32 tolerance becomes TF32's (DType.h).
  std::string precision = "ieee";
  double tolerance = -1;         // -1: by dtype
  double ceilingGBps = 0, ceilingTflops = 0;
  double cutoffMs = 0; ///< A candidate whose run (the second, if any) takes longer is "too-slow", not timed.
  /// With several seeds the first run is too-slow beyond 10 x cutoff + this (its module load, first touches).
  double firstRunAllowanceMs = 1000;
  /// When positive: fewer timed repetitions (never under 10) for a candidate whose runs would exceed this many
  /// milliseconds in total. A search needs a median, not 20 samples of a kernel far from the best.
  double timingBudgetMs = 0;
  /// When 0 or more: a candidate whose last verification run took longer than this many milliseconds is timed
  /// with the fewest repetitions (10, after at most 1 warm-up), and the report says "slow_run": a baseline's
  /// verification and timing in one request (kforge-tune) need not learn its speed from a run of its own first.
  double slowRunMs = -1;
  bool timeReference = false;
  /// --host-inputs 1: every input drawn by the judge and copied to the executors, also a GPU executor's f32
  /// inputs, which it otherwise makes on the device (DeviceInputs.h).
  bool hostInputs = false;
  bool serve = false; ///< --serve: evaluate candidates named on stdin, one JSON report line each (Runner.h).
  long memoryLimitMB = 16384;
};

/// Prints the usage on stderr.
void printUsage();

/// Reads the options of an evaluation or of --serve. False, after saying on stderr what is wrong, for an
/// unknown option, a bad value, or a missing --candidate / --reference.
bool parseRunnerOptions(int argc, char **argv, RunnerOptions &options);

} // namespace kforge

#endif // KFORGE_RUNNER_RUNNEROPTIONS_H
