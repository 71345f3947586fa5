//===- VerifyInputs.cpp - the judge's inputs: drawn here, or made on the device by the executors ---===//
//
// Each input element is a function of (seed, argument, index) (Random.h). The judge draws those an executor
// cannot make; a GPU executor makes its f32 inputs itself and reports 32 of them, which the judge checks.
//
//===----------------------------------------------------------------------===//

#include "DeviceInputs.h"
#include "Evaluation.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

using namespace kforge;

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

DeviceInputSpec kforge::inputSpec(const ManifestArgument &arg, int seed, size_t argument) {
  DeviceInputSpec spec;
  spec.key = inputKey(static_cast<uint64_t>(seed), static_cast<uint64_t>(argument));
  if (int64_t bound = parseDomain(arg.domain).value_or(0); bound > 0) {
    spec.mode = InputMode::Index;
    spec.bound = static_cast<uint64_t>(bound);
  } else if (arg.domain == "positive") {
    spec.mode = InputMode::Positive;
  }
  return spec;
}

/// Random inputs for `seed` (Random.h: each element a function of the seed, the argument and its index),
/// rounded to the candidate's element types; drawn in blocks of kInputBlock elements on all cores.
void kforge::drawInputBlock(const ManifestArgument &arg, DType type, int seed, size_t argument, size_t first,
                            size_t count, float *out) {
  DeviceInputSpec spec = inputSpec(arg, seed, argument);
  for (size_t e = 0; e < count; ++e)
    out[e] = roundTo(type, inputValue(spec.key, first + e, spec.mode, spec.bound));
}

std::vector<Floats> kforge::makeInputs(const std::vector<ManifestArgument> &args, const std::vector<DType> &types,
                                       int seed) {
  std::vector<Floats> inputs;
  makeInputs(args, types, seed, inputs);
  return inputs;
}

void kforge::makeInputs(const std::vector<ManifestArgument> &args, const std::vector<DType> &types, int seed,
                        std::vector<Floats> &inputs, const std::vector<bool> &skip) {
  inputs.resize(args.size());
  std::vector<std::pair<size_t, size_t>> blocks; // (argument, first element)
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].isOutput || (i < skip.size() && skip[i]))
      continue;
    inputs[i].resize(static_cast<size_t>(args[i].numElements())); // kept from an earlier seed where it fits
    for (size_t first = 0; first < inputs[i].size(); first += kInputBlock)
      blocks.push_back({i, first});
  }
  auto draw = [&](size_t b) {
    auto [i, first] = blocks[b];
    size_t count = std::min(inputs[i].size(), first + kInputBlock) - first;
    drawInputBlock(args[i], types[i], seed, i, first, count, inputs[i].data() + first);
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
}

//===----------------------------------------------------------------------===//
// Inputs made on the device (DeviceInputs.h)
//===----------------------------------------------------------------------===//

json Evaluation::runCommand(const std::string &slot, int seed) const {
  json command = {{"op", "run"}, {"slot", slot}};
  if (seed < 0)
    return command;
  for (size_t i : deviceInputIndices) {
    DeviceInputSpec spec = inputSpec(candidate.arguments[i], seed, i);
    command["generate"].push_back(
        {{"argument", i}, {"key", spec.key}, {"mode", static_cast<uint32_t>(spec.mode)}, {"bound", spec.bound}});
  }
  return command;
}

std::string Evaluation::checkDeviceInputs(const json &reply, int seed) const {
  for (size_t i : deviceInputIndices) {
    DeviceInputSpec spec = inputSpec(candidate.arguments[i], seed, i);
    std::vector<uint64_t> positions = checkedInputPositions(layout.counts[i]);
    const json &bits = reply.value("generated", json::object()).value(std::to_string(i), json::array());
    if (!bits.is_array() || bits.size() != positions.size())
      return "the executor did not report the inputs it made on the device (argument " + std::to_string(i) + ")";
    for (size_t j = 0; j < positions.size(); ++j) {
      float value = inputValue(spec.key, positions[j], spec.mode, spec.bound);
      uint32_t expected;
      std::memcpy(&expected, &value, 4);
      if (!bits[j].is_number_unsigned() || bits[j].get<uint64_t>() != expected)
        return "input argument " + std::to_string(i) +
               " made on the device differs from the judge's values at element " + std::to_string(positions[j]) +
               " (bits " + bits[j].dump() + ", expected " + std::to_string(expected) +
               "): the GPU generator and Random.h disagree; kforge-run --host-inputs copies the judge's inputs instead";
    }
  }
  return "";
}

bool Evaluation::fallBackToHostInputs(const std::string &error, bool fromReference) {
  size_t at = error.find(kDeviceInputsUnavailable);
  if (at == std::string::npos || deviceInputIndices.empty())
    return false;
  // Only the reference's executor, which runs no candidate code, speaks for the session: a candidate's claim
  // costs its own evaluation the uploads, never the candidates after it.
  if (fromReference)
    workers.deviceInputsUnavailable = error.substr(at);
  for (size_t i : deviceInputIndices) {
    deviceInput[i] = false;
    hostInputIndices.push_back(i);
  }
  std::sort(hostInputIndices.begin(), hostInputIndices.end());
  deviceInputIndices.clear();
  report["inputs"] = "drawn by the judge: " + error.substr(at);
  return true;
}
