// The H200's mma.sync ceiling: how fast the tensor cores run mma.sync.aligned.m16n8k16 (bf16 or f16 operands,
// f32 accumulators) with no memory traffic at all. kforge's tensor-core kernels (docs/perf/tensorcores-h200.md)
// are issued as mma.sync, so this is the rate they can at best approach; cuBLAS uses Hopper's wgmma instead.
//   nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o mma_sync_peak mma_sync_peak.cu && ./mma_sync_peak
// Each warp keeps kChains independent accumulator tiles (enough to cover the instruction's latency) and runs
// kIters rounds over them; operands are registers that never change. Prints TFLOP/s for bf16 and f16, the best
// of five timed launches (CUDA events), after a warm-up launch.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kChains = 8, kIters = 4096, kWarpsPerBlock = 8;

template <bool Bf16>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) mmaLoop(float *sink, unsigned seed) {
  unsigned a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = seed * (threadIdx.x + i + 1);
  for (int i = 0; i < 2; ++i) b[i] = seed ^ (threadIdx.x * (i + 7));
  float acc[kChains][4] = {};
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (Bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
  }
  float total = 0;
  for (int c = 0; c < kChains; ++c)
    total += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = total; // keeps the loop alive
}

template <bool Bf16> static double tflops(int blocks) {
  float *sink;
  cudaMalloc(&sink, sizeof(float) * blocks * 32 * kWarpsPerBlock);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  mmaLoop<Bf16><<<blocks, 32 * kWarpsPerBlock>>>(sink, 3);
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(start);
    mmaLoop<Bf16><<<blocks, 32 * kWarpsPerBlock>>>(sink, 3 + r);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    best = ms < best ? ms : best;
  }
  if (cudaGetLastError() != cudaSuccess) {
    std::fprintf(stderr, "mma_sync_peak: a launch failed\n");
    return -1;
  }
  cudaFree(sink);
  double flops = 2.0 * 16 * 8 * 16 * double(kChains) * kIters * kWarpsPerBlock * blocks;
  return flops / (best * 1e-3) / 1e12;
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "mma_sync_peak: no CUDA device\n");
    return 1;
  }
  int blocks = prop.multiProcessorCount * 8; // several waves of 8-warp blocks
  std::printf("%s, %d multiprocessors\n", prop.name, prop.multiProcessorCount);
  std::printf("mma.sync m16n8k16 bf16 -> f32: %.1f TFLOP/s\n", tflops<true>(blocks));
  std::printf("mma.sync m16n8k16 f16 -> f32: %.1f TFLOP/s\n", tflops<false>(blocks));
  return 0;
}
