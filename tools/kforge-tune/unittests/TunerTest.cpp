#include "Tuner.h"

#include <gtest/gtest.h>

using namespace kforge::tune;

TEST(TooSlowCutoff, TheTighterBoundWins) {
  // The baseline bound (20 x 85 + 100 ms) is far above the best-so-far bound (10 x 7 + 100 ms).
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(20, 85, 10, 7), 170);
  // Before anything beats the baseline, best == baseline and the baseline bound may be the tighter one.
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(5, 85, 10, 85), 525);
}

TEST(TooSlowCutoff, ZeroTurnsABoundOff) {
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(0, 85, 10, 7), 170);
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(20, 85, 0, 7), 1800);
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(0, 85, 0, 7), 0);
  // No best yet (a resumed run before its baseline is known): only the baseline bound.
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(20, 85, 10, 0), 1800);
}
