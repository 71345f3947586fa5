//===- Executor.cpp - kforge-run --executor: the process that runs candidate code --===//
//
// Descriptor 3 is the channel to the judge (one JSON command per line in, one JSON reply per line out), 4
// the memory both share (every argument's float values, laid out by the judge). The first command, "init",
// carries the options; the executor contains itself (Containment.h) before it answers, so nothing it loads
// afterwards runs uncontained. Commands after that:
//   load {slot, dir, name}            loads an artifact (staged by the judge) into a slot
//   run {slot, generate?}             buffers rewritten whole (inputs from the shared memory, or those in
//                                     generate made on the device: DeviceInputs.h; outputs poisoned), one
//                                     call, outputs copied into the shared memory
//   time {slot, reps, warmup, ...}    times the slot's artifact on its current buffers (Timing.h); with
//                                     calibrate, the same protocol without the calls (the judge's overhead
//                                     measure, asked only of the reference's executor)
//   resources {first, last}           the GPU kernels' resources (Timing.h)
//   unload {slot}
// Every command carries "seq", which its reply echoes. Every reply is {"ok": true, ...} or {"error": why}; after a CUDA
// error that leaves the context unusable it adds "poisoned": true and exits with status 3.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "LoadedArtifact.h"
#include "Random.h"
#include "Timing.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace kforge;
using json = nlohmann::json;

namespace {

constexpr int kChannel = 3, kSharedMemory = 4;

class Executor {
public:
  int run();

private:
  bool readCommand(json &command);
  void reply(const json &message);
  json init(const json &command);
  json load(const json &command);
  json runSlot(const json &command);
  json time(const json &command);
  /// Whether the GPU context is still usable; if not the reply says so and the executor ends after it.
  bool contextPoisoned();

  RunnerOptions options;
  std::string pending;
  float *shared = nullptr;
  size_t sharedBytes = 0;
  std::map<std::string, std::unique_ptr<LoadedArtifact>> slots;
  std::vector<size_t> offsets; // per argument, in floats, as the judge laid them out
};

} // namespace

bool Executor::readCommand(json &command) {
  while (true) {
    size_t newline = pending.find('\n');
    if (newline != std::string::npos) {
      command = json::parse(pending.substr(0, newline), nullptr, /*allow_exceptions=*/false);
      pending.erase(0, newline + 1);
      return true;
    }
    char chunk[65536];
    ssize_t n = read(kChannel, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false; // the judge closed the channel
    pending.append(chunk, static_cast<size_t>(n));
  }
}

void Executor::reply(const json &message) {
  std::string line = message.dump() + "\n";
  for (size_t done = 0; done < line.size();) {
    ssize_t n = write(kChannel, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(0); // the judge is gone
    done += static_cast<size_t>(n);
  }
}

json Executor::init(const json &command) {
  options.runtime = command.value("runtime", std::string());
  options.device = command.value("device", 0);
  options.l2Flush = command.value("l2_flush", std::string("dirty"));
  sharedBytes = command.value("shared_bytes", size_t(0));
  void *map = mmap(nullptr, sharedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, kSharedMemory, 0);
  if (map == MAP_FAILED)
    return {{"error", std::string("cannot map the shared argument memory: ") + std::strerror(errno)}};
  shared = static_cast<float *>(map);
  close(kSharedMemory);
  if (long mb = command.value("memory_limit_mb", 0L); mb > 0) {
    rlimit limit{static_cast<rlim_t>(mb) << 20, static_cast<rlim_t>(mb) << 20};
    setrlimit(RLIMIT_AS, &limit);
  }
  ContainmentPlan plan;
  plan.keepDescriptors = {kChannel};
  for (const json &dir : command.value("readable", json::array()))
    if (dir.is_string())
      plan.readableDirs.push_back(dir.get<std::string>());
  for (const json &dir : command.value("secret", json::array()))
    if (dir.is_string())
      plan.secretDirs.push_back(dir.get<std::string>());
  ContainmentReport report;
  std::string error;
  if (!containCandidateProcess(plan, report, error))
    return {{"error", "containment: " + error}};
  return {{"ok", true},
          {"containment",
           {{"process", "separate executor; the judge compares and reports"},
            {"descriptors", "closed but the channel"},
            {"seccomp", report.seccomp ? "signals only to itself, no ptrace, no new processes, no exec" : "none"},
            {"landlock_abi", report.landlockAbi},
            {"signal_scope", report.signalScope},
            {"notes", report.notes}}}};
}

json Executor::load(const json &command) {
  std::string slot = command.value("slot", std::string("candidate"));
  auto artifact = std::make_unique<LoadedArtifact>();
  if (std::string error = loadArtifact(command.value("dir", std::string()), command.value("name", std::string()),
                                       options, *artifact);
      !error.empty())
    return {{"error", error}};
  // The judge laid the shared memory out from the same manifest; a different argument list is its error.
  offsets.clear();
  size_t offset = 0;
  for (const ManifestArgument &argument : artifact->manifest.arguments) {
    offsets.push_back(offset);
    offset += (static_cast<size_t>(argument.numElements()) + 15) / 16 * 16;
  }
  if (offset * sizeof(float) > sharedBytes)
    return {{"error", "the artifact's arguments do not fit the shared memory the judge laid out"}};
  bool gpu = artifact->gpu;
  slots[slot] = std::move(artifact);
  return {{"ok", true}, {"gpu", gpu}};
}

json Executor::runSlot(const json &command) {
  auto found = slots.find(command.value("slot", std::string("candidate")));
  if (found == slots.end())
    return {{"error", "no artifact loaded in that slot"}};
  LoadedArtifact &artifact = *found->second;
  const auto &args = artifact.manifest.arguments;
  // Packed straight from the shared memory: on a multi-GB problem every copy of an argument costs seconds.
  std::vector<const float *> inputs(args.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i)
    inputs[i] = shared + offsets[i];
  // Inputs the judge asks to have made on the device (DeviceInputs.h) instead of read from the shared memory.
  std::vector<std::optional<DeviceInputSpec>> generate;
  if (const json &asked = command.value("generate", json::array()); asked.is_array() && !asked.empty()) {
    generate.assign(args.size(), std::nullopt);
    for (const json &one : asked) {
      size_t i = one.value("argument", args.size());
      if (i >= args.size() || !one.value("key", json()).is_number_unsigned() || one.value("mode", 0u) > 2)
        return {{"error", "run: a malformed generate entry"}};
      DeviceInputSpec spec;
      spec.key = one["key"].get<uint64_t>();
      spec.mode = static_cast<InputMode>(one.value("mode", 0u));
      spec.bound = one.value("bound", uint64_t(0));
      generate[i] = spec;
    }
  }
  std::vector<std::vector<uint32_t>> checked;
  if (std::string error = prepare(artifact, inputs, generate, &checked); !error.empty())
    return {{"error", error}};
  int before = kernelCount();
  auto started = std::chrono::steady_clock::now();
  if (std::string error = runOnce(artifact); !error.empty())
    return {{"error", error}};
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].isOutput)
      if (std::string error = readOutput(artifact, i, shared + offsets[i]); !error.empty())
        return {{"error", error}};
  json reply = {{"ok", true}, {"run_ms", ms}, {"kernels", {before, kernelCount()}}};
  for (size_t i = 0; i < checked.size(); ++i)
    if (!checked[i].empty())
      reply["generated"][std::to_string(i)] = checked[i];
  return reply;
}

json Executor::time(const json &command) {
  auto found = slots.find(command.value("slot", std::string("candidate")));
  if (found == slots.end())
    return {{"error", "no artifact loaded in that slot"}};
  RunnerOptions timed = options;
  timed.reps = command.value("reps", 20);
  timed.warmup = command.value("warmup", 3);
  timed.ceilingGBps = command.value("ceiling_gbps", 0.0);
  timed.ceilingTflops = command.value("ceiling_tflops", 0.0);
  std::string error;
  json timing = timeArtifact(*found->second, timed, error, command.value("calibrate", false));
  if (!error.empty())
    return {{"error", error}};
  return {{"ok", true}, {"timing", timing}};
}

bool Executor::contextPoisoned() {
  return cudaLoaded() && !cudaDriver().check(cudaDriver().ctxSynchronize(), "cuCtxSynchronize").empty();
}

int Executor::run() {
  json command;
  if (!readCommand(command) || !command.is_object() || command.value("op", "") != "init")
    return 2;
  json answer = init(command);
  answer["seq"] = command.value("seq", json());
  reply(answer);
  if (answer.contains("error"))
    return 2;
  while (readCommand(command)) {
    std::string op = command.is_object() ? command.value("op", std::string()) : std::string();
    if (op == "load")
      answer = load(command);
    else if (op == "run")
      answer = runSlot(command);
    else if (op == "time")
      answer = time(command);
    else if (op == "resources")
      answer = {{"ok", true}, {"resources", kernelResources(command.value("first", 0), command.value("last", 0))}};
    else if (op == "unload") {
      slots.erase(command.value("slot", std::string("candidate")));
      answer = {{"ok", true}};
    } else
      answer = {{"error", "unknown executor command"}};
    bool poisoned = contextPoisoned();
    if (poisoned)
      answer["poisoned"] = true;
    if (command.is_object() && command.contains("seq"))
      answer["seq"] = command["seq"];
    reply(answer);
    if (poisoned)
      return 3;
  }
  return 0;
}

int kforge::runExecutor() {
  std::fflush(stdout);
  return Executor().run();
}
