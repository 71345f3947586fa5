//===- RunnerOptions.cpp - kforge-run's command line ----------------------===//

#include "RunnerOptions.h"

#include "L2Flush.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <iostream>
#include <type_traits>

using namespace kforge;

void kforge::printUsage() {
  std::cerr << "usage: kforge-run --device-info [--device N]\n"
               "       kforge-run --serve --reference DIR [--runtime ...] [--cache-dir DIR] [--device N] ...\n"
               "                  (then one JSON request per stdin line: {\"candidate\": DIR, \"seeds\": N, ...})\n"
               "       kforge-run --candidate DIR --reference DIR [--candidate-name N] [--reference-name N]\n"
               "                  [--seeds 5] [--reps 20] [--warmup 3] [--tolerance T] [--timeout 120]\n"
               "                  [--memory-limit-mb 16384] [--runtime libkforge_mgpu.so] [--device 0]\n"
               "                  [--ceiling-gbps G] [--ceiling-tflops T] [--time-reference 0|1]\n"
               "                  [--check-reference-against DIR] [--check-reference-samples FILE]\n"
               "                  [--cutoff-ms MS] [--cache-dir DIR]\n"
               "                  [--timing-budget-ms MS] [--slow-run-ms MS] [--first-run-allowance-ms 1000]\n"
               "                  [--l2-flush dirty|clean] [--precision ieee|tf32] [--host-inputs 0|1]\n"
               "                  [--output FILE]\n"
               "       kforge-run --print-l2-read-kernel   (the PTX of --l2-flush clean's read kernel)\n";
}

bool kforge::parseRunnerOptions(int argc, char **argv, RunnerOptions &options) {
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
    // Every number must be finite (strtod reads "nan" and "inf") and within its option's range; an integer
    // option takes integral values that fit an int.
    auto parse = [&](double &parsed) {
      char *end = nullptr;
      parsed = std::strtod(value.c_str(), &end);
      return end != value.c_str() && *end == '\0' && std::isfinite(parsed);
    };
    auto number = [&](auto &slot, double minimum = 0, double maximum = std::numeric_limits<double>::max()) {
      double parsed;
      if (!parse(parsed) || parsed < minimum || parsed > maximum)
        return false;
      using T = std::remove_reference_t<decltype(slot)>;
      if constexpr (std::is_integral_v<T>)
        if (parsed != std::floor(parsed) || parsed > static_cast<double>(std::numeric_limits<int>::max()))
          return false;
      slot = static_cast<T>(parsed);
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
    else if (flag == "--check-reference-samples")
      options.referenceSamples = value;
    else if (flag == "--output")
      options.output = value;
    else if (flag == "--seeds")
      ok = number(options.seeds, 1);
    else if (flag == "--reps")
      ok = number(options.reps);
    else if (flag == "--warmup")
      ok = number(options.warmup);
    else if (flag == "--timeout")
      ok = number(options.timeout, 1);
    else if (flag == "--device")
      ok = number(options.device);
    else if (flag == "--tolerance")
      ok = number(options.tolerance) && options.tolerance > 0 && options.tolerance < 1; // 1: zeros pass
    else if (flag == "--ceiling-gbps")
      ok = number(options.ceilingGBps);
    else if (flag == "--cache-dir")
      options.cacheDir = value;
    else if (flag == "--cutoff-ms")
      ok = number(options.cutoffMs);
    else if (flag == "--timing-budget-ms")
      ok = number(options.timingBudgetMs);
    else if (flag == "--slow-run-ms")
      ok = number(options.slowRunMs);
    else if (flag == "--first-run-allowance-ms")
      ok = number(options.firstRunAllowanceMs);
    else if (flag == "--ceiling-tflops")
      ok = number(options.ceilingTflops);
    else if (flag == "--time-reference") {
      ok = value == "0" || value == "1";
      options.timeReference = value == "1";
    } else if (flag == "--host-inputs") {
      ok = value == "0" || value == "1";
      options.hostInputs = value == "1";
    } else if (flag == "--memory-limit-mb")
      ok = number(options.memoryLimitMB);
    else if (flag == "--l2-flush") {
      ok = isL2State(value);
      options.l2Flush = value;
    } else if (flag == "--precision") {
      ok = value == "ieee" || value == "tf32";
      options.precision = value;
    } else {
      std::cerr << "kforge-run: error: unknown option " << flag << "\n";
      return false;
    }
    if (!ok) {
      std::cerr << "kforge-run: error: bad value '" << value << "' for " << flag << "\n";
      return false;
    }
  }
  if (options.serve && (!options.candidate.empty() || !options.independent.empty() ||
                        !options.referenceSamples.empty() || options.timeReference)) {
    std::cerr << "kforge-run: error: --serve takes its candidates from stdin (no --candidate, "
                 "--check-reference-against, --check-reference-samples or --time-reference)\n";
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
