//===- Metrics.cpp - comparing a candidate's output with the reference ----===//

#include "Metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <immintrin.h>
#include <limits>
#include <thread>

using namespace kforge;

namespace {
/// Partial results of one chunk of the comparison, merged in chunk order.
struct ErrorStats {
  double maxAbs = 0, maxRel = 0, diffSq = 0, refSq = 0, candSq = 0, dot = 0;
  int64_t nonFinite = 0, unwritten = 0, referenceNonFinite = 0;
};

/// Runs `work(chunk, begin, end)` over `n` elements in a fixed number of chunks (so sums are added in the same
/// order on every machine), on up to that many threads. Outputs of 16 M elements are compared per seed and
/// candidate: one thread spent a third of a search's host time here.
template <typename Work> void forChunks(size_t n, size_t chunks, Work work) {
  size_t per = (n + chunks - 1) / chunks;
  if (n < (size_t(1) << 20)) {
    for (size_t c = 0; c < chunks; ++c)
      work(c, std::min(n, c * per), std::min(n, (c + 1) * per));
    return;
  }
  std::vector<std::thread> threads;
  for (size_t c = 0; c < chunks; ++c)
    threads.emplace_back(work, c, std::min(n, c * per), std::min(n, (c + 1) * per));
  for (std::thread &t : threads)
    t.join();
}
} // namespace

//===----------------------------------------------------------------------===//
// One chunk of a comparison, in kLanes interleaved lanes (element i into lane i % kLanes, merged in lane order)
// on every machine: the AVX2 form adds and compares the same values in the same order as the scalar one, so
// both give the same bits. A 6 GB output is compared once per seed and candidate: one scalar chain ran at
// ~1.4 ns an element on the H100's 16-core host (2.2 s a seed of a 4096 x 393216 softmax).
//===----------------------------------------------------------------------===//

namespace {
constexpr size_t kLanes = 4;

/// Element (refValue, candValue) into `lane`: non-finite values are counted, not compared, without a branch.
inline void addElement(ErrorStats &lane, float refValue, float candValue, double relFloor) {
  bool refFinite = std::fabs(refValue) <= std::numeric_limits<float>::max();
  bool candFinite = std::fabs(candValue) <= std::numeric_limits<float>::max();
  bool both = refFinite && candFinite;
  lane.referenceNonFinite += !refFinite;
  lane.nonFinite += refFinite && !candFinite;
  lane.unwritten += refFinite && candValue != candValue;
  double ref = both ? double(refValue) : 0.0, cand = both ? double(candValue) : 0.0;
  double diff = std::fabs(cand - ref);
  lane.maxAbs = std::max(lane.maxAbs, diff);
  lane.maxRel = std::max(lane.maxRel, diff / std::max(std::fabs(ref), relFloor));
  lane.diffSq += diff * diff;
  lane.refSq += ref * ref;
  lane.candSq += cand * cand;
  lane.dot += cand * ref;
}

/// The lanes merged in order.
ErrorStats mergeLanes(const ErrorStats (&lanes)[kLanes]) {
  ErrorStats part;
  for (const ErrorStats &lane : lanes) {
    part.maxAbs = std::max(part.maxAbs, lane.maxAbs);
    part.maxRel = std::max(part.maxRel, lane.maxRel);
    part.diffSq += lane.diffSq;
    part.refSq += lane.refSq;
    part.candSq += lane.candSq;
    part.dot += lane.dot;
    part.nonFinite += lane.nonFinite;
    part.unwritten += lane.unwritten;
    part.referenceNonFinite += lane.referenceNonFinite;
  }
  return part;
}

ErrorStats compareChunk(const float *candidate, const float *reference, size_t n, double relFloor) {
  ErrorStats lanes[kLanes];
  for (size_t i = 0; i < n; ++i)
    addElement(lanes[i % kLanes], reference[i], candidate[i], relFloor);
  return mergeLanes(lanes);
}

__attribute__((target("avx2"))) ErrorStats compareChunkAvx2(const float *candidate, const float *reference, size_t n,
                                                            double relFloor) {
  const __m128 signless = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  const __m128 largest = _mm_set1_ps(std::numeric_limits<float>::max());
  const __m256d signlessD = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  const __m256d floor = _mm256_set1_pd(relFloor);
  __m256d maxAbs = _mm256_setzero_pd(), maxRel = maxAbs, diffSq = maxAbs, refSq = maxAbs, candSq = maxAbs, dot = maxAbs;
  int64_t nonFinite = 0, unwritten = 0, referenceNonFinite = 0;
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    __m128 refValue = _mm_loadu_ps(reference + i), candValue = _mm_loadu_ps(candidate + i);
    __m128 refFinite = _mm_cmp_ps(_mm_and_ps(refValue, signless), largest, _CMP_LE_OQ);
    __m128 candFinite = _mm_cmp_ps(_mm_and_ps(candValue, signless), largest, _CMP_LE_OQ);
    __m128 candNaN = _mm_cmp_ps(candValue, candValue, _CMP_UNORD_Q);
    int refMask = _mm_movemask_ps(refFinite), candMask = _mm_movemask_ps(candFinite);
    referenceNonFinite += __builtin_popcount(~refMask & 0xf);
    nonFinite += __builtin_popcount(refMask & ~candMask & 0xf);
    unwritten += __builtin_popcount(refMask & _mm_movemask_ps(candNaN));
    __m256d both = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(_mm_and_ps(refFinite, candFinite))));
    __m256d ref = _mm256_and_pd(_mm256_cvtps_pd(refValue), both);
    __m256d cand = _mm256_and_pd(_mm256_cvtps_pd(candValue), both);
    __m256d diff = _mm256_and_pd(_mm256_sub_pd(cand, ref), signlessD);
    maxAbs = _mm256_max_pd(diff, maxAbs); // maxpd(a, b) is a > b ? a : b, as std::max(b, a)
    __m256d denominator = _mm256_max_pd(_mm256_and_pd(ref, signlessD), floor);
    maxRel = _mm256_max_pd(_mm256_div_pd(diff, denominator), maxRel);
    diffSq = _mm256_add_pd(diffSq, _mm256_mul_pd(diff, diff));
    refSq = _mm256_add_pd(refSq, _mm256_mul_pd(ref, ref));
    candSq = _mm256_add_pd(candSq, _mm256_mul_pd(cand, cand));
    dot = _mm256_add_pd(dot, _mm256_mul_pd(cand, ref));
  }
  ErrorStats lanes[kLanes];
  alignas(32) double values[6][kLanes];
  _mm256_store_pd(values[0], maxAbs);
  _mm256_store_pd(values[1], maxRel);
  _mm256_store_pd(values[2], diffSq);
  _mm256_store_pd(values[3], refSq);
  _mm256_store_pd(values[4], candSq);
  _mm256_store_pd(values[5], dot);
  for (size_t k = 0; k < kLanes; ++k) {
    lanes[k].maxAbs = values[0][k];
    lanes[k].maxRel = values[1][k];
    lanes[k].diffSq = values[2][k];
    lanes[k].refSq = values[3][k];
    lanes[k].candSq = values[4][k];
    lanes[k].dot = values[5][k];
  }
  lanes[0].nonFinite = nonFinite;
  lanes[0].unwritten = unwritten;
  lanes[0].referenceNonFinite = referenceNonFinite;
  for (; i < n; ++i)
    addElement(lanes[i % kLanes], reference[i], candidate[i], relFloor);
  return mergeLanes(lanes);
}

bool useAvx2() {
  if (const char *scalar = std::getenv("KFORGE_SCALAR_COMPARE"); scalar && *scalar == '1')
    return false;
  return __builtin_cpu_supports("avx2");
}
} // namespace

Comparison kforge::compare(const std::vector<float> &candidate, const std::vector<float> &reference) {
  return compare(candidate.data(), reference.data(), reference.size());
}

static constexpr size_t kChunks = 16;

namespace {
ReferenceSummary summarizeChunk(const float *reference, size_t n) {
  ReferenceSummary part;
  for (size_t i = 0; i < n; ++i) {
    float value = reference[i];
    if (!std::isfinite(value)) {
      ++part.nonFinite;
      continue;
    }
    part.maxAbs = std::max(part.maxAbs, std::fabs(double(value)));
    part.min = std::min(part.min, double(value));
    part.max = std::max(part.max, double(value));
  }
  return part;
}

/// The same summary, 8 floats at a time: maxima and minima of floats are exact in float, so it equals the
/// scalar one (up to the sign of a zero minimum or maximum, which no rule reads: only the range does). The
/// scalar loop ran at ~2.5 ns an element: a 4096 x 393216 softmax's baseline spent 4 of its 12 s here, on a
/// host busy compiling the first candidates.
__attribute__((target("avx2"))) ReferenceSummary summarizeChunkAvx2(const float *reference, size_t n) {
  const __m256 signless = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 largest = _mm256_set1_ps(std::numeric_limits<float>::max());
  const __m256 plusInf = _mm256_set1_ps(INFINITY), minusInf = _mm256_set1_ps(-INFINITY);
  __m256 maxAbs = _mm256_setzero_ps(), min = plusInf, max = minusInf;
  int64_t nonFinite = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 value = _mm256_loadu_ps(reference + i);
    __m256 magnitude = _mm256_and_ps(value, signless);
    __m256 finite = _mm256_cmp_ps(magnitude, largest, _CMP_LE_OQ);
    nonFinite += __builtin_popcount(~_mm256_movemask_ps(finite) & 0xff);
    maxAbs = _mm256_max_ps(maxAbs, _mm256_and_ps(magnitude, finite)); // a non-finite lane counts as 0
    min = _mm256_min_ps(min, _mm256_blendv_ps(plusInf, value, finite));
    max = _mm256_max_ps(max, _mm256_blendv_ps(minusInf, value, finite));
  }
  alignas(32) float values[3][8];
  _mm256_store_ps(values[0], maxAbs);
  _mm256_store_ps(values[1], min);
  _mm256_store_ps(values[2], max);
  ReferenceSummary part = summarizeChunk(reference + i, n - i);
  part.nonFinite += nonFinite;
  for (int k = 0; k < 8; ++k) {
    part.maxAbs = std::max(part.maxAbs, double(values[0][k]));
    part.min = std::min(part.min, double(values[1][k]));
    part.max = std::max(part.max, double(values[2][k]));
  }
  return part;
}
} // namespace

ReferenceSummary kforge::summarize(const float *reference, size_t n) {
  std::vector<ReferenceSummary> parts(kChunks);
  bool vectors = useAvx2();
  forChunks(n, kChunks, [&](size_t c, size_t begin, size_t end) {
    parts[c] = vectors ? summarizeChunkAvx2(reference + begin, end - begin) : summarizeChunk(reference + begin, end - begin);
  });
  ReferenceSummary summary;
  for (const ReferenceSummary &part : parts) {
    summary.maxAbs = std::max(summary.maxAbs, part.maxAbs);
    summary.min = std::min(summary.min, part.min);
    summary.max = std::max(summary.max, part.max);
    summary.nonFinite += part.nonFinite;
  }
  return summary;
}

Comparison kforge::compare(const float *candidate, const float *reference, size_t n) {
  return compare(candidate, reference, n, summarize(reference, n));
}

Comparison kforge::compare(const float *candidate, const float *reference, size_t n, const ReferenceSummary &summary) {
  Comparison result;
  result.elements = static_cast<int64_t>(n);
  result.referenceMaxAbs = summary.maxAbs;
  result.referenceRange = summary.max >= summary.min ? summary.max - summary.min : 0;
  if (candidate == reference) {
    // A run compared with itself (a baseline's, whose run is the reference's): no error, and the reference's
    // own statistics are all the verdict needs (half the reads, no division per element: seconds on a 6 GB
    // output).
    result.referenceNonFinite = summary.nonFinite;
    result.cosine = result.referenceMaxAbs > 0 ? 1 : 0;
    return result;
  }
  double relFloor = std::max(1e-3 * result.referenceMaxAbs, 1e-30);
  std::vector<ErrorStats> parts(kChunks);
  bool vectors = useAvx2();
  forChunks(n, kChunks, [&](size_t c, size_t begin, size_t end) {
    parts[c] = vectors ? compareChunkAvx2(candidate + begin, reference + begin, end - begin, relFloor)
                       : compareChunk(candidate + begin, reference + begin, end - begin, relFloor);
  });
  double diffSq = 0, refSq = 0, candSq = 0, dot = 0;
  for (const ErrorStats &part : parts) {
    result.maxAbsError = std::max(result.maxAbsError, part.maxAbs);
    result.maxRelError = std::max(result.maxRelError, part.maxRel);
    diffSq += part.diffSq;
    refSq += part.refSq;
    candSq += part.candSq;
    dot += part.dot;
    result.nonFinite += part.nonFinite;
    result.unwritten += part.unwritten;
    result.referenceNonFinite += part.referenceNonFinite;
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
  // Scale-invariant: every rule below is relative to the reference's own magnitude, so a softmax over 393216
  // columns (every value ~2.5e-6) is judged like any other output. Only a constant reference proves nothing;
  // a single value (a loss, a norm) is not constant but the result, and checked like any other.
  if (c.referenceMaxAbs == 0 || (c.referenceRange == 0 && c.elements > 1)) {
    why = "the reference output is constant (" + std::string(c.referenceMaxAbs == 0 ? "all zero" : "one value") +
          "): a comparison against it proves nothing";
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
