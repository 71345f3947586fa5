//===- RandomTest.cpp - the judge's input generator ------------------------===//

#include "Random.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kforge;

TEST(Random, TheSameWordsGiveTheSameStreamAndNeighboursDiffer) {
  Xoshiro256 a(7, 1, 1 << 20), b(7, 1, 1 << 20), c(7, 2, 1 << 20), d(8, 1, 1 << 20);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a();
    EXPECT_EQ(x, b());
    EXPECT_NE(x, c());
    EXPECT_NE(x, d());
  }
}

TEST(Random, StandardNormalHasTheMomentsAndTailsOfNZeroOne) {
  Xoshiro256 generator(1);
  const int n = 4000000;
  double sum = 0, squares = 0, fourth = 0;
  int beyond2 = 0, beyond3 = 0, beyond4 = 0, negative = 0;
  for (int i = 0; i < n; ++i) {
    double x = standardNormal(generator);
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += x * x;
    fourth += x * x * x * x;
    beyond2 += std::fabs(x) > 2;
    beyond3 += std::fabs(x) > 3;
    beyond4 += std::fabs(x) > 4; // the ziggurat's tail begins at 3.44
    negative += x < 0;
  }
  double mean = sum / n, variance = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.003);
  EXPECT_NEAR(variance, 1.0, 0.003);
  EXPECT_NEAR(fourth / n, 3.0, 0.03); // the normal's kurtosis
  EXPECT_NEAR(double(negative) / n, 0.5, 0.002);
  // P(|x| > 2) = 0.0455, P(|x| > 3) = 0.0027, P(|x| > 4) = 6.3e-5.
  EXPECT_NEAR(double(beyond2) / n, 0.0455, 0.0006);
  EXPECT_NEAR(double(beyond3) / n, 0.0027, 0.00015);
  EXPECT_NEAR(double(beyond4) / n, 6.3e-5, 2.5e-5);
}
