//===- Metrics.h - comparing a candidate's output with the reference -*- C++ -*-===//

#ifndef KFORGE_RUNNER_METRICS_H
#define KFORGE_RUNNER_METRICS_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

struct Comparison {
  double maxAbsError = 0, maxRelError = 0, relL2Error = 0, cosine = 0;
  double referenceMaxAbs = 0, referenceRange = 0;
  int64_t elements = 0;
  int64_t nonFinite = 0; ///< NaN/Inf in the candidate where the reference is finite.
  int64_t unwritten = 0; ///< Elements still holding the poison (NaN) the output was filled with.
  int64_t referenceNonFinite = 0;
};

/// What a comparison needs to know of the reference before it compares: one pass over it. A judge comparing
/// many candidates against the same reference outputs keeps it (SeedCache::summary) instead of reading the
/// reference twice per comparison.
struct ReferenceSummary {
  double maxAbs = 0, min = INFINITY, max = -INFINITY;
  int64_t nonFinite = 0;
};
ReferenceSummary summarize(const float *reference, size_t n);

/// Element-wise comparison. The candidate's output was poisoned with NaN before the run, so a NaN left
/// where the reference is finite counts as unwritten (and as non-finite).
Comparison compare(const std::vector<float> &candidate, const std::vector<float> &reference);
/// The same over `n` elements held elsewhere (the seed cache's, the shared memory's).
Comparison compare(const float *candidate, const float *reference, size_t n);
/// The same, with the reference's summary known: it must be summarize(reference, n).
Comparison compare(const float *candidate, const float *reference, size_t n, const ReferenceSummary &summary);

/// "correct", "incorrect" or "inconclusive", with the reason in `why`. Rule: no non-finite values, relative
/// L2 error <= tolerance and max abs error <= 10 x tolerance x max|ref|; both relative to the reference's own
/// scale, so the verdict does not change when every value is multiplied by a power of two. Inconclusive only
/// when the reference is degenerate: constant over several elements or all zero, or not finite. A single
/// non-zero value (a loss) is conclusive: it changes with the inputs, so one value written whatever the seed
/// fails on the next seed.
std::string verdict(const Comparison &comparison, double tolerance, std::string &why);

} // namespace kforge

#endif // KFORGE_RUNNER_METRICS_H
