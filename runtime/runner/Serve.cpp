//===- Serve.cpp - kforge-run --serve: many candidates, one process -------===//

#include "Runner.h"

#include "Judge.h"
#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <vector>
#include <iostream>
#include <type_traits>
#include <unistd.h>

using namespace kforge;
using json = nlohmann::json;

std::string kforge::writeReportFile(const std::string &path, const std::string &text) {
  // Only a regular file is replaced: renaming over a FIFO, a device (as root, /dev/full) or a symbolic link
  // would replace that node itself.
  struct stat info;
  if (lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return path + " exists and is not a regular file";
  // Complete or absent: a fresh temporary file beside it, renamed over it only when fully written.
  std::string pattern = path + ".tmp-XXXXXX";
  std::vector<char> temporary(pattern.begin(), pattern.end());
  temporary.push_back('\0');
  int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0)
    return "cannot create a temporary file beside " + path + ": " + std::strerror(errno);
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  std::string data = text + "\n";
  bool written = true;
  for (size_t done = 0; written && done < data.size();) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    written = n > 0;
    done += written ? static_cast<size_t>(n) : 0;
  }
  std::string error = written ? "" : std::string("cannot write ") + path + ": " + std::strerror(errno);
  if (error.empty() && fsync(fd) != 0)
    error = std::string("cannot write ") + path + ": " + std::strerror(errno);
  if (close(fd) != 0 && error.empty())
    error = std::string("cannot write ") + path + ": " + std::strerror(errno);
  if (error.empty() && rename(temporary.data(), path.c_str()) != 0)
    error = std::string("cannot write ") + path + ": " + std::strerror(errno);
  if (!error.empty())
    unlink(temporary.data());
  return error;
}

/// A request line of --serve mode, applied to a copy of the command line's options. Empty, or what is wrong.
static std::string requestOptions(const json &request, RunnerOptions &options) {
  if (!request.is_object())
    return "a request is one JSON object per line";
  if (!request.contains("candidate") || !request["candidate"].is_string())
    return "\"candidate\" (an artifact directory) is required";
  options.candidate = request["candidate"].get<std::string>();
  // Finite and in range, integral where the option is an integer (a cast of 1e300 to int is undefined).
  auto number = [&](const char *key, auto &slot, double minimum) -> std::string {
    if (!request.contains(key))
      return "";
    using T = std::remove_reference_t<decltype(slot)>;
    double value = request[key].is_number() ? request[key].get<double>() : std::nan("");
    bool ok = std::isfinite(value) && value >= minimum;
    if constexpr (std::is_integral_v<T>)
      ok = ok && value == std::floor(value) && value <= static_cast<double>(std::numeric_limits<int>::max());
    if (!ok)
      return std::string("\"") + key + "\" must be a finite number of at least " + std::to_string(minimum) +
             (std::is_integral_v<T> ? " (an integer)" : "");
    slot = static_cast<T>(value);
    return "";
  };
  for (std::string error :
       {number("seeds", options.seeds, 1), number("reps", options.reps, 0), number("warmup", options.warmup, 0),
        number("cutoff_ms", options.cutoffMs, 0), number("timing_budget_ms", options.timingBudgetMs, 0),
        number("slow_run_ms", options.slowRunMs, 0), number("timeout_s", options.timeout, 1)})
    if (!error.empty())
      return error;
  if (options.reps > 0 && options.reps < 10)
    return "\"reps\" must be 0 (no timing) or at least 10";
  for (const char *key : {"candidate_name", "output", "nonce", "check_reference_samples"})
    if (request.contains(key) && !request[key].is_string())
      return std::string("\"") + key + "\" must be a string";
  if (request.contains("nonce") && request["nonce"].get<std::string>().size() > 256)
    return "\"nonce\" must be at most 256 characters";
  options.candidateName = request.value("candidate_name", options.candidateName);
  options.output = request.value("output", std::string());
  options.referenceSamples = request.value("check_reference_samples", std::string());
  if (request.contains("reference_check_only")) {
    if (!request["reference_check_only"].is_boolean())
      return "\"reference_check_only\" must be true or false";
    options.referenceCheckOnly = request["reference_check_only"].get<bool>();
    if (options.referenceCheckOnly && options.referenceSamples.empty())
      return "\"reference_check_only\" checks the reference against \"check_reference_samples\", which is missing";
  }
  return "";
}

int kforge::serve(const RunnerOptions &base) {
  Manifest reference;
  if (std::string error = readManifest(base.reference, base.referenceName, reference); !error.empty()) {
    std::cerr << "kforge-run: error: " << error << "\n";
    return 2;
  }
  makeJudgeNonDumpable();
  // Replies travel on a private copy of stdout; nothing else this process prints can corrupt them, and no
  // executor holds it (Containment.h).
  std::fflush(stdout);
  int replies = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE *out = replies < 0 ? nullptr : fdopen(replies, "w");
  if (!out) {
    std::cerr << "kforge-run: error: cannot set up the reply channel\n";
    return 2;
  }
  // The executors (the candidates' and the reference's) outlive requests: a candidate that crashes, hangs
  // or poisons its GPU context costs its own executor, which the next request replaces.
  Workers workers;
  std::string line;
  int served = 0;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    ++served;
    RunnerOptions options = base;
    json request = json::parse(line, nullptr, /*allow_exceptions=*/false), report;
    std::string error = requestOptions(request, options);
    if (!error.empty())
      report = {{"status", "failed"}, {"reason", "bad request: " + error}};
    else
      report = json::parse(judge(options, workers), nullptr, /*allow_exceptions=*/false);
    if (!report.is_object())
      report = {{"status", "failed"}, {"reason", "internal: the evaluation returned no report"}};
    report["server"] = {{"pid", static_cast<int>(getpid())}, {"request", served}};
    // The caller matches a reply to its request by these; only this process (the judge) writes replies.
    if (request.is_object()) {
      if (request.contains("nonce") && request["nonce"].is_string())
        report["nonce"] = request["nonce"];
      if (request.contains("id") && (request["id"].is_number_integer() || request["id"].is_string()))
        report["id"] = request["id"];
    }
    if (!options.output.empty())
      if (std::string e = writeReportFile(options.output, report.dump(2)); !e.empty())
        report["output_error"] = e;
    std::fputs((report.dump() + "\n").c_str(), out);
    std::fflush(out);
  }
  return 0;
}
