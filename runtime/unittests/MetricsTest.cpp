//===- MetricsTest.cpp - the runner's correctness rule ---------------------===//

#include "Metrics.h"

#include <gtest/gtest.h>

#include <cmath>

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

TEST(MetricsTest, ConstantOrTinyReferencesAreInconclusive) {
  std::vector<float> constant(64, 3.0f);
  EXPECT_EQ(judge(constant, constant), "inconclusive");
  std::vector<float> tiny = ramp(64, 1e-9f);
  EXPECT_EQ(judge(std::vector<float>(64, 0.0f), tiny), "inconclusive");
}

TEST(MetricsTest, ZerosAgainstARealOutputAreIncorrect) {
  std::vector<float> ref = ramp(64);
  EXPECT_EQ(judge(std::vector<float>(64, 0.0f), ref), "incorrect");
}

} // namespace
