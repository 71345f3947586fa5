//===- LoadedArtifact.cpp - an artifact loaded into kforge-run ------------===//

#include "LoadedArtifact.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <optional>
#include <unistd.h>

using namespace kforge;

static CudaDriver cuda;
static bool driverLoaded = false;

CudaDriver &kforge::cudaDriver() { return cuda; }
bool kforge::cudaLoaded() { return driverLoaded; }

/// Frees the artifact's device buffers (at the end).
static void freeDevice(LoadedArtifact &artifact) {
  for (CUdeviceptr pointer : artifact.device)
    if (pointer)
      cuda.memFree(pointer);
  artifact.device.clear();
}

LoadedArtifact::~LoadedArtifact() {
  freeDevice(*this);
  if (library)
    dlclose(library);
}

size_t kforge::guardBytes(size_t argumentBytes) {
  return std::min<size_t>(size_t(4) << 20, std::max<size_t>(size_t(4) << 10, argumentBytes / 4));
}

using Entry1 = void (*)(void *);
using Entry2 = void (*)(void *, void *);
using Entry3 = void (*)(void *, void *, void *);
using Entry4 = void (*)(void *, void *, void *, void *);
using Entry5 = void (*)(void *, void *, void *, void *, void *);
using Entry6 = void (*)(void *, void *, void *, void *, void *, void *);
using Entry7 = void (*)(void *, void *, void *, void *, void *, void *, void *);
using Entry8 = void (*)(void *, void *, void *, void *, void *, void *, void *, void *);

void kforge::callEntry(LoadedArtifact &artifact) {
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

std::string kforge::loadArtifact(const std::string &dir, const std::string &name, const RunnerOptions &options,
                                 LoadedArtifact &artifact) {
  if (std::string error = readManifest(dir, name, artifact.manifest); !error.empty())
    return error;
  const Manifest &m = artifact.manifest;
  if (m.arguments.empty() || m.arguments.size() > 8)
    return "artifact '" + dir + "' has " + std::to_string(m.arguments.size()) + " arguments (1 to 8 supported)";
  for (const ManifestArgument &argument : m.arguments) {
    std::optional<DType> type = parseDType(argument.dtype);
    if (!type)
      return "artifact '" + dir + "' has a " + argument.dtype +
             " argument; kforge-run supports f32, f64, f16 and bf16 (and i64 / i32 outputs, index inputs)";
    artifact.types.push_back(*type);
  }
  artifact.gpu = m.target == "gpu";
  if (artifact.gpu && !driverLoaded) {
    if (std::string error = cuda.load(options.device); !error.empty())
      return error;
    driverLoaded = true;
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
static std::vector<int64_t> descriptorOf(void *data, const std::vector<int64_t> &shape) {
  std::vector<int64_t> descriptor{reinterpret_cast<int64_t>(data), reinterpret_cast<int64_t>(data), 0};
  descriptor.insert(descriptor.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  descriptor.insert(descriptor.end(), strides.begin(), strides.end());
  return descriptor;
}

/// The float32 quiet NaN outputs are poisoned with on the device (std::numeric_limits<float>::quiet_NaN()).
static constexpr unsigned kNaNBits = 0x7FC00000u;

/// Allocates each argument's buffers on the first run and keeps them: a seed of a multi-GB problem then costs
/// no fresh allocation, page faults or device allocation. Every run rewrites them whole. CPU artifacts and
/// GPU arguments in another type than f32: host storage (the argument in its type, then its guard bytes) and,
/// on the GPU, a device buffer of the same size. GPU f32 arguments ("direct"): a device buffer only, uploaded
/// from and read back into the caller's memory, poisoned and guarded on the device; their host storage holds
/// only a copy of the guard bytes read back.
static std::string allocateOnce(LoadedArtifact &artifact) {
  const auto &args = artifact.manifest.arguments;
  if (artifact.storage.size() == args.size())
    return "";
  artifact.storage.assign(args.size(), {});
  artifact.bytes.assign(args.size(), 0);
  artifact.direct.assign(args.size(), false);
  artifact.device.assign(args.size(), 0);
  artifact.descriptors.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    artifact.bytes[i] = static_cast<size_t>(args[i].numElements()) * elementBytes(artifact.types[i]);
    size_t guard = guardBytes(artifact.bytes[i]);
    artifact.direct[i] = artifact.gpu && artifact.types[i] == DType::F32 && cuda.memsetD32;
    artifact.storage[i].resize(artifact.direct[i] ? guard : artifact.bytes[i] + guard);
    void *data = artifact.storage[i].data();
    if (artifact.gpu) {
      if (auto e = cuda.check(cuda.memAlloc(&artifact.device[i], artifact.bytes[i] + guard), "cuMemAlloc"); !e.empty())
        return e;
      data = reinterpret_cast<void *>(artifact.device[i]);
    }
    artifact.descriptors.push_back(descriptorOf(data, args[i].shape));
  }
  return "";
}

/// A direct argument's run set-up on the device: an input uploaded from `input`, an output filled with NaN,
/// then the guard bytes.
static std::string prepareDirect(LoadedArtifact &artifact, size_t i, const float *input) {
  CUdeviceptr buffer = artifact.device[i];
  size_t bytes = artifact.bytes[i];
  if (artifact.manifest.arguments[i].isOutput) {
    if (auto e = cuda.check(cuda.memsetD32(buffer, kNaNBits, bytes / 4), "cuMemsetD32"); !e.empty())
      return e;
  } else if (auto e = cuda.check(cuda.memcpyHtoD(buffer, input, bytes), "cuMemcpyHtoD"); !e.empty()) {
    return e;
  }
  return cuda.check(cuda.memsetD8(buffer + bytes, kGuardByte, artifact.storage[i].size()), "cuMemsetD8");
}

std::string kforge::prepare(LoadedArtifact &artifact, const std::vector<const float *> &inputs,
                            const std::vector<std::optional<DeviceInputSpec>> &generate,
                            std::vector<std::vector<uint32_t>> *checked) {
  const auto &args = artifact.manifest.arguments;
  if (inputs.size() != args.size() || (!generate.empty() && generate.size() != args.size()))
    return "prepare: one input pointer per argument expected";
  if (std::string e = allocateOnce(artifact); !e.empty())
    return e;
  if (checked)
    checked->assign(args.size(), {});
  for (const std::optional<DeviceInputSpec> &spec : generate)
    if (spec) {
      if (std::string e = selfTestDeviceInputs(cuda); !e.empty())
        return kDeviceInputsUnavailable + e;
      break;
    }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!generate.empty() && generate[i]) {
      if (!artifact.direct[i] || args[i].isOutput)
        return "argument " + std::to_string(i) + " (" + args[i].dtype +
               ") cannot be made on the device: only a GPU artifact's f32 inputs are";
      std::vector<uint32_t> bits;
      if (std::string e = fillInputsOnDevice(cuda, artifact.device[i], artifact.bytes[i] / 4, *generate[i], bits);
          !e.empty())
        return e;
      if (checked)
        (*checked)[i] = std::move(bits);
      if (std::string e =
              cuda.check(cuda.memsetD8(artifact.device[i] + artifact.bytes[i], kGuardByte, artifact.storage[i].size()),
                         "cuMemsetD8");
          !e.empty())
        return e;
      continue;
    }
    if (artifact.direct[i]) {
      if (std::string e = prepareDirect(artifact, i, inputs[i]); !e.empty())
        return e;
      continue;
    }
    uint8_t *data = artifact.storage[i].data();
    size_t count = static_cast<size_t>(args[i].numElements());
    // Outputs start as the poison (unwritten elements stay visible), inputs as the judge's values; the guard
    // bytes after each are set again too.
    if (args[i].isOutput)
      poisonInto(artifact.types[i], count, data);
    else
      packInto(artifact.types[i], inputs[i], count, data);
    std::fill(data + artifact.bytes[i], data + artifact.storage[i].size(), kGuardByte);
    if (artifact.gpu)
      if (auto e = cuda.check(cuda.memcpyHtoD(artifact.device[i], data, artifact.storage[i].size()), "cuMemcpyHtoD");
          !e.empty())
        return e;
  }
  return "";
}

/// The whole pages of [data, data + bytes), page-locked for the device's copies: registered once per process
/// (the destinations are the judge's shared memory, mapped for the process's life); {nullptr, 0} where the range
/// is small, the driver has no cuMemHostRegister, or registering failed (then the copies stay pageable).
static std::pair<char *, size_t> pinnedPages(void *data, size_t bytes) {
  // Below this a pageable copy costs little, and registering has a fixed cost of its own.
  constexpr size_t kPinFrom = size_t(64) << 20;
  static std::map<uintptr_t, size_t> pinned; // start -> length, of every range registered (or refused: 0)
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t from = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  uintptr_t to = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (!cuda.memHostRegister || bytes < kPinFrom || to <= from)
    return {nullptr, 0};
  auto found = pinned.find(from);
  if (found == pinned.end()) {
    // (A range of whole pages inside this argument's own bytes: no other argument's registration overlaps it.)
    bool ok = cuda.memHostRegister(reinterpret_cast<void *>(from), to - from, 0) == 0;
    found = pinned.emplace(from, ok ? to - from : 0).first;
  }
  if (found->second != to - from)
    return {nullptr, 0};
  return {reinterpret_cast<char *>(from), to - from};
}

std::string kforge::readOutput(const LoadedArtifact &artifact, size_t i, float *values) {
  if (artifact.direct[i]) {
    // A large output: its page-locked middle at the link's speed, the ends (under a page each) as they are. A
    // pageable copy goes through the driver's staging buffer: 2.6 GB/s on an H100 host, 2.5 s for the 6.4 GB
    // of a 4096 x 393216 softmax (docs/perf/search-h200.md).
    char *out = reinterpret_cast<char *>(values);
    auto [middle, length] = pinnedPages(out, artifact.bytes[i]);
    if (!middle)
      return cuda.check(cuda.memcpyDtoH(values, artifact.device[i], artifact.bytes[i]), "cuMemcpyDtoH");
    size_t head = static_cast<size_t>(middle - out), tail = artifact.bytes[i] - head - length;
    CUdeviceptr source = artifact.device[i];
    std::string e = head ? cuda.check(cuda.memcpyDtoH(out, source, head), "cuMemcpyDtoH") : "";
    if (e.empty())
      e = cuda.check(cuda.memcpyDtoH(middle, source + head, length), "cuMemcpyDtoH");
    if (e.empty() && tail)
      e = cuda.check(cuda.memcpyDtoH(middle + length, source + head + length, tail), "cuMemcpyDtoH");
    return e;
  }
  unpackInto(artifact.types[i], artifact.storage[i].data(),
             static_cast<size_t>(artifact.manifest.arguments[i].numElements()), values);
  return "";
}

/// Where argument `i`'s guard bytes start in its host storage: after the argument, or at 0 for a direct
/// argument, whose storage holds the guard bytes only.
static size_t guardStart(const LoadedArtifact &artifact, size_t i) {
  return artifact.direct[i] ? 0 : artifact.bytes[i];
}

/// The first guard byte of argument `i` that is not kGuardByte any more (its offset past the end), or none.
static std::optional<size_t> writtenGuard(const LoadedArtifact &artifact, size_t i) {
  const std::vector<uint8_t> &storage = artifact.storage[i];
  for (size_t at = guardStart(artifact, i); at < storage.size(); ++at)
    if (storage[at] != kGuardByte)
      return at - guardStart(artifact, i);
  return std::nullopt;
}

std::string kforge::runOnce(LoadedArtifact &artifact) {
  callEntry(artifact);
  if (artifact.gpu)
    if (auto e = cuda.check(cuda.ctxSynchronize(), "cuCtxSynchronize"); !e.empty())
      return e;
  const auto &args = artifact.manifest.arguments;
  for (size_t i = 0; i < artifact.storage.size(); ++i) {
    // Host-path outputs whole; inputs and direct outputs only their guard bytes (a write past an input's end
    // is as wrong; a direct output is read straight into the caller's memory by readOutput).
    if (artifact.gpu) {
      bool guardOnly = artifact.direct[i] || !args[i].isOutput;
      size_t from = guardOnly ? artifact.bytes[i] : 0, into = guardOnly ? guardStart(artifact, i) : 0;
      if (auto e = cuda.check(cuda.memcpyDtoH(artifact.storage[i].data() + into, artifact.device[i] + from,
                                              artifact.storage[i].size() - into),
                              "cuMemcpyDtoH");
          !e.empty())
        return e;
    }
    if (std::optional<size_t> past = writtenGuard(artifact, i))
      return "the kernel wrote past the end of its " + std::string(args[i].isOutput ? "output" : "input") +
             " argument " + std::to_string(i) + " (" + args[i].dtype + ", " + std::to_string(artifact.bytes[i]) +
             " bytes): the guard byte " + std::to_string(*past) + " bytes after it changed";
  }
  return "";
}
