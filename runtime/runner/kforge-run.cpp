//===- kforge-run.cpp - verify and time an artifact against a reference --===//
//
//   kforge-run --candidate DIR --reference DIR [--seeds 5] [--reps 20] [--tolerance T] [--timeout S] ...
//
// Loads two artifacts (kforge-compile output: <name>.so + <name>.json; either may target the GPU or the
// CPU), and reports JSON: correctness over several seeds (random normal inputs, outputs poisoned with NaN,
// candidate run before the reference on fresh buffers), timing of the candidate (warm-up, many
// repetitions, L2 flushed between them on the GPU), and the GPU kernels' resources. Everything runs in a
// child process with a time limit, so a crash, an illegal address or a hang is a result, not the end of
// the caller. Exit status: 0 correct, 1 anything else, 2 bad usage. See docs/runner.md.
//
// The runner deliberately links no LLVM (it must run on the GPU machine, which has no LLVM/MLIR), hence the
// small hand-written option parsing and process isolation instead of llvm::cl and llvm::sys::Program.
// The work is the KforgeRunner library (Runner.h); this main picks the mode.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"
#include "L2Flush.h"
#include "Runner.h"
#include "RunnerOptions.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>

using namespace kforge;

int main(int argc, char **argv) {
  // Arguments are tens of MB, allocated and freed for every seed and candidate: keep freed memory in the heap
  // (glibc would otherwise mmap and unmap each one, and every page fault of a fresh mapping costs again).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // The judge starts its executors as `kforge-run --executor` (Executor.h); not for direct use.
  if (argc == 2 && std::strcmp(argv[1], "--executor") == 0)
    return runExecutor();
  if (argc == 2 && std::strcmp(argv[1], "--print-l2-read-kernel") == 0) {
    std::fputs(l2ReadFlushPtx(), stdout);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "--device-info") == 0) {
    int ordinal = argc == 4 && std::strcmp(argv[2], "--device") == 0 ? std::atoi(argv[3]) : 0;
    if (argc != 2 && argc != 4) {
      printUsage();
      return 2;
    }
    return printDeviceInfo(ordinal);
  }
  RunnerOptions options;
  if (!parseRunnerOptions(argc, argv, options)) {
    printUsage();
    return 2;
  }
  if (options.serve)
    return serve(options);
  return evaluateIsolated(options);
}
