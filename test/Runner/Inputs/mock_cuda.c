/* A stand-in for libcuda.so.1 on a machine without a GPU, for testing kforge-run's GPU data path
 * (test/Runner/serve-device-seeds.test): "device" memory is host memory, copies are memcpy, events read a
 * clock. A CPU kernel library relabelled as a GPU artifact then runs on these "device" buffers, so the
 * runner's device-side logic (pristine seed copies, device-to-device copies, NaN poisoning with memset)
 * is exercised for real. At exit it prints how many bytes went host-to-device and device-to-device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static unsigned long long htodBytes, dtodBytes, dtohBytes;
/* kforge-run's L2 flushes are logged (test/Runner/l2-flush.test): fills of a buffer of at least 4 MB (4x the
 * mock's L2) and launches of its read kernel, the only module this mock loads. */
static char flushKernel; /* its function handle */
/* And the generator of a GPU executor's inputs (runtime/runner/DeviceInputs.cpp), run here on the host by a
 * C model of runtime/runner/Random.h written apart from it: the judge checks the values it reads back against
 * its own, so a disagreement between the two fails every GPU test that uses the mock. */
static char fillModule, fillKernel;

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static void fillInputs(float *out, unsigned long long count, uint64_t key, unsigned long long mode,
                       unsigned long long bound) {
  for (unsigned long long i = 0; i < count; ++i) {
    uint64_t first = mix64(key + i * 0x9e3779b97f4a7c15ull);
    if (mode == 2) {
      out[i] = (float)(first % bound);
      continue;
    }
    uint64_t second = mix64(first ^ 0x2545f4914f6cdd1dull);
    long long sum = -262140;
    for (int shift = 0; shift < 64; shift += 16)
      sum += (long long)((first >> shift) & 0xffff) + (long long)((second >> shift) & 0xffff);
    float value = (float)sum * 0x1.3988e2p-16f;
    if (mode == 1) /* positive: |value|, never 0 (Random.h) */
      value = value < 0 ? -value : value == 0 ? 0x1.3988e2p-16f : value;
    out[i] = value;
  }
#ifdef MOCK_WRONG_INPUTS /* a generator that disagrees with the judge's (test/Runner/serve-device-seeds.test) */
  if (count > 0)
    out[0] += 1;
#endif
#ifdef MOCK_WRONG_RUN_INPUTS /* one that passes the executor's self-test (4099 elements) and disagrees later */
  if (count > 0 && count != 4099)
    out[count - 1] += 1;
#endif
  fprintf(stderr, "mock-cuda: %llu inputs made on the device\n", count);
}

static void report(void) {
  fprintf(stderr, "mock-cuda: htod %llu dtod %llu dtoh %llu\n", htodBytes, dtodBytes, dtohBytes);
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  static int registered;
  if (!registered++)
    atexit(report);
  return 0;
}
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  snprintf(name, (size_t)length, "mock GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 38 ? (1 << 20) : 1; /* L2: 1 MB, so the flush buffer is small */
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) { (void)device; *context = (void *)1; return 0; }
CUresult cuCtxSetCurrent(void *context) { (void)context; return 0; }
CUresult cuDeviceGetDefaultMemPool(void **pool, int device) { (void)device; *pool = (void *)2; return 0; }
CUresult cuMemPoolSetAttribute(void *pool, int attribute, void *value) {
  (void)pool;
  (void)attribute;
  fprintf(stderr, "mock-cuda: pool release threshold %llu\n", (unsigned long long)*(uint64_t *)value);
  return 0;
}
CUresult cuCtxSynchronize(void) { fprintf(stderr, "mock-cuda: synchronize context\n"); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  void *p = aligned_alloc(256, (bytes + 255) / 256 * 256);
  *pointer = (CUdeviceptr)p;
  return p ? 0 : 2;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) { free((void *)pointer); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes) {
  memcpy((void *)to, from, bytes);
  htodBytes += bytes;
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes) {
  memcpy(to, (void *)from, bytes);
  dtohBytes += bytes;
  return 0;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes) {
  memcpy((void *)to, (void *)from, bytes);
  dtodBytes += bytes;
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  memset((void *)p, v, n);
  if (n >= (4u << 20))
    fprintf(stderr, "mock-cuda: L2 write flush of %zu bytes\n", n);
  return 0;
}
CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    ((unsigned short *)p)[i] = v;
  return 0;
}
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned int v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    ((unsigned int *)p)[i] = v;
  return 0;
}
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
CUresult cuEventCreate(double **event, unsigned flags) { (void)flags; *event = calloc(1, sizeof(double)); return 0; }
CUresult cuEventRecord(double *event, void *stream) { (void)stream; *event = now(); return 0; }
CUresult cuEventSynchronize(double *event) { (void)event; return 0; }
CUresult cuEventElapsedTime_v2(float *ms, double *start, double *stop) { *ms = (float)(*stop - *start); return 0; }
CUresult cuEventDestroy_v2(double *event) { free(event); return 0; }
CUresult cuFuncGetAttribute(int *value, int attribute, void *function) { (void)attribute; (void)function; *value = 0; return 0; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *f, int threads, size_t shared) {
  (void)f; (void)threads; (void)shared;
  *blocks = 1;
  return 0;
}
CUresult cuGetErrorName(CUresult result, const char **name) { (void)result; *name = "CUDA_ERROR_MOCK"; return 0; }

/* Streams, launches and stream-ordered allocations, for kforge's mgpu runtime (test/Runner/caller-stream.test):
 * each call is logged on stderr with the stream it was given. */
CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  static uintptr_t next = 0x5000;
  *stream = (void *)next++;
  fprintf(stderr, "mock-cuda: create stream %p\n", *stream);
  return 0;
}
CUresult cuStreamDestroy_v2(void *stream) { fprintf(stderr, "mock-cuda: destroy stream %p\n", stream); return 0; }
CUresult cuStreamSynchronize(void *stream) { fprintf(stderr, "mock-cuda: synchronize stream %p\n", stream); return 0; }
#ifndef MOCK_NO_MODULES /* a driver without them: kforge-run's clean flush must say so */
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  (void)gy, (void)gz, (void)by, (void)bz, (void)shared, (void)extra;
  if (f == &fillKernel) {
    fillInputs((float *)(uintptr_t) * (CUdeviceptr *)params[0], *(unsigned long long *)params[1],
               *(unsigned long long *)params[2], *(unsigned long long *)params[3], *(unsigned long long *)params[4]);
    return 0;
  }
  if (f == &flushKernel) { /* the read flush: a grid over the whole buffer, nothing written */
    fprintf(stderr, "mock-cuda: L2 read flush of %llu vectors, %u x %u threads, stream %p\n",
            *(unsigned long long *)params[1], gx, bx, stream);
    return 0;
  }
  fprintf(stderr, "mock-cuda: launch on stream %p\n", stream);
  return 0;
}
/* cuLaunchKernelEx's config, as cuda.h lays it out (CUlaunchConfig, CUlaunchAttribute of 64-byte values). */
typedef struct {
  unsigned id, pad;
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
} MockLaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  void *hStream;
  MockLaunchAttribute *attrs;
  unsigned numAttrs;
} MockLaunchConfig;
CUresult cuLaunchKernelEx(const MockLaunchConfig *config, void *f, void **params, void **extra) {
  (void)f, (void)params, (void)extra;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == 4) /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
      fprintf(stderr,
              "mock-cuda: launch in clusters of %u x %u x %u, grid %u x %u x %u, %u threads, %u bytes of shared "
              "memory, stream %p\n",
              config->attrs[i].value.clusterDim.x, config->attrs[i].value.clusterDim.y,
              config->attrs[i].value.clusterDim.z, config->gridDimX, config->gridDimY, config->gridDimZ,
              config->blockDimX, config->sharedMemBytes, config->hStream);
  return 0;
}
#endif
CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes, void *stream) {
  fprintf(stderr, "mock-cuda: stream-ordered alloc on stream %p\n", stream);
  return cuMemAlloc_v2(pointer, bytes);
}
CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) {
  fprintf(stderr, "mock-cuda: stream-ordered free on stream %p\n", stream);
  return cuMemFree_v2(pointer);
}
/* The rest of what the runtime links against, so it loads with RTLD_NOW; a mock has no GPU modules but
 * kforge-run's own two. */
CUresult cuGetErrorString(CUresult result, const char **text) { (void)result; *text = "mock"; return 0; }
#ifndef MOCK_NO_MODULES
CUresult cuModuleLoadData(void **module, const void *image) {
  if (strstr((const char *)image, ".entry kforge_fill_inputs(")) {
    *module = &fillModule;
    return 0;
  }
  if (!strstr((const char *)image, ".entry kforge_l2_read_flush("))
    return 200;
  *module = &flushKernel;
  return 0;
}
CUresult cuModuleUnload(void *module) { (void)module; return 0; }
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  if (module == &fillModule && !strcmp(name, "kforge_fill_inputs")) {
    *function = &fillKernel;
    return 0;
  }
  if (module != &flushKernel || strcmp(name, "kforge_l2_read_flush"))
    return 500;
  *function = &flushKernel;
  return 0;
}
#endif
CUresult cuFuncSetAttribute(void *function, int attribute, int value) { (void)function, (void)attribute, (void)value; return 0; }
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned flags) { (void)flags; return cuMemAlloc_v2(pointer, bytes); }
/* TMA tensor maps: the parameters are printed (test/Runner/tensor-map.test), the map is filled with a marker. */
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *address, const unsigned long long *dims,
                                const unsigned long long *strides, const unsigned *box, const unsigned *elementStrides,
                                int interleave, int swizzle, int l2Promotion, int oobFill) {
  fprintf(stderr,
          "mock-cuda: tensor map type %d rank %u address %p dims %llu x %llu stride %llu box %u x %u element strides "
          "%u %u interleave %d swizzle %d l2 %d oob %d\n",
          type, rank, address, dims[0], dims[1], strides[0], box[0], box[1], elementStrides[0], elementStrides[1],
          interleave, swizzle, l2Promotion, oobFill);
  memset(map, 0xab, 128);
  return 0;
}
