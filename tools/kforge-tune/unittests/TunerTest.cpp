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

TEST(TrialRunTimeout, TheCutoffBoundsARunFarBelowTheRunTimeout) {
  // A 121 ms cutoff, 3 seeds and 20 repetitions: 30 s + 2 x 28 launches x 0.121 s = 36.8 s, not 300 s.
  EXPECT_EQ(trialRunTimeoutSeconds(300, 121, 3, 20, 0), 37);
  // A cutoff so large that the run timeout is the tighter bound.
  EXPECT_EQ(trialRunTimeoutSeconds(300, 100000, 3, 20, 0), 300);
  // No cutoff (both too-slow bounds off): only --run-timeout.
  EXPECT_EQ(trialRunTimeoutSeconds(300, 0, 3, 20, 0), 300);
}

TEST(TrialRunTimeout, TheTimeBudgetLeftBoundsItToo) {
  EXPECT_EQ(trialRunTimeoutSeconds(300, 121, 3, 20, 10), 15);
  // Never below a second, even with the budget spent.
  EXPECT_EQ(trialRunTimeoutSeconds(300, 121, 3, 20, 1e-3), 6);
  EXPECT_EQ(trialRunTimeoutSeconds(0, 0, 3, 20, 0), 1);
}
