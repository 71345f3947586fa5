/*===- mgpu_runtime.c - the mgpu* entry points on the CUDA driver API -----===*
 *
 * MLIR's gpu-to-llvm lowering turns gpu.launch_func, gpu.alloc, ... into calls to
 * mgpu* functions; Debian ships no library that defines them. This is kforge's,
 * on the CUDA driver API only (no MLIR headers). The signatures are the ones the
 * LLVM IR emitted by mlir-translate-22 declares.
 *
 * Every CUDA call is checked. An entry point has no way to return an error, so a
 * failure prints the call, the CUDA error name and its description, and aborts:
 * kernels run in a child process whose death the caller reports.
 *
 *===----------------------------------------------------------------------===*/

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = "unknown";
  const char *description = "";
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &description);
  fprintf(stderr, "kforge runtime: %s failed: %s (%s)\n", call, name, description);
  abort();
}
#define CHECK(call) check((call), #call)

/* The kernel library loads its GPU module from a global constructor, before any other call: the first
 * entry point initialises the driver and makes the device's primary context current. */
static void ensureContext(void) {
  static CUcontext context = NULL;
  if (context) {
    CHECK(cuCtxSetCurrent(context));
    return;
  }
  CUdevice device;
  CHECK(cuInit(0));
  const char *ordinal = getenv("KFORGE_DEVICE");
  CHECK(cuDeviceGet(&device, ordinal ? atoi(ordinal) : 0));
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
  /* Temporaries come from the device's stream-ordered pool (cuMemAllocAsync). Its release threshold is 0 by
   * default: every synchronisation hands the freed memory back to the driver, and the next call maps it again,
   * which for a call's large temporaries costs milliseconds to tens of milliseconds outside any kernel (a
   * run's wall time far above its kernels' on the H200: results/models-h200/call-4, the kernelbench judge's
   * false fail). The pool keeps what it frees, as PyTorch's caching allocator does; KFORGE_POOL_RELEASE_BYTES
   * sets another threshold (0: the driver's default). */
  CUmemoryPool pool;
  if (cuDeviceGetDefaultMemPool(&pool, device) == CUDA_SUCCESS) {
    const char *bytes = getenv("KFORGE_POOL_RELEASE_BYTES");
    cuuint64_t threshold = bytes ? strtoull(bytes, NULL, 10) : UINT64_MAX;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  }
}

CUmodule mgpuModuleLoad(void *data, size_t size) {
  (void)size; /* cuModuleLoadData reads the fatbin/cubin/PTX header for its size. */
  ensureContext();
  CUmodule module = NULL;
  CHECK(cuModuleLoadData(&module, data));
  return module;
}

/* Kernels the loaded libraries use, for the runner to read their resources (registers, spills, ...). */
enum { kMaxKernels = 256 };
static struct {
  CUmodule module;
  CUfunction function;
  char name[128];
  int blockThreads;      /* of the last launch */
  int dynamicSharedBytes; /* of the last launch */
} kernels[kMaxKernels];
static int kernelCount = 0;

/* Called from the kernel library's global destructor (dlclose, or process exit: then the driver may already
 * be shut down, which releases the module anyway). The module's kernels leave the registry, so a runner that
 * loads and unloads many candidates (kforge-run --serve) neither fills it nor reads unloaded functions. */
void mgpuModuleUnload(CUmodule module) {
  CUresult result = cuModuleUnload(module);
  if (result != CUDA_ERROR_DEINITIALIZED)
    CHECK(result);
  int kept = 0;
  for (int i = 0; i < kernelCount; ++i)
    if (kernels[i].module != module)
      kernels[kept++] = kernels[i];
  kernelCount = kept;
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CUfunction function = NULL;
  CHECK(cuModuleGetFunction(&function, module, name));
  int known = 0;
  for (int i = 0; i < kernelCount; ++i)
    known |= kernels[i].function == function;
  if (!known && kernelCount < kMaxKernels) {
    kernels[kernelCount].module = module;
    kernels[kernelCount].function = function;
    snprintf(kernels[kernelCount].name, sizeof(kernels[kernelCount].name), "%s", name);
    ++kernelCount;
  }
  return function;
}

/* Introspection for kforge-run: the kernels seen so far (the module loads at library load time, the
 * functions at their first launch). */
int kforgeRuntimeKernelCount(void) { return kernelCount; }
CUfunction kforgeRuntimeKernel(int index, const char **name, int *blockThreads, int *dynamicSharedBytes) {
  if (index < 0 || index >= kernelCount)
    return NULL;
  if (name)
    *name = kernels[index].name;
  if (blockThreads)
    *blockThreads = kernels[index].blockThreads;
  if (dynamicSharedBytes)
    *dynamicSharedBytes = kernels[index].dynamicSharedBytes;
  return kernels[index].function;
}

/* The stream the lowered host code launches on. By default every call of a kernel function creates a stream,
 * launches on it, waits for it and destroys it: the call returns with its results ready (kforge-run, C callers).
 * A framework that orders work on its own stream (PyTorch's current stream) sets that stream instead: the
 * kernel function then launches on it and returns without waiting, like any other kernel launch of the
 * framework, and the stream-ordered allocator keeps temporary buffers in the same order. */
static CUstream callerStream = NULL;
static int callerStreamSet = 0;

void kforgeRuntimeSetStream(CUstream stream) {
  callerStream = stream;
  callerStreamSet = 1;
}

void kforgeRuntimeClearStream(void) {
  callerStream = NULL;
  callerStreamSet = 0;
}

CUstream mgpuStreamCreate(void) {
  ensureContext();
  if (callerStreamSet)
    return callerStream;
  CUstream stream = NULL;
  /* A blocking stream: it orders with the legacy default stream, so events recorded there bracket it. */
  CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT));
  return stream;
}

void mgpuStreamDestroy(CUstream stream) {
  if (callerStreamSet && stream == callerStream)
    return; /* the caller's */
  CHECK(cuStreamDestroy(stream));
}

void mgpuStreamSynchronize(CUstream stream) {
  if (callerStreamSet && stream == callerStream)
    return; /* the caller orders its later work on the same stream */
  CHECK(cuStreamSynchronize(stream));
}

/* Before a launch: the context, the kernel's launch shape kept for the resource report, and dynamic shared
 * memory above 48 KB allowed. */
static void prepareLaunch(CUfunction function, intptr_t blockThreads, int32_t sharedMemBytes) {
  ensureContext();
  for (int i = 0; i < kernelCount; ++i)
    if (kernels[i].function == function) {
      kernels[i].blockThreads = (int)blockThreads;
      kernels[i].dynamicSharedBytes = sharedMemBytes;
    }
  if (sharedMemBytes > 48 * 1024)
    CHECK(cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedMemBytes));
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                      intptr_t blockY, intptr_t blockZ, int32_t sharedMemBytes, CUstream stream, void **params,
                      void **extra, size_t paramsCount) {
  (void)paramsCount;
  prepareLaunch(function, blockX * blockY * blockZ, sharedMemBytes);
  CHECK(cuLaunchKernel(function, (unsigned)gridX, (unsigned)gridY, (unsigned)gridZ, (unsigned)blockX,
                       (unsigned)blockY, (unsigned)blockZ, (unsigned)sharedMemBytes, stream, params, extra));
}

/* A launch in clusters of clusterX x clusterY x clusterZ blocks (gpu.launch with clusters, e.g. two blocks that
 * share an operand's tile by TMA multicast): cuLaunchKernelEx with the cluster dimension as a launch attribute.
 * The arguments are those MLIR's launch_func lowering passes (no parameter count). */
void mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX, intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                             intptr_t blockZ, int32_t sharedMemBytes, CUstream stream, void **params, void **extra) {
  prepareLaunch(function, blockX * blockY * blockZ, sharedMemBytes);
  CUlaunchAttribute cluster;
  memset(&cluster, 0, sizeof cluster);
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = (unsigned)clusterX;
  cluster.value.clusterDim.y = (unsigned)clusterY;
  cluster.value.clusterDim.z = (unsigned)clusterZ;
  CUlaunchConfig config;
  memset(&config, 0, sizeof config);
  config.gridDimX = (unsigned)gridX;
  config.gridDimY = (unsigned)gridY;
  config.gridDimZ = (unsigned)gridZ;
  config.blockDimX = (unsigned)blockX;
  config.blockDimY = (unsigned)blockY;
  config.blockDimZ = (unsigned)blockZ;
  config.sharedMemBytes = (unsigned)sharedMemBytes;
  config.hStream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  CHECK(cuLaunchKernelEx(&config, function, params, extra));
}

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, int8_t isHostShared) {
  ensureContext();
  CUdeviceptr pointer = 0;
  if (sizeBytes == 0)
    return NULL;
  if (isHostShared)
    CHECK(cuMemAllocManaged(&pointer, sizeBytes, CU_MEM_ATTACH_GLOBAL));
  else if (stream || callerStreamSet) /* the caller's stream may be the legacy default stream, NULL */
    CHECK(cuMemAllocAsync(&pointer, sizeBytes, stream));
  else
    CHECK(cuMemAlloc(&pointer, sizeBytes));
  return (void *)pointer;
}

void mgpuMemFree(void *pointer, CUstream stream) {
  if (!pointer)
    return;
  if (stream || callerStreamSet)
    CHECK(cuMemFreeAsync((CUdeviceptr)pointer, stream));
  else
    CHECK(cuMemFree((CUdeviceptr)pointer));
}

/* TMA tensor maps, for kernels that copy with cp.async.bulk.tensor (transform.kforge.matmul_to_mma_sync's tma):
 * the lowered host code calls kforge_tensor_map_2d before the launch, with the address and shape of a 2-D
 * row-major tensor and the box the kernel copies (boxRows x boxCols elements, landing 128-byte swizzled in
 * shared memory), and passes the returned device address to the kernel, which reads the map there. Maps are
 * cached by their parameters, so a kernel called again on the same buffers pays neither the encoding nor the
 * copy (the map describes only the address and the layout: a buffer freed and allocated again at the same
 * address gets the same map). When the cache is full, the device is synchronised before its slots are
 * reused, since a kernel still running may read them. The cache is shared by the process's threads (a
 * framework may call kernels from several), under a lock. */
enum { kMaxTensorMaps = 64, kTensorMapKey = 7 };
static struct {
  uint64_t key[kTensorMapKey];
} tensorMaps[kMaxTensorMaps];
static int tensorMapCount = 0;
static CUdeviceptr tensorMapPool = 0;
static pthread_mutex_t tensorMapLock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t tensorMap2dLocked(uint64_t address, uint64_t rows, uint64_t cols, uint64_t rowBytes,
                                  uint64_t boxRows, uint64_t boxCols, uint64_t elementBytes) {
  uint64_t key[kTensorMapKey] = {address, rows, cols, rowBytes, boxRows, boxCols, elementBytes};
  for (int i = 0; i < tensorMapCount; ++i)
    if (memcmp(tensorMaps[i].key, key, sizeof(key)) == 0)
      return (uint64_t)(tensorMapPool + (CUdeviceptr)i * sizeof(CUtensorMap));
  CUtensorMapDataType type;
  switch (elementBytes) {
  case 1: type = CU_TENSOR_MAP_DATA_TYPE_UINT8; break;
  case 2: type = CU_TENSOR_MAP_DATA_TYPE_UINT16; break;
  case 4: type = CU_TENSOR_MAP_DATA_TYPE_UINT32; break;
  default:
    fprintf(stderr, "kforge runtime: kforge_tensor_map_2d: elements of %llu bytes are not supported\n",
            (unsigned long long)elementBytes);
    abort();
  }
  if (!tensorMapPool)
    CHECK(cuMemAlloc(&tensorMapPool, kMaxTensorMaps * sizeof(CUtensorMap)));
  if (tensorMapCount == kMaxTensorMaps) {
    CHECK(cuCtxSynchronize());
    tensorMapCount = 0;
  }
  /* Innermost dimension first. */
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {rowBytes};
  cuuint32_t box[2] = {(cuuint32_t)boxCols, (cuuint32_t)boxRows};
  cuuint32_t elementStrides[2] = {1, 1};
  CUtensorMap map;
  CHECK(cuTensorMapEncodeTiled(&map, type, 2, (void *)(uintptr_t)address, dims, strides, box, elementStrides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CUdeviceptr slot = tensorMapPool + (CUdeviceptr)tensorMapCount * sizeof(CUtensorMap);
  CHECK(cuMemcpyHtoD(slot, &map, sizeof(map)));
  memcpy(tensorMaps[tensorMapCount].key, key, sizeof(key));
  ++tensorMapCount;
  return (uint64_t)slot;
}

uint64_t kforge_tensor_map_2d(uint64_t address, uint64_t rows, uint64_t cols, uint64_t rowBytes, uint64_t boxRows,
                              uint64_t boxCols, uint64_t elementBytes) {
  ensureContext();
  pthread_mutex_lock(&tensorMapLock);
  uint64_t map = tensorMap2dLocked(address, rows, cols, rowBytes, boxRows, boxCols, elementBytes);
  pthread_mutex_unlock(&tensorMapLock);
  return map;
}
