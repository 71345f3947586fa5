//===- Metrics.cpp - comparing a candidate's output with the reference ----===//

#include "Metrics.h"

#include <algorithm>
#include <cmath>

using namespace kforge;

Comparison kforge::compare(const std::vector<float> &candidate, const std::vector<float> &reference) {
  Comparison result;
  double diffSq = 0, refSq = 0, candSq = 0, dot = 0;
  double refMin = INFINITY, refMax = -INFINITY;
  for (float value : reference) {
    if (!std::isfinite(value))
      continue;
    result.referenceMaxAbs = std::max(result.referenceMaxAbs, std::fabs(double(value)));
    refMin = std::min(refMin, double(value));
    refMax = std::max(refMax, double(value));
  }
  result.referenceRange = refMax >= refMin ? refMax - refMin : 0;
  double relFloor = std::max(1e-3 * result.referenceMaxAbs, 1e-30);
  for (size_t i = 0; i < reference.size(); ++i) {
    double ref = reference[i], cand = candidate[i];
    if (!std::isfinite(ref)) {
      ++result.referenceNonFinite;
      continue;
    }
    if (!std::isfinite(cand)) {
      ++result.nonFinite;
      result.unwritten += std::isnan(cand);
      continue;
    }
    double diff = std::fabs(cand - ref);
    result.maxAbsError = std::max(result.maxAbsError, diff);
    result.maxRelError = std::max(result.maxRelError, diff / std::max(std::fabs(ref), relFloor));
    diffSq += diff * diff;
    refSq += ref * ref;
    candSq += cand * cand;
    dot += cand * ref;
  }
  result.relL2Error = refSq > 0 ? std::sqrt(diffSq / refSq) : (diffSq > 0 ? INFINITY : 0);
  result.cosine = refSq > 0 && candSq > 0 ? dot / std::sqrt(refSq * candSq) : 0;
  return result;
}

std::string kforge::verdict(const Comparison &c, double tolerance, std::string &why) {
  if (c.nonFinite > 0) {
    why = std::to_string(c.nonFinite) + " non-finite output elements (" + std::to_string(c.unwritten) +
          " still NaN from the poisoned output: unwritten)";
    return "incorrect";
  }
  if (c.referenceNonFinite > 0) {
    why = "the reference produced " + std::to_string(c.referenceNonFinite) + " non-finite values";
    return "inconclusive";
  }
  if (c.referenceRange == 0 || c.referenceMaxAbs < 10 * tolerance) {
    why = "the reference output is constant or tiny relative to the tolerance";
    return "inconclusive";
  }
  if (c.relL2Error > tolerance) {
    why = "relative L2 error " + std::to_string(c.relL2Error) + " above tolerance " + std::to_string(tolerance);
    return "incorrect";
  }
  if (c.maxAbsError > 10 * tolerance * c.referenceMaxAbs) {
    why = "max abs error " + std::to_string(c.maxAbsError) + " above 10 x tolerance x max|ref|";
    return "incorrect";
  }
  why = "";
  return "correct";
}
