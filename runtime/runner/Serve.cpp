//===- Serve.cpp - kforge-run --serve: many candidates, one process -------===//

#include "Runner.h"

#include "LoadedArtifact.h"
#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <sys/resource.h>
#include <type_traits>
#include <unistd.h>

using namespace kforge;
using json = nlohmann::json;

bool kforge::writeReportFile(const std::string &path, const std::string &text) {
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return false;
  std::fputs(text.c_str(), file);
  std::fputs("\n", file);
  return std::fclose(file) == 0;
}

/// A request line of --serve mode, applied to a copy of the command line's options. Empty, or what is wrong.
static std::string requestOptions(const json &request, RunnerOptions &options) {
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

int kforge::serve(const RunnerOptions &base) {
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
    RunnerOptions options = base;
    json report;
    std::string error = requestOptions(json::parse(line, nullptr, /*allow_exceptions=*/false), options);
    if (!error.empty())
      report = {{"status", "failed"}, {"reason", "bad request: " + error}};
    else
      report = json::parse(evaluate(options), nullptr, /*allow_exceptions=*/false);
    report["server"] = {{"pid", static_cast<int>(getpid())}, {"request", served}};
    bool poisoned = cudaLoaded() && !cudaDriver().check(cudaDriver().ctxSynchronize(), "cuCtxSynchronize").empty();
    if (poisoned)
      report["runner_exit"] = "the GPU context is unusable after this candidate; the runner exits";
    if (!options.output.empty() && !writeReportFile(options.output, report.dump(2)))
      report["output_error"] = "cannot write " + options.output;
    std::fputs((report.dump() + "\n").c_str(), out);
    std::fflush(out);
    if (poisoned)
      return 3;
  }
  return 0;
}
