//===- Timing.cpp - timing a loaded artifact, and its kernels' resources --===//

#include "Timing.h"

#include "L2Flush.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <optional>

using namespace kforge;
using json = nlohmann::json;

/// While alive, the runtime launches the kernel functions' work on the legacy default stream without waiting
/// for it (kforgeRuntimeSetStream): the events that bracket a timed call then measure the GPU's work, as they
/// do for a framework's kernels, not a host round trip per call (a stream created, waited for and destroyed).
/// A runtime without the entry point keeps its synchronous calls.
namespace {
class AsyncLaunches {
public:
  AsyncLaunches() {
    using SetFn = void (*)(void *); // CUstream
    using ClearFn = void (*)();
    auto set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "kforgeRuntimeSetStream"));
    clear = reinterpret_cast<ClearFn>(dlsym(RTLD_DEFAULT, "kforgeRuntimeClearStream"));
    if (set && clear)
      set(nullptr);
    else
      clear = nullptr;
  }
  ~AsyncLaunches() {
    if (clear)
      clear();
  }
  bool active() const { return clear != nullptr; }

private:
  void (*clear)() = nullptr;
};
} // namespace

json kforge::timeArtifact(LoadedArtifact &artifact, const RunnerOptions &options, std::string &error, bool calibrate) {
  CudaDriver &cuda = cudaDriver();
  std::vector<double> ms, warmupMs;
  std::optional<L2Flush> flush;
  CUevent start = nullptr, stop = nullptr;
  if (artifact.gpu) {
    flush.emplace(cuda);
    error = flush->prepare(options.device, options.l2Flush);
    if (error.empty())
      error = cuda.check(cuda.eventCreate(&start, 0), "cuEventCreate");
    if (error.empty())
      error = cuda.check(cuda.eventCreate(&stop, 0), "cuEventCreate");
    if (!error.empty())
      return {};
  }
  std::optional<AsyncLaunches> async;
  if (artifact.gpu)
    async.emplace();
  for (int rep = 0; rep < options.warmup + options.reps; ++rep) {
    double elapsed = 0;
    if (artifact.gpu) {
      // Flush L2, then bracket the call with events on the legacy stream (the runtime's streams order with it).
      if ((error = flush->run(rep)).size())
        return {};
      cuda.eventRecord(start, nullptr);
      if (!calibrate)
        callEntry(artifact);
      cuda.eventRecord(stop, nullptr);
      if ((error = cuda.check(cuda.eventSynchronize(stop), "cuEventSynchronize")).size())
        return {};
      float eventMs = 0;
      cuda.eventElapsedTime(&eventMs, start, stop);
      elapsed = eventMs;
    } else {
      auto begin = std::chrono::steady_clock::now();
      if (!calibrate)
        callEntry(artifact);
      elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    }
    (rep >= options.warmup ? ms : warmupMs).push_back(elapsed);
  }
  if (artifact.gpu) {
    cuda.eventDestroy(start);
    cuda.eventDestroy(stop);
  }
  // Every sample goes to the judge, which checks their sum against its own clock (docs/runner.md).
  json samples = ms, warmupSamples = warmupMs;
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  double bytes = 0;
  for (size_t i = 0; i < artifact.manifest.arguments.size(); ++i)
    bytes += static_cast<double>(elementBytes(artifact.types[i])) * artifact.manifest.arguments[i].numElements();
  json result = {{"median_ms", median},
                 {"min_ms", ms.front()},
                 {"max_ms", ms.back()},
                 {"p10_ms", ms[ms.size() / 10]},
                 {"p90_ms", ms[ms.size() * 9 / 10]},
                 {"reps", options.reps},
                 {"warmup", options.warmup},
                 {"clock", !artifact.gpu       ? std::string("steady_clock")
                           : async->active() ? "cuda events (legacy stream, launches asynchronous), " + flush->describe()
                                             : "cuda events (legacy stream, each call waited for), " + flush->describe()},
                 {"bytes_once", bytes},
                 {"samples_ms", samples},
                 {"warmup_ms", warmupSamples},
                 {"gbps_once", bytes / (median * 1e6)}};
  if (options.ceilingGBps > 0 && bytes / (median * 1e6) > options.ceilingGBps)
    result["flags"].push_back("bandwidth above the measured ceiling: re-measure before trusting");
  if (artifact.manifest.flops > 0) {
    double tflops = artifact.manifest.flops / (median * 1e9);
    result["tflops"] = tflops;
    if (options.ceilingTflops > 0 && tflops > options.ceilingTflops)
      result["flags"].push_back("FLOP rate above the measured ceiling: re-measure before trusting");
  }
  return result;
}

using KernelCountFn = int (*)();

int kforge::kernelCount() {
  auto count = reinterpret_cast<KernelCountFn>(dlsym(RTLD_DEFAULT, "kforgeRuntimeKernelCount"));
  return count ? count() : 0;
}

json kforge::kernelResources(int first, int last) {
  CudaDriver &cuda = cudaDriver();
  using KernelFn = CUfunction (*)(int, const char **, int *, int *);
  auto kernel = reinterpret_cast<KernelFn>(dlsym(RTLD_DEFAULT, "kforgeRuntimeKernel"));
  json list = json::array();
  if (!kernel)
    return list;
  for (int i = first; i < last; ++i) {
    const char *name = nullptr;
    int blockThreads = 0, dynamicShared = 0;
    CUfunction function = kernel(i, &name, &blockThreads, &dynamicShared);
    int regs = 0, local = 0, shared = 0, maxThreads = 0, blocksPerSM = 0;
    cuda.funcGetAttribute(&regs, kFuncNumRegs, function);
    cuda.funcGetAttribute(&local, kFuncLocalSizeBytes, function);
    cuda.funcGetAttribute(&shared, kFuncSharedSizeBytes, function);
    cuda.funcGetAttribute(&maxThreads, kFuncMaxThreadsPerBlock, function);
    if (blockThreads > 0)
      cuda.occupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSM, function, blockThreads, dynamicShared);
    list.push_back({{"kernel", name ? name : ""},
                    {"registers", regs},
                    {"local_bytes_per_thread", local},
                    {"static_shared_bytes", shared},
                    {"dynamic_shared_bytes", dynamicShared},
                    {"block_threads", blockThreads},
                    {"max_threads_per_block", maxThreads},
                    {"active_blocks_per_sm", blocksPerSM},
                    {"active_warps_per_sm", blocksPerSM * ((blockThreads + 31) / 32)}});
  }
  return list;
}
