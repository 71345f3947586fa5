//===- Machine.cpp - the programs and the machine a run tunes for ---------===//

#include "Machine.h"

#include "Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

using namespace kforge::tune;
namespace json = llvm::json;

Tools kforge::tune::findTools(const char *argv0, llvm::StringRef runtimePath) {
  std::string self = llvm::sys::fs::getMainExecutable(argv0, reinterpret_cast<void *>(&findTools));
  llvm::SmallString<256> bin(llvm::sys::path::parent_path(self));
  Tools tools;
  auto sibling = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(bin);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  tools.compile = sibling("kforge-compile");
  tools.run = sibling("kforge-run");
  if (!runtimePath.empty()) {
    tools.runtime = runtimePath.str();
  } else if (std::optional<std::string> env = llvm::sys::Process::GetEnv("KFORGE_RUNTIME")) {
    tools.runtime = *env;
  } else {
    llvm::SmallString<256> lib(llvm::sys::path::parent_path(bin));
    llvm::sys::path::append(lib, "lib", "libkforge_mgpu.so");
    tools.runtime = std::string(lib);
  }
  return tools;
}

std::optional<HardwareProfile> kforge::tune::probeGpu(const Tools &tools, std::string &chip) {
  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("kforge-device", "json", out))
    return std::nullopt;
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef("")};
  llvm::StringRef argv[] = {tools.run, "--device-info"};
  ChildEnvironment env;
  int rc = llvm::sys::ExecuteAndWait(tools.run, argv, env.refs(), redirects, 60);
  std::optional<json::Value> value = readJSON(out);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !value)
    return std::nullopt;
  const json::Object *o = value->getAsObject();
  if (!o || !o->getBoolean("gpu").value_or(false))
    return std::nullopt;
  HardwareProfile p;
  p.target = "gpu";
  p.name = o->getString("name").value_or("").str() + " (" + o->getString("chip").value_or("").str() + ")";
  p.multiprocessors = static_cast<int>(o->getInteger("multiprocessors").value_or(1));
  p.maxThreadsPerBlock = static_cast<int>(o->getInteger("max_threads_per_block").value_or(1024));
  p.threadsPerMultiprocessor = static_cast<int>(o->getInteger("max_threads_per_multiprocessor").value_or(2048));
  p.sharedBytesPerBlock = o->getInteger("shared_bytes_per_block_optin").value_or(48 * 1024);
  p.registersPerBlock = o->getInteger("registers_per_block").value_or(65536);
  p.l2Bytes = o->getInteger("l2_bytes").value_or(0);
  if (chip.empty())
    chip = o->getString("chip").value_or("sm_90").str();
  p.chip = chip;
  return p;
}

HardwareProfile kforge::tune::cpuProfile() {
  HardwareProfile p;
  p.target = "cpu";
  p.name = "host CPU";
  int cores = llvm::get_physical_cores();
  p.multiprocessors = cores > 0 ? cores : static_cast<int>(llvm::hardware_concurrency().compute_thread_count());
  return p;
}

HardwareProfile kforge::tune::placeholderGpuProfile() {
  HardwareProfile p;
  p.target = "gpu";
  p.name = "(no GPU: a 132-SM profile)";
  p.multiprocessors = 132;
  p.maxThreadsPerBlock = 1024;
  p.threadsPerMultiprocessor = 2048;
  p.sharedBytesPerBlock = 232448;
  p.registersPerBlock = 65536;
  p.l2Bytes = 60 << 20; // the H200's (kforge-run --device-info: 62914560; the H100's is 50 MiB)
  return p;
}

bool kforge::tune::readCeilings(llvm::StringRef path, HardwareProfile &profile) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << "kforge-tune: error: cannot read " << path << "\n";
    return false;
  }
  llvm::StringRef text = (*buffer)->getBuffer().trim();
  if (text.starts_with("{")) {
    llvm::Expected<json::Value> value = json::parse(text);
    const json::Object *o = value ? value->getAsObject() : nullptr;
    if (!o) {
      if (!value)
        llvm::consumeError(value.takeError());
      llvm::errs() << "kforge-tune: error: " << path << " is not a JSON object\n";
      return false;
    }
    profile.measuredCopyGBps = o->getNumber("copy_gbps").value_or(0);
    profile.measuredFp32Tflops = o->getNumber("fp32_tflops").value_or(0);
    profile.ceilingsSource = o->getString("source").value_or(path).str();
  } else {
    auto [first, second] = text.split(' ');
    if (first.trim().getAsDouble(profile.measuredCopyGBps) || second.trim().getAsDouble(profile.measuredFp32Tflops)) {
      llvm::errs() << "kforge-tune: error: " << path << " holds neither JSON nor \"GBPS TFLOPS\"\n";
      return false;
    }
    profile.ceilingsSource = path.str();
  }
  if (profile.measuredCopyGBps < 0 || profile.measuredFp32Tflops < 0) {
    llvm::errs() << "kforge-tune: error: negative ceilings in " << path << "\n";
    return false;
  }
  return true;
}
