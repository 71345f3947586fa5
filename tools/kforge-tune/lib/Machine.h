//===- Machine.h - the programs and the machine a run tunes for -*- C++ -*-===//

#ifndef KFORGE_TUNE_MACHINE_H
#define KFORGE_TUNE_MACHINE_H

#include "Tuner.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kforge::tune {

/// kforge-compile and kforge-run next to this executable (build/bin), the runtime `runtimePath` if given,
/// else $KFORGE_RUNTIME, else build/lib/libkforge_mgpu.so.
Tools findTools(const char *argv0, llvm::StringRef runtimePath);

/// The GPU's profile from `kforge-run --device-info`, or nothing when there is no GPU. `chip` (--chip) is
/// filled in with the GPU's when empty.
std::optional<HardwareProfile> probeGpu(const Tools &tools, std::string &chip);

/// The host CPU's profile (its physical cores).
HardwareProfile cpuProfile();

/// A GPU profile for when there is none to probe (--dry-run): the H200's shape.
HardwareProfile placeholderGpuProfile();

/// --ceilings: measured copy bandwidth and fp32 matmul rate, from JSON {"copy_gbps": G, "fp32_tflops": T,
/// "source": "..."} or from "GBPS TFLOPS". False (said on stderr) when the file does not hold them.
bool readCeilings(llvm::StringRef path, HardwareProfile &profile);

} // namespace kforge::tune

#endif // KFORGE_TUNE_MACHINE_H
