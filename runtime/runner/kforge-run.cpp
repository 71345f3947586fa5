//===- kforge-run.cpp - verify and time an artifact against a reference --===//
//
//   kforge-run --candidate DIR --reference DIR [--seeds 5] [--reps 20] [--tolerance T] [--timeout S] ...
//
// Loads two artifacts (kforge-compile output: <name>.so + <name>.json; either may target the GPU or the
// CPU), and reports JSON: correctness over several seeds (random normal inputs, outputs poisoned with NaN,
// candidate run before the reference on fresh buffers), timing of the candidate (warm-up, many
// repetitions, L2 flushed between them on the GPU), and the GPU kernels' resources. Everything runs in a
// child process with a time limit, so a crash, an illegal address or a hang is a result, not the end of
// the caller. Exit status: 0 correct, 1 anything else, 2 bad usage. See docs/runner.md.
//
// The runner deliberately links no LLVM (it must run on the GPU machine, which has no LLVM/MLIR), hence the
// small hand-written option parsing and process isolation instead of llvm::cl and llvm::sys::Program.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "DType.h"
#include "Isolation.h"
#include "L2Flush.h"
#include "Manifest.h"
#include "Metrics.h"
#include "SeedCache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iostream>
#include <limits>
#include <malloc.h>
#include <map>
#include <optional>
#include <random>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace kforge;
using json = nlohmann::json;

namespace {

struct Options {
  std::string candidate, reference, candidateName = "kernel", referenceName = "kernel";
  std::string independent; ///< Optional third artifact the reference is checked against once (seed 0).
  std::string runtime, output;
  std::string cacheDir; ///< Inputs and reference outputs per seed, reused across runs (see SeedCache.h).
  int seeds = 5, reps = 20, warmup = 3, timeout = 120, device = 0;
  std::string l2Flush = "dirty"; ///< How the flush before each timed GPU repetition leaves L2 (L2Flush.h).
  double tolerance = -1; // -1: by dtype
  double ceilingGBps = 0, ceilingTflops = 0;
  double cutoffMs = 0; ///< A candidate whose run (the second, if any) takes longer is "too-slow", not timed.
  /// With several seeds the first run is too-slow beyond 10 x cutoff + this (its module load, first touches).
  double firstRunAllowanceMs = 1000;
  /// When positive: fewer timed repetitions (never under 10) for a candidate whose runs would exceed this many
  /// milliseconds in total. A search needs a median, not 20 samples of a kernel far from the best.
  double timingBudgetMs = 0;
  bool timeReference = false;
  bool serve = false; ///< --serve: evaluate candidates named on stdin, one JSON report line each (see serve()).
  long memoryLimitMB = 16384;
};

/// An artifact loaded into this (child) process, with its buffers. Released (device buffers freed, library
/// closed, which unloads its GPU module) when it goes out of scope, so a long-lived runner (--serve) can load
/// thousands of candidates one after another.
struct Artifact {
  Artifact() = default;
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  ~Artifact();
  Manifest manifest;
  void *library = nullptr;
  void *entry = nullptr;
  bool gpu = false;
  std::vector<DType> types;                  ///< Element type of each argument.
  std::vector<std::vector<float>> host;      ///< Each argument's values (outputs: after the run).
  std::vector<std::vector<uint8_t>> storage; ///< Each argument in its element type, as the kernel sees it.
  std::vector<CUdeviceptr> device;           ///< GPU artifacts: one device buffer per argument.
  std::vector<std::vector<int64_t>> descriptors;
};

CudaDriver cuda;
bool cudaLoaded = false;

/// Frees the artifact's device buffers (the previous seed's, or all at the end).
void freeDevice(Artifact &artifact) {
  for (CUdeviceptr pointer : artifact.device)
    if (pointer)
      cuda.memFree(pointer);
  artifact.device.clear();
}

Artifact::~Artifact() {
  freeDevice(*this);
  if (library)
    dlclose(library);
}

/// Empties the artifact's buffers, one slot per argument, before a seed's prepare.
void resetBuffers(Artifact &artifact) {
  size_t n = artifact.manifest.arguments.size();
  freeDevice(artifact);
  artifact.host.assign(n, {});
  artifact.device.assign(n, 0);
  artifact.descriptors.clear();
  artifact.storage.assign(n, {});
}

using Entry1 = void (*)(void *);
using Entry2 = void (*)(void *, void *);
using Entry3 = void (*)(void *, void *, void *);
using Entry4 = void (*)(void *, void *, void *, void *);
using Entry5 = void (*)(void *, void *, void *, void *, void *);
using Entry6 = void (*)(void *, void *, void *, void *, void *, void *);
using Entry7 = void (*)(void *, void *, void *, void *, void *, void *, void *);
using Entry8 = void (*)(void *, void *, void *, void *, void *, void *, void *, void *);

/// Calls the C entry point with one memref descriptor pointer per argument.
void callEntry(Artifact &artifact) {
  std::vector<void *> a;
  for (auto &descriptor : artifact.descriptors)
    a.push_back(descriptor.data());
  switch (a.size()) {
  case 1:
    return reinterpret_cast<Entry1>(artifact.entry)(a[0]);
  case 2:
    return reinterpret_cast<Entry2>(artifact.entry)(a[0], a[1]);
  case 3:
    return reinterpret_cast<Entry3>(artifact.entry)(a[0], a[1], a[2]);
  case 4:
    return reinterpret_cast<Entry4>(artifact.entry)(a[0], a[1], a[2], a[3]);
  case 5:
    return reinterpret_cast<Entry5>(artifact.entry)(a[0], a[1], a[2], a[3], a[4]);
  case 6:
    return reinterpret_cast<Entry6>(artifact.entry)(a[0], a[1], a[2], a[3], a[4], a[5]);
  case 7:
    return reinterpret_cast<Entry7>(artifact.entry)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  case 8:
    return reinterpret_cast<Entry8>(artifact.entry)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  }
}

std::string loadArtifact(const std::string &dir, const std::string &name, const Options &options, Artifact &artifact) {
  if (std::string error = readManifest(dir, name, artifact.manifest); !error.empty())
    return error;
  const Manifest &m = artifact.manifest;
  if (m.arguments.empty() || m.arguments.size() > 8)
    return "artifact '" + dir + "' has " + std::to_string(m.arguments.size()) + " arguments (1 to 8 supported)";
  for (const ManifestArgument &argument : m.arguments) {
    std::optional<DType> type = parseDType(argument.dtype);
    if (!type)
      return "artifact '" + dir + "' has a " + argument.dtype + " argument; kforge-run supports f32, f16 and bf16";
    artifact.types.push_back(*type);
  }
  artifact.gpu = m.target == "gpu";
  if (artifact.gpu && !cudaLoaded) {
    if (std::string error = cuda.load(options.device); !error.empty())
      return error;
    cudaLoaded = true;
    std::string runtime = options.runtime;
    if (runtime.empty() && std::getenv("KFORGE_RUNTIME"))
      runtime = std::getenv("KFORGE_RUNTIME");
    if (runtime.empty())
      return "GPU artifact but no mgpu runtime: pass --runtime PATH or set KFORGE_RUNTIME";
    // The kernel library resolves mgpu* from the global scope when it loads.
    if (!dlopen(runtime.c_str(), RTLD_NOW | RTLD_GLOBAL))
      return std::string("cannot load the runtime: ") + dlerror();
  }
  artifact.library = dlopen(m.libraryPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!artifact.library)
    return std::string("cannot load artifact: ") + dlerror();
  artifact.entry = dlsym(artifact.library, m.entry.c_str());
  if (!artifact.entry)
    return "artifact '" + dir + "' does not export " + m.entry;
  return "";
}

/// The memref descriptor of a dense row-major buffer: {allocated, aligned, offset, sizes..., strides...}.
std::vector<int64_t> descriptorOf(void *data, const std::vector<int64_t> &shape) {
  std::vector<int64_t> descriptor{reinterpret_cast<int64_t>(data), reinterpret_cast<int64_t>(data), 0};
  descriptor.insert(descriptor.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  descriptor.insert(descriptor.end(), strides.begin(), strides.end());
  return descriptor;
}

/// Fresh buffers on the host path: inputs packed from `inputs`, outputs filled with NaN, copied to the
/// device for GPU artifacts.
std::string prepareOnHost(Artifact &artifact, const std::vector<std::vector<float>> &inputs) {
  const auto &args = artifact.manifest.arguments;
  resetBuffers(artifact);
  for (size_t i = 0; i < args.size(); ++i) {
    // Outputs start as NaN (unwritten elements stay visible); `host` holds outputs only, after runOnce.
    artifact.storage[i] = args[i].isOutput ? pack(artifact.types[i], std::vector<float>(args[i].numElements(), NAN))
                                           : pack(artifact.types[i], inputs[i]);
    void *data = artifact.storage[i].data();
    if (artifact.gpu) {
      size_t bytes = artifact.storage[i].size();
      if (auto e = cuda.check(cuda.memAlloc(&artifact.device[i], std::max<size_t>(bytes, 4)), "cuMemAlloc"); !e.empty())
        return e;
      if (auto e = cuda.check(cuda.memcpyHtoD(artifact.device[i], data, bytes), "cuMemcpyHtoD"); !e.empty())
        return e;
      data = reinterpret_cast<void *>(artifact.device[i]);
    }
    artifact.descriptors.push_back(descriptorOf(data, args[i].shape));
  }
  return "";
}

/// A long-lived runner's inputs on the device: one pristine copy per seed, argument and element type, from
/// which every candidate's fresh input buffers are copied on the device (no packing, no host-to-device copy
/// per candidate). Off in single-run mode, or when KFORGE_RUN_DEVICE_SEEDS=0.
class DeviceSeeds {
public:
  bool enabled() const { return on; }
  void enable() {
    const char *setting = std::getenv("KFORGE_RUN_DEVICE_SEEDS");
    on = cuda.memcpyDtoD && !(setting && std::string(setting) == "0");
  }
  /// The name of one argument's pristine copy for a seed.
  static std::string key(const std::string &seedKey, size_t argument, const std::string &dtype) {
    return seedKey + "/" + std::to_string(argument) + "/" + dtype;
  }
  /// The pristine copy of `key`, or 0.
  CUdeviceptr find(const std::string &key) const {
    auto it = buffers.find(key);
    return it == buffers.end() ? 0 : it->second;
  }
  /// Keeps a copy of `bytes` at `source` (a device buffer) as `key`'s pristine copy.
  std::string keep(const std::string &key, CUdeviceptr source, size_t bytes) {
    CUdeviceptr copy = 0;
    if (auto e = cuda.check(cuda.memAlloc(&copy, std::max<size_t>(bytes, 4)), "cuMemAlloc"); !e.empty())
      return e;
    if (auto e = cuda.check(cuda.memcpyDtoD(copy, source, bytes), "cuMemcpyDtoD"); !e.empty())
      return e;
    buffers[key] = copy;
    return "";
  }

private:
  bool on = false;
  std::map<std::string, CUdeviceptr> buffers;
};
DeviceSeeds deviceSeeds;

/// Fills `count` elements of `type` at `pointer` with NaN on the device.
std::string poisonOnDevice(CUdeviceptr pointer, DType type, size_t count) {
  if (type == DType::F32)
    return cuda.check(cuda.memsetD32(pointer, 0x7FC00000u, count), "cuMemsetD32");
  return cuda.check(cuda.memsetD16(pointer, type == DType::BF16 ? 0x7FC0 : 0x7E00, count), "cuMemsetD16");
}

/// Fresh buffers: inputs copied from `inputs`, outputs filled with NaN. With `seedKey` (a GPU artifact in a
/// long-lived runner, see DeviceSeeds), inputs are copied on the device from the seed's pristine copies when
/// they exist (`inputs` may then be empty) and outputs are poisoned on the device.
std::string prepare(Artifact &artifact, const std::vector<std::vector<float>> &inputs,
                    const std::string &seedKey = "") {
  const auto &args = artifact.manifest.arguments;
  bool onDevice = artifact.gpu && deviceSeeds.enabled() && !seedKey.empty();
  if (!onDevice)
    return prepareOnHost(artifact, inputs);
  resetBuffers(artifact);
  for (size_t i = 0; i < args.size(); ++i) {
    size_t count = static_cast<size_t>(args[i].numElements()), bytes = count * elementBytes(artifact.types[i]);
    if (auto e = cuda.check(cuda.memAlloc(&artifact.device[i], std::max<size_t>(bytes, 4)), "cuMemAlloc"); !e.empty())
      return e;
    if (args[i].isOutput) {
      artifact.storage[i].resize(bytes); // where runOnce reads the result back
      if (auto e = poisonOnDevice(artifact.device[i], artifact.types[i], count); !e.empty())
        return e;
    } else {
      std::string key = DeviceSeeds::key(seedKey, i, args[i].dtype);
      if (CUdeviceptr pristine = deviceSeeds.find(key)) {
        if (auto e = cuda.check(cuda.memcpyDtoD(artifact.device[i], pristine, bytes), "cuMemcpyDtoD"); !e.empty())
          return e;
      } else {
        if (i >= inputs.size() || inputs[i].size() != count)
          return "internal: no host inputs for a seed the device does not hold";
        std::vector<uint8_t> packed = pack(artifact.types[i], inputs[i]);
        if (auto e = cuda.check(cuda.memcpyHtoD(artifact.device[i], packed.data(), bytes), "cuMemcpyHtoD"); !e.empty())
          return e;
        if (auto e = deviceSeeds.keep(key, artifact.device[i], bytes); !e.empty())
          return e;
      }
    }
    artifact.descriptors.push_back(descriptorOf(reinterpret_cast<void *>(artifact.device[i]), args[i].shape));
  }
  return "";
}

/// Runs the artifact once and reads its outputs back into the host values.
std::string runOnce(Artifact &artifact) {
  callEntry(artifact);
  if (artifact.gpu)
    if (auto e = cuda.check(cuda.ctxSynchronize(), "cuCtxSynchronize"); !e.empty())
      return e;
  for (size_t i = 0; i < artifact.host.size(); ++i) {
    if (!artifact.manifest.arguments[i].isOutput)
      continue;
    if (artifact.gpu)
      if (auto e =
              cuda.check(cuda.memcpyDtoH(artifact.storage[i].data(), artifact.device[i], artifact.storage[i].size()),
                         "cuMemcpyDtoH");
          !e.empty())
        return e;
    artifact.host[i] = unpack(artifact.types[i], artifact.storage[i]);
  }
  return "";
}

/// While alive, the runtime launches the kernel functions' work on the legacy default stream without waiting
/// for it (kforgeRuntimeSetStream): the events that bracket a timed call then measure the GPU's work, as they
/// do for a framework's kernels, not a host round trip per call (a stream created, waited for and destroyed).
/// A runtime without the entry point keeps its synchronous calls.
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

json timing(Artifact &artifact, const Options &options, std::string &error) {
  std::vector<double> ms;
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
      callEntry(artifact);
      cuda.eventRecord(stop, nullptr);
      if ((error = cuda.check(cuda.eventSynchronize(stop), "cuEventSynchronize")).size())
        return {};
      float eventMs = 0;
      cuda.eventElapsedTime(&eventMs, start, stop);
      elapsed = eventMs;
    } else {
      auto begin = std::chrono::steady_clock::now();
      callEntry(artifact);
      elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    }
    if (rep >= options.warmup)
      ms.push_back(elapsed);
  }
  if (artifact.gpu) {
    cuda.eventDestroy(start);
    cuda.eventDestroy(stop);
  }
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

/// The number of kernels the runtime has seen so far (0 without a GPU runtime).
int kernelCount() {
  auto count = reinterpret_cast<KernelCountFn>(dlsym(RTLD_DEFAULT, "kforgeRuntimeKernelCount"));
  return count ? count() : 0;
}

/// Resources of the runtime's kernels [first, last): the candidate's, when called with the range its first
/// run registered.
json resources(int first, int last) {
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

/// Normal random inputs for `seed` (outputs left empty), rounded to the candidate's element types. Each
/// block of kInputBlock elements has its own generator, seeded from (seed, argument, block), so the values do
/// not depend on how many threads draw them; the blocks are drawn on all cores (a 16384^2 matrix took ~10 s
/// per seed on one).
constexpr size_t kInputBlock = size_t(1) << 20;

std::vector<std::vector<float>> makeInputs(const Artifact &candidate, int seed) {
  const auto &cArgs = candidate.manifest.arguments;
  std::vector<std::vector<float>> inputs(cArgs.size());
  std::vector<std::pair<size_t, size_t>> blocks; // (argument, first element)
  for (size_t i = 0; i < cArgs.size(); ++i) {
    if (cArgs[i].isOutput)
      continue;
    inputs[i].resize(cArgs[i].numElements());
    for (size_t first = 0; first < inputs[i].size(); first += kInputBlock)
      blocks.push_back({i, first});
  }
  auto draw = [&](size_t b) {
    auto [i, first] = blocks[b];
    std::seed_seq sequence{static_cast<uint64_t>(seed), static_cast<uint64_t>(i), static_cast<uint64_t>(first)};
    std::mt19937_64 generator(sequence);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    size_t last = std::min(inputs[i].size(), first + kInputBlock);
    for (size_t e = first; e < last; ++e)
      inputs[i][e] = roundTo(candidate.types[i], normal(generator));
  };
  size_t workers = std::min<size_t>(blocks.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w)
    threads.emplace_back([&] {
      for (size_t b; (b = next++) < blocks.size();)
        draw(b);
    });
  for (size_t b; (b = next++) < blocks.size();)
    draw(b);
  for (std::thread &t : threads)
    t.join();
  return inputs;
}

/// Runs the reference and an independent computation of the same payload on the inputs of seed 0 and
/// compares them, so that a bug shared by candidate and reference cannot pass unnoticed.
json checkReference(Artifact &candidate, Artifact &reference, Artifact &independent, double tolerance,
                    std::string &error) {
  std::vector<std::vector<float>> inputs = makeInputs(candidate, 0);
  if ((error = prepare(reference, inputs)).size() || (error = runOnce(reference)).size())
    return {};
  if ((error = prepare(independent, inputs)).size() || (error = runOnce(independent)).size())
    return {};
  json result = {{"independent", independent.manifest.directory}, {"status", "correct"}};
  for (size_t i = 0; i < reference.host.size(); ++i) {
    if (!reference.manifest.arguments[i].isOutput)
      continue;
    Comparison c = compare(reference.host[i], independent.host[i]);
    std::string why, status = verdict(c, tolerance, why);
    result["rel_l2_error"] = c.relL2Error;
    result["max_abs_error"] = c.maxAbsError;
    if (status != "correct") {
      result["status"] = status;
      result["why"] = why;
    }
  }
  return result;
}

/// The whole evaluation; runs in the child process. Returns the JSON report.
std::string evaluate(const Options &options) {
  json report = {{"candidate", options.candidate}, {"reference", options.reference}};
  auto fail = [&](const std::string &why) {
    report["status"] = "failed";
    report["reason"] = why;
    return report.dump();
  };
  Artifact candidate, reference;
  if (auto e = loadArtifact(options.candidate, options.candidateName, options, candidate); !e.empty())
    return fail(e);
  if (auto e = loadArtifact(options.reference, options.referenceName, options, reference); !e.empty())
    return fail(e);
  const auto &cArgs = candidate.manifest.arguments, &rArgs = reference.manifest.arguments;
  bool same = cArgs.size() == rArgs.size();
  for (size_t i = 0; same && i < cArgs.size(); ++i)
    same = cArgs[i].shape == rArgs[i].shape && cArgs[i].isOutput == rArgs[i].isOutput;
  // The reference may compute in a wider type (e.g. an f32 reference for a bf16 task); inputs are rounded to
  // the candidate's type, so both see the same values.
  if (!same)
    return fail("candidate and reference do not take the same arguments");
  report["target"] = candidate.manifest.target;
  report["hash"] = candidate.manifest.hash;
  // By default the tolerance of the least precise output type (fp32 1e-4, fp16/bf16 1e-2).
  double tolerance = options.tolerance;
  if (tolerance <= 0) {
    tolerance = 0;
    for (size_t i = 0; i < cArgs.size(); ++i)
      if (cArgs[i].isOutput)
        tolerance = std::max(tolerance, defaultTolerance(candidate.types[i]));
  }
  report["tolerance"] = tolerance;

  if (!options.independent.empty()) {
    Artifact independent;
    if (auto e = loadArtifact(options.independent, "kernel", options, independent); !e.empty())
      return fail(e);
    std::string error;
    json check = checkReference(candidate, reference, independent, tolerance, error);
    if (!error.empty())
      return fail("checking the reference: " + error);
    report["reference_check"] = check;
    if (check["status"] == "incorrect")
      return fail("the reference disagrees with the independent computation: " + check["why"].get<std::string>());
  }

  // The reference build, and the arguments' shapes and types, name the cached inputs and outputs ("inputs2":
  // the block-wise generation of makeInputs; files from the earlier scheme are not reused).
  std::string cacheKey =
      (reference.manifest.hash.empty() ? reference.manifest.directory : reference.manifest.hash) + "-inputs2";
  std::vector<size_t> inputIndices, outputIndices, sizes;
  for (size_t i = 0; i < cArgs.size(); ++i) {
    cacheKey += "-" + cArgs[i].dtype;
    for (int64_t d : cArgs[i].shape)
      cacheKey += "x" + std::to_string(d);
    (cArgs[i].isOutput ? outputIndices : inputIndices).push_back(i);
    sizes.push_back(static_cast<size_t>(cArgs[i].numElements()));
  }
  SeedCache cache(reference.manifest.hash.empty() ? std::string() : options.cacheDir, cacheKey,
                  /*inMemory=*/options.serve && !reference.manifest.hash.empty());
  if (cache.enabled())
    report["seed_cache"] = options.cacheDir;

  std::string overall = "correct";
  double lastRunMs = 0; // the candidate's last verification run, with its copies: an upper bound of a timed call
  double fastestLaterMs = std::numeric_limits<double>::infinity(); // its fastest run after the first
  int candidateKernels[2] = {0, 0}; // the runtime's kernel registry entries the candidate's first run added
  // A long-lived runner keeps each seed's inputs on the device (DeviceSeeds) when the seed cache knows the
  // reference's outputs: a candidate's inputs are then copied on the device and never touch the host.
  bool useDeviceSeeds = options.serve && candidate.gpu && cache.enabled();
  if (useDeviceSeeds)
    deviceSeeds.enable();
  useDeviceSeeds = useDeviceSeeds && deviceSeeds.enabled();
  for (int seed = 0; seed < options.seeds; ++seed) {
    std::string seedKey = useDeviceSeeds ? cacheKey + "/seed" + std::to_string(seed) : std::string();
    bool inputsOnDevice = useDeviceSeeds;
    for (size_t i : inputIndices)
      inputsOnDevice = inputsOnDevice && deviceSeeds.find(DeviceSeeds::key(seedKey, i, cArgs[i].dtype));
    std::vector<std::vector<float>> inputs(cArgs.size());
    auto loadInputs = [&] {
      if (!cache.load(seed, "inputs", inputIndices, sizes, inputs)) {
        inputs = makeInputs(candidate, seed);
        cache.store(seed, "inputs", inputIndices, inputs);
      }
    };
    if (!inputsOnDevice)
      loadInputs();
    // The candidate first, then the reference, each on fresh buffers.
    if (auto e = prepare(candidate, inputs, seedKey); !e.empty())
      return fail(e);
    int before = kernelCount();
    auto started = std::chrono::steady_clock::now();
    if (auto e = runOnce(candidate); !e.empty())
      return fail("candidate: " + e);
    double firstMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    lastRunMs = firstMs;
    // Each verification run's wall time (launch, copies, host work): what calibrates the too-slow cutoff.
    report["verification_runs_ms"].push_back(firstMs);
    // The cutoff looks at the runs after the first when there are several seeds (the first also loads the GPU
    // module), and at the fastest of them: a run can also pay one-time host costs (page faults on a first large
    // output buffer made the 0.2 ms kernel of an 8192^2 bf16 output take 200 ms on the H200). A run ten times
    // over the cutoff stops at once.
    // The first run of several is judged too, with a second of allowance for the module load and first
    // touches: a kernel whose launch takes seconds (one thread doing a block's work) stops there instead of
    // running once more.
    int cutoffSeed = options.seeds > 1 ? 1 : 0;
    if (seed >= cutoffSeed)
      fastestLaterMs = std::min(fastestLaterMs, firstMs);
    bool farOver = (seed == cutoffSeed && firstMs > 10 * options.cutoffMs) ||
                   (seed == 0 && cutoffSeed == 1 && firstMs > 10 * options.cutoffMs + options.firstRunAllowanceMs);
    bool over = seed == options.seeds - 1 && fastestLaterMs > options.cutoffMs;
    if (options.cutoffMs > 0 && (farOver || over)) {
      // A search does not need to know how slow exactly: a run (with its launch and copies) says enough.
      double runMs = farOver ? firstMs : fastestLaterMs;
      report["status"] = "too-slow";
      report["reason"] = "a run took " + std::to_string(runMs) + " ms, more than the cutoff of " +
                         std::to_string(options.cutoffMs) + " ms; not verified or timed further";
      report["decided_at_seed"] = seed;
      report["run_ms"] = runMs;
      return report.dump();
    }
    if (seed == 0) {
      candidateKernels[0] = before;
      candidateKernels[1] = kernelCount();
    }
    std::vector<std::vector<float>> expected(cArgs.size());
    if (!cache.load(seed, "outputs", outputIndices, sizes, expected)) {
      if (inputsOnDevice)
        loadInputs(); // the reference runs from host inputs
      if (auto e = prepare(reference, inputs); !e.empty())
        return fail(e);
      if (auto e = runOnce(reference); !e.empty())
        return fail("reference: " + e);
      expected = reference.host;
      cache.store(seed, "outputs", outputIndices, expected);
    }
    for (size_t i = 0; i < cArgs.size(); ++i) {
      if (!cArgs[i].isOutput)
        continue;
      Comparison c = compare(candidate.host[i], expected[i]);
      std::string why, status = verdict(c, tolerance, why);
      report["seeds"].push_back({{"seed", seed},
                                 {"argument", i},
                                 {"status", status},
                                 {"why", why},
                                 {"max_abs_error", c.maxAbsError},
                                 {"max_rel_error", c.maxRelError},
                                 {"rel_l2_error", c.relL2Error},
                                 {"cosine", c.cosine},
                                 {"non_finite", c.nonFinite},
                                 {"unwritten", c.unwritten},
                                 {"reference_max_abs", c.referenceMaxAbs}});
      if (status == "incorrect" || (status == "inconclusive" && overall == "correct"))
        overall = status;
      if (status != "correct" && !report.contains("reason"))
        report["reason"] = "seed " + std::to_string(seed) + ": " + why;
    }
  }
  report["status"] = overall;
  if (options.reps > 0) {
    std::string error;
    Options timed = options;
    if (options.timingBudgetMs > 0 && lastRunMs > 0)
      timed.reps = std::clamp(static_cast<int>(options.timingBudgetMs / lastRunMs), std::min(10, options.reps),
                              options.reps);
    json t = timing(candidate, timed, error);
    if (!error.empty())
      return fail("timing: " + error);
    report["timing"] = t;
    if (options.timeReference) {
      json r = timing(reference, options, error);
      if (!error.empty())
        return fail("timing the reference: " + error);
      double speedup = r["median_ms"].get<double>() / t["median_ms"].get<double>();
      report["reference_timing"] = r;
      report["speedup_over_reference"] = speedup;
      if (speedup > 10)
        report["flags"].push_back("speed-up above 10x over the reference: check the measurement before trusting");
    }
  }
  if (candidate.gpu)
    report["resources"] = resources(candidateKernels[0], candidateKernels[1]);
  return report.dump();
}

/// `--device-info`: the GPU's properties the search's heuristics use, as JSON; exit 1 when there is no GPU.
int printDeviceInfo(int ordinal) {
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

void usage() {
  std::cerr << "usage: kforge-run --device-info [--device N]\n"
               "       kforge-run --serve --reference DIR [--runtime ...] [--cache-dir DIR] [--device N] ...\n"
               "                  (then one JSON request per stdin line: {\"candidate\": DIR, \"seeds\": N, ...})\n"
               "       kforge-run --candidate DIR --reference DIR [--candidate-name N] [--reference-name N]\n"
               "                  [--seeds 5] [--reps 20] [--warmup 3] [--tolerance T] [--timeout 120]\n"
               "                  [--memory-limit-mb 16384] [--runtime libkforge_mgpu.so] [--device 0]\n"
               "                  [--ceiling-gbps G] [--ceiling-tflops T] [--time-reference 0|1]\n"
               "                  [--check-reference-against DIR] [--cutoff-ms MS] [--cache-dir DIR]\n"
               "                  [--timing-budget-ms MS] [--first-run-allowance-ms 1000]\n"
               "                  [--l2-flush dirty|clean] [--output FILE]\n"
               "       kforge-run --print-l2-read-kernel   (the PTX of --l2-flush clean's read kernel)\n";
}

bool parse(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--serve") {
      options.serve = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "kforge-run: error: " << flag << " needs a value\n";
      return false;
    }
    std::string value = argv[++i];
    char *end = nullptr;
    auto number = [&](auto &slot) {
      double parsed = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || parsed < 0)
        return false;
      slot = static_cast<std::remove_reference_t<decltype(slot)>>(parsed);
      return true;
    };
    bool ok = true;
    if (flag == "--candidate")
      options.candidate = value;
    else if (flag == "--reference")
      options.reference = value;
    else if (flag == "--candidate-name")
      options.candidateName = value;
    else if (flag == "--reference-name")
      options.referenceName = value;
    else if (flag == "--runtime")
      options.runtime = value;
    else if (flag == "--check-reference-against")
      options.independent = value;
    else if (flag == "--output")
      options.output = value;
    else if (flag == "--seeds")
      ok = number(options.seeds) && options.seeds > 0;
    else if (flag == "--reps")
      ok = number(options.reps);
    else if (flag == "--warmup")
      ok = number(options.warmup);
    else if (flag == "--timeout")
      ok = number(options.timeout) && options.timeout > 0;
    else if (flag == "--device")
      ok = number(options.device);
    else if (flag == "--tolerance")
      ok = number(options.tolerance) && options.tolerance > 0;
    else if (flag == "--ceiling-gbps")
      ok = number(options.ceilingGBps);
    else if (flag == "--cache-dir")
      options.cacheDir = value;
    else if (flag == "--cutoff-ms")
      options.cutoffMs = std::atof(value.c_str());
    else if (flag == "--timing-budget-ms")
      ok = number(options.timingBudgetMs);
    else if (flag == "--first-run-allowance-ms")
      ok = number(options.firstRunAllowanceMs);
    else if (flag == "--ceiling-tflops")
      ok = number(options.ceilingTflops);
    else if (flag == "--time-reference") {
      ok = value == "0" || value == "1";
      options.timeReference = value == "1";
    } else if (flag == "--memory-limit-mb")
      ok = number(options.memoryLimitMB);
    else if (flag == "--l2-flush") {
      ok = isL2State(value);
      options.l2Flush = value;
    } else {
      std::cerr << "kforge-run: error: unknown option " << flag << "\n";
      return false;
    }
    if (!ok) {
      std::cerr << "kforge-run: error: bad value '" << value << "' for " << flag << "\n";
      return false;
    }
  }
  if (options.serve && (!options.candidate.empty() || !options.independent.empty() || options.timeReference)) {
    std::cerr << "kforge-run: error: --serve takes its candidates from stdin (no --candidate, "
                 "--check-reference-against or --time-reference)\n";
    return false;
  }
  if ((options.candidate.empty() && !options.serve) || options.reference.empty()) {
    std::cerr << "kforge-run: error: --candidate and --reference are required\n";
    return false;
  }
  if (options.reps > 0 && options.reps < 10) {
    std::cerr << "kforge-run: error: --reps must be 0 (no timing) or at least 10\n";
    return false;
  }
  return true;
}

/// Writes a report where --output (or a request's "output") names; false when the file cannot be written.
bool writeReport(const std::string &path, const std::string &text) {
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return false;
  std::fputs(text.c_str(), file);
  std::fputs("\n", file);
  return std::fclose(file) == 0;
}

/// A request line of --serve mode, applied to a copy of the command line's options. Empty, or what is wrong.
std::string requestOptions(const json &request, Options &options) {
  if (!request.is_object())
    return "a request is one JSON object per line";
  if (!request.contains("candidate") || !request["candidate"].is_string())
    return "\"candidate\" (an artifact directory) is required";
  options.candidate = request["candidate"].get<std::string>();
  auto number = [&](const char *key, auto &slot, double minimum) -> std::string {
    if (!request.contains(key))
      return "";
    if (!request[key].is_number() || request[key].get<double>() < minimum)
      return std::string("\"") + key + "\" must be a number of at least " + std::to_string(minimum);
    slot = static_cast<std::remove_reference_t<decltype(slot)>>(request[key].get<double>());
    return "";
  };
  for (std::string error : {number("seeds", options.seeds, 1), number("reps", options.reps, 0),
                            number("warmup", options.warmup, 0), number("cutoff_ms", options.cutoffMs, 0),
                            number("timing_budget_ms", options.timingBudgetMs, 0)})
    if (!error.empty())
      return error;
  if (options.reps > 0 && options.reps < 10)
    return "\"reps\" must be 0 (no timing) or at least 10";
  for (const char *key : {"candidate_name", "output"})
    if (request.contains(key) && !request[key].is_string())
      return std::string("\"") + key + "\" must be a string";
  options.candidateName = request.value("candidate_name", options.candidateName);
  options.output = request.value("output", std::string());
  return "";
}

/// `--serve`: one long-lived process verifies and times many candidates against one reference, so that a
/// search pays for starting CUDA, reading the cached inputs and reference outputs, and the process itself
/// once, not per candidate (those were most of a trial's time on the H200: docs/perf/search-h200.md).
/// Requests come one per stdin line ({"candidate": DIR, "seeds", "reps", "warmup", "cutoff_ms", "output",
/// "candidate_name"}), reports go out one per line, in order, on the original stdout; anything else the
/// process prints goes to stderr. There is no child process per candidate: the caller (kforge-tune) owns
/// the time limit and restarts the server after a crash. After a GPU error that poisons the context (an
/// illegal address, say) the server answers and exits (status 3), for the same reason.
int serve(const Options &base) {
  Manifest reference;
  if (std::string error = readManifest(base.reference, base.referenceName, reference); !error.empty()) {
    std::cerr << "kforge-run: error: " << error << "\n";
    return 2;
  }
  if (reference.target == "cpu" && base.memoryLimitMB > 0) {
    rlimit limit{static_cast<rlim_t>(base.memoryLimitMB) << 20, static_cast<rlim_t>(base.memoryLimitMB) << 20};
    setrlimit(RLIMIT_AS, &limit);
  }
  // Replies travel on a private copy of stdout; a kernel or library printing to stdout cannot corrupt them.
  std::fflush(stdout);
  int replies = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE *out = fdopen(replies, "w");
  if (replies < 0 || !out) {
    std::cerr << "kforge-run: error: cannot set up the reply channel\n";
    return 2;
  }
  std::string line;
  int served = 0;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    ++served;
    Options options = base;
    json report;
    std::string error = requestOptions(json::parse(line, nullptr, /*allow_exceptions=*/false), options);
    if (!error.empty())
      report = {{"status", "failed"}, {"reason", "bad request: " + error}};
    else
      report = json::parse(evaluate(options), nullptr, /*allow_exceptions=*/false);
    report["server"] = {{"pid", static_cast<int>(getpid())}, {"request", served}};
    bool poisoned = cudaLoaded && !cuda.check(cuda.ctxSynchronize(), "cuCtxSynchronize").empty();
    if (poisoned)
      report["runner_exit"] = "the GPU context is unusable after this candidate; the runner exits";
    if (!options.output.empty() && !writeReport(options.output, report.dump(2)))
      report["output_error"] = "cannot write " + options.output;
    std::fputs((report.dump() + "\n").c_str(), out);
    std::fflush(out);
    if (poisoned)
      return 3;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Arguments are tens of MB, allocated and freed for every seed and candidate: keep freed memory in the heap
  // (glibc would otherwise mmap and unmap each one, and every page fault of a fresh mapping costs again).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (argc == 2 && std::strcmp(argv[1], "--print-l2-read-kernel") == 0) {
    std::fputs(l2ReadFlushPtx(), stdout);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "--device-info") == 0) {
    int ordinal = argc == 4 && std::strcmp(argv[2], "--device") == 0 ? std::atoi(argv[3]) : 0;
    if (argc != 2 && argc != 4) {
      usage();
      return 2;
    }
    return printDeviceInfo(ordinal);
  }
  Options options;
  if (!parse(argc, argv, options)) {
    usage();
    return 2;
  }
  if (options.serve)
    return serve(options);
  // Only CPU work gets an address-space limit: CUDA reserves far more virtual memory than it uses.
  Manifest probe;
  bool cpuOnly = readManifest(options.candidate, options.candidateName, probe).empty() && probe.target == "cpu";
  Manifest probeRef;
  cpuOnly =
      cpuOnly && readManifest(options.reference, options.referenceName, probeRef).empty() && probeRef.target == "cpu";
  size_t memoryLimit = cpuOnly ? static_cast<size_t>(options.memoryLimitMB) << 20 : 0;

  ChildOutcome outcome = runIsolated([&] { return evaluate(options); }, options.timeout, memoryLimit);
  json report = json::parse(outcome.output, nullptr, /*allow_exceptions=*/false);
  if (outcome.status != "ok" || report.is_discarded()) {
    std::string reason = outcome.status == "ok" ? "the evaluation returned no report" : outcome.reason;
    // The runtime aborts after naming the failed CUDA call and its error: that is the reason to report.
    size_t at = outcome.errors.rfind("kforge runtime: ");
    if (at != std::string::npos) {
      std::string line = outcome.errors.substr(at + 16);
      reason = line.substr(0, line.find('\n')) + " (" + reason + ")";
    }
    report = {
        {"candidate", options.candidate}, {"reference", options.reference}, {"status", "failed"}, {"reason", reason}};
    if (!outcome.errors.empty())
      report["stderr"] = outcome.errors;
  }
  std::string text = report.dump(2);
  if (!options.output.empty() && !writeReport(options.output, text)) {
    std::cerr << "kforge-run: error: cannot write " << options.output << "\n";
    return 2;
  }
  std::cout << text << std::endl;
  return report["status"] == "correct" ? 0 : 1;
}
