//===- VerifyTiming.cpp - the judge's timed phases, checked against its own clock ---===//
//
// What an executor claims about time is the candidate's claim: the judge takes every sample, computes the
// statistics itself, and requires the claimed calls to account for the phase's wall time on its own clock,
// less the protocol's cost as the reference's executor measures it (docs/runner.md, "Who decides a verdict").
//
//===----------------------------------------------------------------------===//

#include "Evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

using namespace kforge;

/// A number array of exactly `count` finite non-negative values (an executor's samples), or nothing.
static std::optional<std::vector<double>> samplesOf(const json &timing, const char *key, int count) {
  auto it = timing.find(key);
  if (it == timing.end() || !it->is_array() || it->size() != static_cast<size_t>(count))
    return std::nullopt;
  std::vector<double> values;
  for (const json &value : *it) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
      return std::nullopt;
    values.push_back(value.get<double>());
  }
  return values;
}

std::string Evaluation::timePhase(ExecutorProcess &executor, const json &command, const std::string &what,
                                  json &timing, double &wallMs, double &claimedMs) {
  int reps = command["reps"].get<int>(), warmup = command["warmup"].get<int>();
  std::string error;
  auto started = std::chrono::steady_clock::now();
  std::optional<json> reply = call(executor, command, what, error);
  wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!reply)
    return error;
  const json &claim = (*reply)["timing"];
  if (!claim.is_object())
    return "the timing report is not an object";
  std::optional<std::vector<double>> samples = samplesOf(claim, "samples_ms", reps),
                                     warmups = samplesOf(claim, "warmup_ms", warmup);
  if (!samples || !warmups || samples->empty())
    return "the timing report lacks its samples (one finite non-negative number per repetition and warm-up)";
  claimedMs = 0;
  for (double ms : *samples)
    claimedMs += ms;
  for (double ms : *warmups)
    claimedMs += ms;
  // The statistics are the judge's, from the samples; the executor's own summary is not used.
  std::vector<double> sorted = *samples;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2], bytes = 0;
  for (size_t i = 0; i < candidate.arguments.size(); ++i)
    bytes += static_cast<double>(elementBytes(types[i])) * static_cast<double>(candidate.arguments[i].numElements());
  std::string clock = claim.contains("clock") && claim["clock"].is_string() ? claim["clock"].get<std::string>() : "";
  timing = {{"median_ms", median},
            {"min_ms", sorted.front()},
            {"max_ms", sorted.back()},
            {"p10_ms", sorted[sorted.size() / 10]},
            {"p90_ms", sorted[sorted.size() * 9 / 10]},
            {"reps", reps},
            {"warmup", warmup},
            {"clock", clock.substr(0, 200)},
            {"bytes_once", bytes},
            {"gbps_once", bytes / (median * 1e6)},
            {"judge_wall_ms", wallMs},
            {"claimed_total_ms", claimedMs}};
  if (options.ceilingGBps > 0 && bytes / (median * 1e6) > options.ceilingGBps)
    timing["flags"].push_back("bandwidth above the measured ceiling: re-measure before trusting");
  if (reference.flops > 0) {
    double tflops = reference.flops / (median * 1e9);
    timing["tflops"] = tflops;
    if (options.ceilingTflops > 0 && tflops > options.ceilingTflops)
      timing["flags"].push_back("FLOP rate above the measured ceiling: re-measure before trusting");
  }
  double floorMs = std::max({gpu ? kGpuFloorMs : kCpuFloorMs, bytes / (gpu ? kGpuBytesPerMs : kCpuBytesPerMs),
                             reference.flops / (gpu ? kGpuFlopsPerMs : kCpuFlopsPerMs)});
  if (median < floorMs) {
    char text[200];
    std::snprintf(text, sizeof(text),
                  "a median of %.3g ms is below the physical floor of %.3g ms for %.3g bytes and %.3g FLOP",
                  median, floorMs, bytes, reference.flops);
    return std::string(text) + ": a forged or broken measurement";
  }
  // Claimed calls cannot take longer than the phase that contained them (the judge's clock and the executor's
  // are the same steady clock; CUDA events measure intervals inside the host's calls).
  if (claimedMs > wallMs * 1.001 + 0.05) {
    char text[300];
    std::snprintf(text, sizeof(text),
                  "the timing disagrees with the judge's clock: the executor claims %.4g ms of timed calls in a "
                  "phase that took %.4g ms",
                  claimedMs, wallMs);
    return text;
  }
  return "";
}

std::string Evaluation::timingOverhead(int reps, int warmup, double &overheadMs) {
  if (std::string e = ensureReference(); !e.empty())
    return e;
  // The reference's executor runs no candidate code: the same protocol without the calls. Measured around
  // every timed phase, so that it sees the machine's load (scheduling delays of the round trip) as it is then.
  json command = {{"op", "time"}, {"slot", "reference"}, {"reps", reps}, {"warmup", warmup}, {"calibrate", true}};
  std::string error;
  auto started = std::chrono::steady_clock::now();
  std::optional<json> reply = call(workers.reference, command, "calibrating the timing", error);
  double wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!reply)
    return error;
  double claimedMs = 0;
  if (auto s = samplesOf((*reply)["timing"], "samples_ms", reps))
    for (double ms : *s)
      claimedMs += ms;
  overheadMs = std::max(0.0, wallMs - claimedMs);
  return "";
}

std::string Evaluation::timeChecked(ExecutorProcess &executor, json command, const std::string &what, json &timing) {
  int reps = command["reps"].get<int>(), warmup = command["warmup"].get<int>();
  // What the protocol costs besides the calls (measured without candidate code just before and just after),
  // twice over, plus kSchedulingAllowanceMs and 5% of the phase: claimed calls that leave more of the judge's
  // wall time unexplained were not that fast. A disturbed phase is timed again (at most three times in all): a forged
  // timing fails every time, an honest one rarely twice.
  std::string last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    double before = 0, after = 0, wallMs = 0, claimedMs = 0;
    if (std::string e = timingOverhead(reps, warmup, before); !e.empty())
      return "calibrating the timing: " + e;
    if (std::string e = timePhase(executor, command, what, timing, wallMs, claimedMs); !e.empty())
      return e;
    if (std::string e = timingOverhead(reps, warmup, after); !e.empty())
      return "calibrating the timing: " + e;
    double overheadMs = std::max(before, after), allowedMs = 2 * overheadMs + kSchedulingAllowanceMs + 0.05 * wallMs;
    if (wallMs - claimedMs <= allowedMs) {
      timing["protocol_overhead_ms"] = overheadMs;
      return "";
    }
    char text[500];
    std::snprintf(text, sizeof(text),
                  "the timing disagrees with the judge's clock: the executor claims %.4g ms of timed calls in a "
                  "phase that took %.4g ms, of which at most %.4g ms is the protocol's own cost (measured without "
                  "candidate code: %.3g ms before, %.3g ms after)",
                  claimedMs, wallMs, allowedMs, before, after);
    last = text;
    // A burst of other work (compiles, another measurer) passes; a forged claim does not.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
  }
  timing = json();
  // Marked apart from the reason's text, so a caller that must have this timing (kforge-tune's baseline) can tell
  // a disturbed machine from a failing kernel and time it again later.
  report["timing_disturbed"] = true;
  return last;
}

std::string Evaluation::timeCandidate() {
  int reps = options.reps, warmup = options.warmup;
  if (options.slowRunMs >= 0 && lastRunMs > options.slowRunMs) {
    reps = std::min(10, options.reps);
    warmup = std::min(1, options.warmup);
    report["slow_run"] = true;
  } else if (options.timingBudgetMs > 0 && lastRunMs > 0) {
    reps = std::clamp(static_cast<int>(options.timingBudgetMs / lastRunMs), std::min(10, options.reps), options.reps);
  }
  json command = {{"op", "time"}, {"slot", "candidate"}, {"reps", reps}, {"warmup", warmup}};
  json t;
  if (std::string e = timeChecked(workers.candidate, command, "timing", t); !e.empty())
    return "timing: " + e;
  report["timing"] = t;
  if (!options.timeReference)
    return "";
  // The reference is timed on buffers of its own run: one more run of seed 0's inputs.
  std::vector<Floats> inputs = makeInputs(candidate.arguments, types, 0), ignored;
  std::string error;
  if ((error = ensureReference()).size() ||
      (error = runOn(workers.reference, "reference", pointersTo(inputs), ignored)).size())
    return "timing the reference: " + error;
  command["slot"] = "reference";
  command["reps"] = options.reps;
  json r;
  if (std::string e = timeChecked(workers.reference, command, "timing the reference", r); !e.empty())
    return "timing the reference: " + e;
  double speedup = r["median_ms"].get<double>() / t["median_ms"].get<double>();
  report["reference_timing"] = r;
  report["speedup_over_reference"] = speedup;
  if (speedup > 10)
    report["flags"].push_back("speed-up above 10x over the reference: check the measurement before trusting");
  return "";
}
