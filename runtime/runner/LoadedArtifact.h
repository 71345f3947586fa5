//===- LoadedArtifact.h - an artifact loaded into kforge-run ----*- C++ -*-===//
//
// An artifact (kforge-compile's <name>.so + <name>.json) dlopen'ed into this process, with one buffer per
// argument of its entry point: allocated on the first run and rewritten whole before each (inputs copied in,
// outputs poisoned with NaN, guard bytes set), called through the C entry point with memref descriptors, and
// read back.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_LOADEDARTIFACT_H
#define KFORGE_RUNNER_LOADEDARTIFACT_H

#include "CudaDriver.h"
#include "DType.h"
#include "DeviceInputs.h"
#include "Manifest.h"
#include "RunnerOptions.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

/// The driver API, one per process: loaded by the first GPU artifact (loadArtifact) or by --device-info.
CudaDriver &cudaDriver();
/// Whether a GPU artifact loaded the driver API (and the mgpu runtime).
bool cudaLoaded();

/// An artifact loaded into this (child) process, with its buffers. Released (device buffers freed, library
/// closed, which unloads its GPU module) when it goes out of scope, so a long-lived runner (--serve) can load
/// thousands of candidates one after another.
struct LoadedArtifact {
  LoadedArtifact() = default;
  LoadedArtifact(const LoadedArtifact &) = delete;
  LoadedArtifact &operator=(const LoadedArtifact &) = delete;
  ~LoadedArtifact();
  Manifest manifest;
  void *library = nullptr;
  void *entry = nullptr;
  bool gpu = false;
  std::vector<DType> types; ///< Element type of each argument.
  /// Each argument in its element type, as the kernel sees it, followed by its guard bytes; for a direct
  /// argument only the guard bytes, as read back from the device.
  std::vector<std::vector<uint8_t>> storage;
  std::vector<size_t> bytes; ///< Each argument's own bytes (without the guard).
  /// GPU f32 arguments: uploaded from the caller's memory, poisoned and guarded on the device, read back
  /// straight into the caller's memory (no host copy of a multi-GB argument in the executor).
  std::vector<bool> direct;
  std::vector<CUdeviceptr> device;           ///< GPU artifacts: one device buffer per argument.
  std::vector<std::vector<int64_t>> descriptors;
};

/// Loads `<dir>/<name>.json` and its library (a GPU artifact also loads the driver API and the mgpu runtime
/// named by --runtime or $KFORGE_RUNTIME). Empty, or what is wrong.
std::string loadArtifact(const std::string &dir, const std::string &name, const RunnerOptions &options,
                         LoadedArtifact &artifact);

/// Bytes past the end of every argument's buffer filled with kGuardByte before a verified run and checked
/// unchanged after it: a kernel that writes past the end of a buffer (a partial tile's store that escaped its
/// edge) fails with where, instead of corrupting memory nothing compares. At least 4 KiB, up to 1/4 of the
/// argument, at most 4 MiB.
size_t guardBytes(size_t argumentBytes);
inline constexpr uint8_t kGuardByte = 0xFE;

/// The buffers for a run, rewritten whole: inputs packed from `inputs[i]` (numElements floats; ignored for
/// outputs), outputs filled with the poison (NaN), each followed by its guard bytes (and copied to the device
/// for a GPU artifact). Nothing an earlier run left in them survives. An input with a `generate` spec (only a
/// direct argument: GPU f32) is made on the device instead (DeviceInputs.h; `inputs[i]` ignored), and the
/// bits of its values at checkedInputPositions go to `checked[i]`. Empty, or the failed call.
std::string prepare(LoadedArtifact &artifact, const std::vector<const float *> &inputs,
                    const std::vector<std::optional<DeviceInputSpec>> &generate = {},
                    std::vector<std::vector<uint32_t>> *checked = nullptr);

/// Calls the C entry point with one memref descriptor pointer per argument.
void callEntry(LoadedArtifact &artifact);

/// Runs the artifact once and copies its outputs back to the host storage. Empty, or the failed call, or the
/// argument whose guard bytes the kernel wrote.
std::string runOnce(LoadedArtifact &artifact);

/// After runOnce: output argument `i` as floats into `values` (numElements floats). Empty, or the failed
/// copy from the device. `values` must stay mapped for the process's life (the executor's shared memory): the
/// whole pages of a large output's destination are page-locked there once (cuMemHostRegister) and stay so.
std::string readOutput(const LoadedArtifact &artifact, size_t i, float *values);

} // namespace kforge

#endif // KFORGE_RUNNER_LOADEDARTIFACT_H
