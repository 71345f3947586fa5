//===- Timing.h - timing a loaded artifact, and its kernels' resources -*- C++ -*-===//

#ifndef KFORGE_RUNNER_TIMING_H
#define KFORGE_RUNNER_TIMING_H

#include "LoadedArtifact.h"
#include "RunnerOptions.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kforge {

/// Times `options.warmup` + `options.reps` calls of the artifact on its current buffers: CUDA events around
/// each call, after an L2 flush (options.l2Flush), on the GPU; the steady clock on the CPU. The statistics as
/// the report's "timing" object (with every sample: "samples_ms", "warmup_ms"), or `error` set. `calibrate`: the
/// same protocol with the call left out, which measures what the protocol itself costs per repetition.
nlohmann::json timeArtifact(LoadedArtifact &artifact, const RunnerOptions &options, std::string &error,
                            bool calibrate = false);

/// The number of kernels the mgpu runtime has seen so far (0 without a GPU runtime).
int kernelCount();

/// Resources (registers, shared memory, occupancy) of the runtime's kernels [first, last): the candidate's,
/// when called with the range its first run registered.
nlohmann::json kernelResources(int first, int last);

} // namespace kforge

#endif // KFORGE_RUNNER_TIMING_H
