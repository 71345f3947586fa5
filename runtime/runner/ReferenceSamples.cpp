//===- ReferenceSamples.cpp - the reference against elements computed elsewhere ===//
//
// --check-reference-samples FILE: output elements computed independently of kforge's lowering (kforge-compile
// --sample-outputs, float64 on the host from the payload's IR) for seed 0's inputs. The reference's seed-0
// outputs, which the evaluation computes anyway, are compared with them at their positions by the same rule
// as every candidate; a disagreement fails the run with the reason. kforge-tune asks for this when the problem
// is too large for the CPU build (docs/runner.md, "The reference is checked"). With --serve the check can also
// come after the reference ran: a "reference_check_only" request compares the seed-0 outputs the runner kept from
// an earlier request (the baseline's), so the tuner computes the samples while the baseline runs.
//
//===----------------------------------------------------------------------===//

#include "Evaluation.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unistd.h>

using namespace kforge;

/// Large enough for tens of thousands of samples; the file is the tuner's, but is read as untrusted input.
static constexpr size_t kMaxSamplesBytes = size_t(64) << 20;

std::string Evaluation::readReferenceSamples() {
  const std::string where = "--check-reference-samples " + options.referenceSamples + ": ";
  std::string why;
  int fd = openRegularFile(options.referenceSamples, "reference samples", /*noFollow=*/false, kMaxSamplesBytes, why);
  if (fd < 0)
    return where + why;
  std::string text;
  char buffer[1 << 16];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;)
    text.append(buffer, static_cast<size_t>(n));
  close(fd);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || doc["format"] != "kforge-samples/1")
    return where + "not a kforge-samples/1 file";
  if (!doc["seed"].is_number_integer() || doc["seed"].get<int64_t>() != 0)
    return where + "the samples are not of seed 0's inputs, which the check compares";
  if (!doc["outputs"].is_array())
    return where + "no \"outputs\" array";
  size_t total = 0;
  for (json &group : doc["outputs"]) {
    if (!group.is_object() || !group["argument"].is_number_unsigned() || !group["positions"].is_array() ||
        !group["values"].is_array() || group["positions"].size() != group["values"].size())
      return where + "each output needs an argument and as many positions as values";
    size_t argument = group["argument"].get<size_t>();
    if (std::find(outputIndices.begin(), outputIndices.end(), argument) == outputIndices.end())
      return where + "argument " + std::to_string(argument) + " is not an output of the reference";
    ReferenceSamples samples{argument, {}, {}};
    for (size_t k = 0; k < group["positions"].size(); ++k) {
      const json &position = group["positions"][k], &value = group["values"][k];
      if (!position.is_number_unsigned() || position.get<uint64_t>() >= sizes[argument])
        return where + "a position of argument " + std::to_string(argument) + " is outside it";
      if (!value.is_number() || !std::isfinite(value.get<double>()))
        return where + "a value is not a finite number";
      samples.positions.push_back(position.get<int64_t>());
      samples.values.push_back(static_cast<float>(value.get<double>()));
    }
    total += samples.positions.size();
    referenceSamples.push_back(std::move(samples));
  }
  if (total == 0)
    return where + "no samples: nothing would be checked";
  return "";
}

std::string Evaluation::checkReferenceSamples(const std::vector<const float *> &expected) {
  json result = {{"samples", options.referenceSamples}, {"status", "correct"}};
  size_t elements = 0;
  for (const ReferenceSamples &samples : referenceSamples) {
    std::vector<float> gathered(samples.positions.size()); // the reference's outputs at the samples' positions
    for (size_t k = 0; k < gathered.size(); ++k)
      gathered[k] = expected[samples.argument][samples.positions[k]];
    // The sampled values play the reference's part: the rule is relative to their scale.
    Comparison c = compare(gathered.data(), samples.values.data(), gathered.size());
    std::string why, status = verdict(c, tolerance, why);
    elements += gathered.size();
    result["rel_l2_error"] = std::max(result.value("rel_l2_error", 0.0), c.relL2Error);
    result["max_abs_error"] = std::max(result.value("max_abs_error", 0.0), c.maxAbsError);
    // The worst verdict stands, the first of its kind with its reason.
    if (status != "correct" && result["status"] != "incorrect" && result["status"] != status) {
      result["status"] = status;
      result["why"] = "argument " + std::to_string(samples.argument) + ": " + why;
    }
  }
  result["elements"] = elements;
  report["reference_check"] = result;
  if (result["status"] == "incorrect")
    return "the reference disagrees with the independent computation: " + result["why"].get<std::string>();
  return "";
}

std::optional<std::string> Evaluation::checkHeldReference() {
  if (std::string e = prepare(); !e.empty())
    return fail(e);
  // The held outputs are the reference's; a request naming another artifact would be judged on nothing it ran.
  if (!candidateIsReference)
    return fail("reference_check_only: the candidate must be the reference's own artifact");
  SeedCache held("", cacheKey, /*inMemory=*/options.serve && !reference.hash.empty());
  std::vector<const float *> expected(candidate.arguments.size());
  if (!held.view(0, "outputs", outputIndices, sizes, expected)) {
    // (Not kept: the in-memory entries stopped growing, or no earlier request ran seed 0.) Seed 0 runs again.
    return std::nullopt;
  }
  if (std::string e = checkReferenceSamples(expected); !e.empty())
    return fail(e);
  report["status"] = "correct";
  report["reference_outputs"] = "held by this runner from an earlier request (nothing ran)";
  return report.dump();
}
