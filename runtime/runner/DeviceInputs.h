//===- DeviceInputs.h - a GPU executor's inputs made on the device ----*- C++ -*-===//
//
// Every seed of every candidate used to copy each f32 input over PCIe (the judge's values, through the shared
// memory): 8.6 GB a seed for a 2048 x 1048576 matvec, ~1 s of a 3 ms kernel's run. A GPU executor now makes
// those inputs in place with Random.h's values, bit for bit (integer hashing, one correctly rounded f32
// multiplication; this file's PTX), and reads a few of them back so that the judge checks them against its own.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_DEVICEINPUTS_H
#define KFORGE_RUNNER_DEVICEINPUTS_H

#include "CudaDriver.h"
#include "Random.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

/// Which values an argument's device buffer gets (Random.h's inputValue).
struct DeviceInputSpec {
  uint64_t key = 0;
  InputMode mode = InputMode::Normal;
  uint64_t bound = 0; ///< InputMode::Index: values in [0, bound).
};

/// The elements of a `count`-element argument whose generated values the executor reads back and the judge
/// checks: spread over the whole argument, its first and last included.
std::vector<uint64_t> checkedInputPositions(size_t count);

/// The PTX of the generator kernel (kforge_fill_inputs; sm_75 and later).
const char *fillInputsPtx();

/// Fills `count` f32 at `buffer` (a device pointer of the current context) with inputValue(spec.key, i,
/// spec.mode, spec.bound), i in [0, count), and reads the values at checkedInputPositions(count) into
/// `checked` (their bits). Empty, or the failed driver call.
std::string fillInputsOnDevice(CudaDriver &cuda, CUdeviceptr buffer, size_t count, const DeviceInputSpec &spec,
                               std::vector<uint32_t> &checked);

/// What an executor's run error starts with when it cannot make inputs on the device: the judge then draws
/// them for the rest of its session and runs the seed again.
inline constexpr const char *kDeviceInputsUnavailable = "device inputs unavailable: ";

/// Once per process, before the first inputs it makes: the generator on a few thousand elements of each mode,
/// compared with Random.h's values here. Empty when they agree, else why not (a driver without module loading,
/// or a GPU whose arithmetic disagrees with the host's).
std::string selfTestDeviceInputs(CudaDriver &cuda);

} // namespace kforge

#endif // KFORGE_RUNNER_DEVICEINPUTS_H
