//===- DeviceInfo.cpp - kforge-run --device-info --------------------------===//

#include "Runner.h"

#include "LoadedArtifact.h"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace kforge;
using json = nlohmann::json;

int kforge::printDeviceInfo(int ordinal) {
  CudaDriver &cuda = cudaDriver();
  std::string error = cuda.load(ordinal);
  if (!error.empty()) {
    std::cout << json{{"gpu", false}, {"reason", error}}.dump(2) << std::endl;
    return 1;
  }
  CUdevice device = 0;
  cuda.deviceGet(&device, ordinal);
  char name[256] = {0};
  cuda.deviceGetName(name, sizeof(name), device);
  auto attribute = [&](int which) {
    int value = 0;
    cuda.deviceGetAttribute(&value, which, device);
    return value;
  };
  int major = attribute(kDeviceCCMajor), minor = attribute(kDeviceCCMinor);
  json info = {{"gpu", true},
               {"name", name},
               {"chip", "sm_" + std::to_string(major * 10 + minor)},
               {"multiprocessors", attribute(kDeviceMultiprocessorCount)},
               {"max_threads_per_block", attribute(kDeviceMaxThreadsPerBlock)},
               {"max_threads_per_multiprocessor", attribute(kDeviceMaxThreadsPerSM)},
               {"shared_bytes_per_block", attribute(kDeviceMaxSharedPerBlock)},
               {"shared_bytes_per_block_optin", attribute(kDeviceMaxSharedPerBlockOptin)},
               {"registers_per_block", attribute(kDeviceMaxRegistersPerBlock)},
               {"registers_per_multiprocessor", attribute(kDeviceMaxRegistersPerSM)},
               {"l2_bytes", attribute(kDeviceL2CacheSize)}};
  std::cout << info.dump(2) << std::endl;
  return 0;
}
