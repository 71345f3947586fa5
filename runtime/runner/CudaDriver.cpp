//===- CudaDriver.cpp - the CUDA driver API, loaded at run time ----------===//

#include "CudaDriver.h"

#include <dlfcn.h>

using namespace kforge;

template <typename F> static bool resolve(void *library, const char *name, F &slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  return slot != nullptr;
}

std::string CudaDriver::load(int ordinal) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!library)
    return std::string("cannot load the CUDA driver (libcuda.so.1): ") + dlerror();
  // Versioned names are the ones cuda.h maps the plain names to.
  bool ok =
      resolve(library, "cuInit", init) && resolve(library, "cuDeviceGet", deviceGet) &&
      resolve(library, "cuDeviceGetName", deviceGetName) &&
      resolve(library, "cuDeviceGetAttribute", deviceGetAttribute) &&
      resolve(library, "cuDevicePrimaryCtxRetain", primaryCtxRetain) &&
      resolve(library, "cuCtxSetCurrent", ctxSetCurrent) && resolve(library, "cuCtxSynchronize", ctxSynchronize) &&
      resolve(library, "cuMemAlloc_v2", memAlloc) && resolve(library, "cuMemFree_v2", memFree) &&
      resolve(library, "cuMemcpyHtoD_v2", memcpyHtoD) && resolve(library, "cuMemcpyDtoH_v2", memcpyDtoH) &&
      resolve(library, "cuMemsetD8_v2", memsetD8) && resolve(library, "cuEventCreate", eventCreate) &&
      resolve(library, "cuEventRecord", eventRecord) && resolve(library, "cuEventSynchronize", eventSynchronize) &&
      resolve(library, "cuEventElapsedTime_v2", eventElapsedTime) &&
      resolve(library, "cuEventDestroy_v2", eventDestroy) && resolve(library, "cuFuncGetAttribute", funcGetAttribute) &&
      resolve(library, "cuOccupancyMaxActiveBlocksPerMultiprocessor", occupancyMaxActiveBlocksPerMultiprocessor) &&
      resolve(library, "cuGetErrorName", getErrorName);
  if (!ok)
    return "the CUDA driver lacks an entry point kforge-run needs (driver too old?)";
  if (!resolve(library, "cuMemcpyDtoD_v2", memcpyDtoD) || !resolve(library, "cuMemsetD32_v2", memsetD32) ||
      !resolve(library, "cuMemsetD16_v2", memsetD16))
    memcpyDtoD = nullptr; // the device-side seed path is all or nothing
  if (!resolve(library, "cuMemHostRegister_v2", memHostRegister))
    memHostRegister = nullptr;
  if (!resolve(library, "cuModuleLoadData", moduleLoadData) ||
      !resolve(library, "cuModuleGetFunction", moduleGetFunction) ||
      !resolve(library, "cuModuleUnload", moduleUnload) || !resolve(library, "cuLaunchKernel", launchKernel))
    moduleLoadData = nullptr; // the clean L2 flush is all or nothing
  device = 0;
  CUcontext context = nullptr;
  std::string error = check(init(0), "cuInit");
  if (error.empty())
    error = check(deviceGet(&device, ordinal), "cuDeviceGet");
  if (error.empty())
    error = check(primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  if (error.empty())
    error = check(ctxSetCurrent(context), "cuCtxSetCurrent");
  return error;
}

std::string CudaDriver::check(CUresult result, const char *call) const {
  if (result == 0)
    return "";
  const char *name = nullptr;
  if (getErrorName)
    getErrorName(result, &name);
  return std::string(call) + " failed: " + (name ? name : ("CUDA error " + std::to_string(result)));
}
