//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// kforge-run must start on machines without a GPU (CPU artifacts, CI), so it never links libcuda: the
// functions it needs are looked up in libcuda.so.1 when a GPU artifact is run. The few types are declared
// here (the driver ABI), so building the runner needs no CUDA toolkit either.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_CUDADRIVER_H
#define KFORGE_RUNNER_CUDADRIVER_H

#include <cstddef>
#include <string>

namespace kforge {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUevent = struct CUevent_st *;
using CUfunction = struct CUfunc_st *;

/// The driver entry points kforge-run uses; `load` fills them.
struct CudaDriver {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*deviceGet)(CUdevice *, int) = nullptr;
  CUresult (*deviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*deviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ctxSynchronize)() = nullptr;
  CUresult (*memAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*memFree)(CUdeviceptr) = nullptr;
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*memsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*eventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*eventRecord)(CUevent, void *) = nullptr;
  CUresult (*eventSynchronize)(CUevent) = nullptr;
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent) = nullptr;
  CUresult (*eventDestroy)(CUevent) = nullptr;
  CUresult (*funcGetAttribute)(int *, int, CUfunction) = nullptr;
  CUresult (*occupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t) = nullptr;
  CUresult (*getErrorName)(CUresult, const char **) = nullptr;
  // Optional (kforge-run works without them): device-side copies and fills for the long-lived runner.
  CUresult (*memcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*memsetD32)(CUdeviceptr, unsigned int, size_t) = nullptr;
  CUresult (*memsetD16)(CUdeviceptr, unsigned short, size_t) = nullptr;
  // Optional: page-locking the host memory a large output is copied to (LoadedArtifact.cpp's readOutput).
  CUresult (*memHostRegister)(void *, size_t, unsigned) = nullptr;
  // Optional: a kernel of kforge-run's own (the clean L2 flush, L2Flush.h).
  CUresult (*moduleLoadData)(void **, const void *) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction *, void *, const char *) = nullptr;
  CUresult (*moduleUnload)(void *) = nullptr;
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                           void **, void **) = nullptr;

  /// Loads libcuda.so.1 and makes device `ordinal`'s primary context current. Empty on success, else why not.
  std::string load(int ordinal);
  /// The device load() made current (its ordinal, as given).
  CUdevice device = 0;

  /// "cuFoo failed: CUDA_ERROR_X" for a failed call, empty for success.
  std::string check(CUresult result, const char *call) const;
};

// Attribute numbers from the driver API (stable ABI values).
constexpr int kFuncMaxThreadsPerBlock = 0, kFuncSharedSizeBytes = 1, kFuncConstSizeBytes = 2, kFuncLocalSizeBytes = 3,
              kFuncNumRegs = 4;
constexpr int kDeviceMultiprocessorCount = 16, kDeviceL2CacheSize = 38, kDeviceMaxThreadsPerBlock = 1,
              kDeviceMaxSharedPerBlock = 8, kDeviceMaxRegistersPerBlock = 12, kDeviceMaxThreadsPerSM = 39,
              kDeviceCCMajor = 75, kDeviceCCMinor = 76, kDeviceMaxRegistersPerSM = 82, kDeviceMaxSharedPerBlockOptin = 97;

} // namespace kforge

#endif // KFORGE_RUNNER_CUDADRIVER_H
