/* Calls kforge's mgpu runtime the way a lowered kernel function does (create a stream, allocate a temporary,
 * launch, free, wait, destroy), first on the runtime's own stream, then on a caller's stream set with
 * kforgeRuntimeSetStream (a PyTorch stream, then the legacy default stream NULL), then after clearing it. */
#include <stdint.h>
#include <stdio.h>

typedef void *CUstream;
CUstream mgpuStreamCreate(void);
void mgpuStreamSynchronize(CUstream stream);
void mgpuStreamDestroy(CUstream stream);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                      intptr_t blockY, intptr_t blockZ, int32_t sharedMemBytes, CUstream stream, void **params,
                      void **extra, size_t paramsCount);
void mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY, intptr_t clusterZ, intptr_t gridX,
                             intptr_t gridY, intptr_t gridZ, intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t sharedMemBytes, CUstream stream, void **params, void **extra);
void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, int8_t isHostShared);
void mgpuMemFree(void *pointer, CUstream stream);
void kforgeRuntimeSetStream(CUstream stream);
void kforgeRuntimeClearStream(void);

static void kernelFunction(const char *label) {
  fprintf(stderr, "call: %s\n", label);
  CUstream stream = mgpuStreamCreate();
  void *temporary = mgpuMemAlloc(256, stream, 0);
  mgpuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL, 0);
  mgpuMemFree(temporary, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
}

int main(void) {
  kernelFunction("own stream");
  kforgeRuntimeSetStream((CUstream)0x1234);
  kernelFunction("caller stream");
  kforgeRuntimeSetStream(NULL);
  kernelFunction("legacy default stream");
  kforgeRuntimeClearStream();
  kernelFunction("own stream again");
  /* A launch in clusters of two blocks along y (cluster_multicast), on a caller's stream. */
  kforgeRuntimeSetStream((CUstream)0x1234);
  fprintf(stderr, "call: clusters\n");
  mgpuLaunchClusterKernel(NULL, 1, 2, 1, 32, 32, 1, 288, 1, 1, 197632, (CUstream)0x1234, NULL, NULL);
  kforgeRuntimeClearStream();
  return 0;
}
