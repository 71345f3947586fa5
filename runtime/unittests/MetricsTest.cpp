//===- MetricsTest.cpp - the runner's correctness rule ---------------------===//

#include "DType.h"
#include "Metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace kforge;

namespace {

std::vector<float> ramp(size_t n, float scale = 1.0f) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = scale * (static_cast<float>(i) - n / 2.0f);
  return values;
}

std::string judge(const std::vector<float> &candidate, const std::vector<float> &reference, double tolerance = 1e-4) {
  std::string why;
  return verdict(compare(candidate, reference), tolerance, why);
}

TEST(MetricsTest, IdenticalOutputsAreCorrect) {
  std::vector<float> ref = ramp(100);
  Comparison c = compare(ref, ref);
  EXPECT_EQ(c.maxAbsError, 0);
  EXPECT_EQ(c.relL2Error, 0);
  EXPECT_NEAR(c.cosine, 1.0, 1e-12);
  EXPECT_EQ(judge(ref, ref), "correct");
}

TEST(MetricsTest, ARunComparedWithItselfIsJudgedLikeACopyOfIt) {
  // The same buffer (a baseline's run, which is the reference's) takes a shortcut; it must judge alike.
  for (std::vector<float> ref : {ramp(3000000), std::vector<float>(64, 3.0f), std::vector<float>(64, 0.0f)}) {
    ref[5] = ref.size() > 64 ? NAN : ref[5];
    std::vector<float> copy = ref;
    Comparison self = compare(ref, ref), other = compare(copy, ref);
    EXPECT_EQ(self.referenceNonFinite, other.referenceNonFinite);
    EXPECT_EQ(self.nonFinite, other.nonFinite);
    EXPECT_EQ(self.referenceMaxAbs, other.referenceMaxAbs);
    EXPECT_EQ(self.referenceRange, other.referenceRange);
    EXPECT_EQ(self.relL2Error, other.relL2Error);
    EXPECT_EQ(judge(ref, ref), judge(copy, ref));
  }
}

TEST(MetricsTest, AKnownSummaryGivesTheSameComparison) {
  std::vector<float> ref = ramp(3000000), cand = ref;
  ref[11] = NAN;
  cand[7] *= 1.5f;
  cand[8] = NAN;
  Comparison direct = compare(cand, ref);
  Comparison known = compare(cand.data(), ref.data(), ref.size(), summarize(ref.data(), ref.size()));
  EXPECT_EQ(known.maxAbsError, direct.maxAbsError);
  EXPECT_EQ(known.maxRelError, direct.maxRelError);
  EXPECT_EQ(known.relL2Error, direct.relL2Error);
  EXPECT_EQ(known.referenceMaxAbs, direct.referenceMaxAbs);
  EXPECT_EQ(known.referenceRange, direct.referenceRange);
  EXPECT_EQ(known.nonFinite, direct.nonFinite);
  EXPECT_EQ(known.unwritten, direct.unwritten);
  EXPECT_EQ(known.referenceNonFinite, direct.referenceNonFinite);
  ReferenceSummary summary = summarize(ref.data(), ref.size());
  EXPECT_EQ(summary.nonFinite, 1);
}

TEST(MetricsTest, PoisonLeftInTheOutputIsUnwritten) {
  std::vector<float> ref = ramp(100), cand = ref;
  cand[7] = NAN;
  cand[8] = INFINITY;
  Comparison c = compare(cand, ref);
  EXPECT_EQ(c.nonFinite, 2);
  EXPECT_EQ(c.unwritten, 1);
  EXPECT_EQ(judge(cand, ref), "incorrect");
}

TEST(MetricsTest, RelativeErrorAboveToleranceIsIncorrect) {
  std::vector<float> ref = ramp(100), cand = ref;
  for (float &v : cand)
    v *= 1.001f;
  EXPECT_NEAR(compare(cand, ref).relL2Error, 1e-3, 1e-6);
  EXPECT_EQ(judge(cand, ref), "incorrect");
  EXPECT_EQ(judge(cand, ref, 1e-2), "correct");
}

TEST(MetricsTest, OneLargeOutlierIsCaughtByTheMaxRule) {
  std::vector<float> ref(10000, 0.0f), cand;
  for (size_t i = 0; i < ref.size(); ++i)
    ref[i] = std::sin(static_cast<float>(i));
  cand = ref;
  cand[42] += 0.05f; // tiny in L2 over 10000 elements, large for one element
  EXPECT_LT(compare(cand, ref).relL2Error, 1e-2);
  EXPECT_EQ(judge(cand, ref, 1e-2), "correct");   // 0.05 < 10 x 1e-2 x max|ref|
  EXPECT_EQ(judge(cand, ref, 1e-3), "incorrect"); // 0.05 > 10 x 1e-3 x max|ref|
}

TEST(MetricsTest, OnlyConstantReferencesAreInconclusive) {
  std::vector<float> constant(64, 3.0f);
  EXPECT_EQ(judge(constant, constant), "inconclusive");
  std::vector<float> zeros(64, 0.0f);
  EXPECT_EQ(judge(zeros, zeros), "inconclusive");
  // Tiny but honest values (a softmax over 393216 columns is ~2.5e-6 everywhere) are judged, not waved off.
  std::vector<float> tiny = ramp(64, 1e-9f);
  EXPECT_EQ(judge(tiny, tiny), "correct");
  EXPECT_EQ(judge(std::vector<float>(64, 0.0f), tiny), "incorrect");
}

TEST(MetricsTest, ASingleValueIsJudged) {
  // A loss is one value: it is the result, not a degenerate output. Zero stays inconclusive.
  EXPECT_EQ(judge({2.5f}, {2.5f}), "correct");
  EXPECT_EQ(judge({2.5f * (1 + 1e-3f)}, {2.5f}, 1e-4), "incorrect");
  EXPECT_EQ(judge({-1e-20f}, {-1e-20f}), "correct");
  EXPECT_EQ(judge({0.0f}, {0.0f}), "inconclusive");
  EXPECT_EQ(judge({std::nanf("")}, {2.5f}), "incorrect");
}

/// A[M x K] x B[K x N] with bf16/f16-representable inputs: the exact (double) product, and the product as a
/// kernel computes it (float accumulation, `dropK` terms of K left out for the first `dropped` outputs, or
/// every partial sum rounded to `accumulate`), rounded to the output type.
struct Product {
  std::vector<float> exact, kernel;
};

static Product product(DType inputs, DType output, int m, int n, int k, int dropped = 0, int dropK = 0,
                       std::optional<DType> accumulate = std::nullopt, float scale = 1.0f) {
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 2.0f;
  };
  for (float &v : a)
    v = roundTo(inputs, next());
  for (float &v : b)
    v = roundTo(inputs, next());
  Product p;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double exact = 0;
      float sum = 0;
      bool drop = i * n + j < dropped;
      for (int l = 0; l < k; ++l) {
        float term = a[size_t(i) * k + l] * b[size_t(l) * n + j];
        exact += double(term);
        if (drop && l < dropK)
          continue;
        sum = accumulate ? roundTo(*accumulate, sum + term) : sum + term;
      }
      p.exact.push_back(static_cast<float>(exact) * scale);
      p.kernel.push_back(roundTo(output, sum) * scale);
    }
  return p;
}

// The default tolerances against the failure modes shared/MEASURE.md measured on 4096^3 products.
TEST(MetricsTest, Bf16ToleranceKeepsHonestKernelsAndCatchesADroppedTile) {
  double tolerance = defaultTolerance(DType::BF16);
  Product honest = product(DType::BF16, DType::BF16, 64, 64, 2048);
  EXPECT_EQ(judge(honest.kernel, honest.exact, tolerance), "correct");
  // One K tile (32 of 2048) left out in 1 of 512 output tiles (8 of 4096 outputs): relative L2 ~5e-3.
  Product dropped = product(DType::BF16, DType::BF16, 64, 64, 2048, /*dropped=*/8, /*dropK=*/32);
  EXPECT_GT(compare(dropped.kernel, dropped.exact).relL2Error, tolerance);
  EXPECT_EQ(judge(dropped.kernel, dropped.exact, tolerance), "incorrect");
  EXPECT_EQ(judge(dropped.kernel, dropped.exact, 1e-2), "correct"); // what the old rule let through
}

TEST(MetricsTest, F16ToleranceKeepsHonestKernelsAndCatchesHalfPrecisionAccumulation) {
  double tolerance = defaultTolerance(DType::F16);
  Product honest = product(DType::F16, DType::F16, 64, 64, 1024);
  EXPECT_EQ(judge(honest.kernel, honest.exact, tolerance), "correct");
  Product halfSums = product(DType::F16, DType::F16, 64, 64, 1024, 0, 0, DType::F16);
  EXPECT_EQ(judge(halfSums.kernel, halfSums.exact, tolerance), "incorrect");
  EXPECT_EQ(judge(halfSums.kernel, halfSums.exact, 1e-2), "correct"); // what the old rule let through
}

TEST(MetricsTest, VerdictsDoNotDependOnScale) {
  for (float scale : {0x1p-40f, 0x1p-20f, 1.0f, 0x1p20f, 0x1p40f}) {
    Product honest = product(DType::F32, DType::F32, 32, 32, 512, 0, 0, std::nullopt, scale);
    EXPECT_EQ(judge(honest.kernel, honest.exact), "correct") << "scale " << scale;
    Product dropped = product(DType::F32, DType::F32, 32, 32, 512, 4, 32, std::nullopt, scale);
    EXPECT_EQ(judge(dropped.kernel, dropped.exact), "incorrect") << "scale " << scale;
  }
}

TEST(MetricsTest, ZerosAgainstARealOutputAreIncorrect) {
  std::vector<float> ref = ramp(64);
  EXPECT_EQ(judge(std::vector<float>(64, 0.0f), ref), "incorrect");
}

} // namespace

// The AVX2 comparison adds and compares the same values in the same order as the scalar one (interleaved
// lanes, merged in order): the same bits, on outputs with NaN (unwritten), infinities on both sides, zeros and
// a length no lane count divides, over enough elements to be split across threads.
TEST(Metrics, VectorAndScalarComparisonsAgreeToTheBit) {
  if (!__builtin_cpu_supports("avx2"))
    GTEST_SKIP() << "no AVX2 on this CPU";
  size_t n = (size_t(1) << 21) + 3;
  std::vector<float> ref(n), cand(n);
  for (size_t i = 0; i < n; ++i) {
    ref[i] = std::sin(0.001f * float(i)) * (i % 7 == 0 ? 1e-3f : 1.0f);
    cand[i] = ref[i] * (1.0f + 1e-6f * float(i % 13)) + (i % 101 == 0 ? 1e-4f : 0.0f);
  }
  cand[5] = NAN;
  cand[n - 1] = NAN;
  cand[100] = INFINITY;
  ref[200] = -INFINITY;
  ref[300] = NAN;
  ref[400] = 0.0f;
  auto run = [&](const char *scalar) {
    setenv("KFORGE_SCALAR_COMPARE", scalar, 1);
    Comparison c = compare(cand, ref);
    unsetenv("KFORGE_SCALAR_COMPARE");
    return c;
  };
  Comparison vector = run("0"), scalar = run("1");
  EXPECT_EQ(vector.nonFinite, 3);
  EXPECT_EQ(vector.unwritten, 2);
  EXPECT_EQ(vector.referenceNonFinite, 2);
  EXPECT_EQ(std::memcmp(&vector, &scalar, sizeof(Comparison)), 0)
      << vector.relL2Error << " " << scalar.relL2Error << " " << vector.maxRelError << " " << scalar.maxRelError;
  EXPECT_EQ(vector.maxAbsError, scalar.maxAbsError);
  EXPECT_EQ(vector.maxRelError, scalar.maxRelError);
  EXPECT_EQ(vector.relL2Error, scalar.relL2Error);
  EXPECT_EQ(vector.cosine, scalar.cosine);
}

// The AVX2 summary of the reference (what every comparison against it reads) equals the scalar one: the
// largest magnitude, the range and the non-finite count, with NaN and infinities of both signs skipped, over a
// length no vector width divides, split across threads.
TEST(Metrics, VectorAndScalarSummariesAgree) {
  if (!__builtin_cpu_supports("avx2"))
    GTEST_SKIP() << "no AVX2 on this CPU";
  size_t n = (size_t(1) << 21) + 5;
  std::vector<float> ref(n);
  for (size_t i = 0; i < n; ++i)
    ref[i] = std::sin(0.001f * float(i)) * (i % 7 == 0 ? 3.0f : 1.0f) - 0.5f;
  ref[17] = NAN;
  ref[n - 1] = INFINITY;
  ref[n - 2] = -INFINITY;
  ref[123457] = -3.75f; // the smallest and the largest magnitude
  ref[n - 3] = 3.5f;    // the largest value, in the scalar tail
  auto run = [&](const char *scalar) {
    setenv("KFORGE_SCALAR_COMPARE", scalar, 1);
    ReferenceSummary s = summarize(ref.data(), ref.size());
    unsetenv("KFORGE_SCALAR_COMPARE");
    return s;
  };
  ReferenceSummary vector = run("0"), scalar = run("1");
  EXPECT_EQ(vector.nonFinite, 3);
  EXPECT_EQ(vector.maxAbs, 3.75);
  EXPECT_EQ(vector.min, -3.75);
  EXPECT_EQ(vector.max, 3.5);
  EXPECT_EQ(vector.nonFinite, scalar.nonFinite);
  EXPECT_EQ(vector.maxAbs, scalar.maxAbs);
  EXPECT_EQ(vector.min, scalar.min);
  EXPECT_EQ(vector.max, scalar.max);
  std::vector<float> allNaN(1000, NAN);
  ReferenceSummary none = summarize(allNaN.data(), allNaN.size());
  EXPECT_EQ(none.nonFinite, 1000);
  EXPECT_EQ(none.maxAbs, 0);
  EXPECT_GT(none.min, none.max); // no finite value: an empty range
}
