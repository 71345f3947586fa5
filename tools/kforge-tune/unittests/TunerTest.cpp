#include "Evaluate.h"
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

TEST(TooSlowCutoff, TheSlackIsWhatTheBaselinesRunCostBesideItsKernel) {
  // A 2.3 ms baseline kernel whose first run took 425 ms (1 GB of arguments copied in and out): a candidate's
  // run pays the same copies, so the slack is 422.7 ms, not 100.
  EXPECT_DOUBLE_EQ(runSlackMs(425, 2.3), 422.7);
  EXPECT_DOUBLE_EQ(tooSlowCutoffMs(4, 2.5, 10, 2.5, runSlackMs(425, 2.5)), 432.5);
  // A small problem's run is cheap: the slack stays 100 ms; a record without a first run too.
  EXPECT_DOUBLE_EQ(runSlackMs(30, 0.04), 100);
  EXPECT_DOUBLE_EQ(runSlackMs(0, 2.3), 100);
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

/// Facts of a problem with `gflop` GFLOP over `gb` GB of arguments.
static PayloadFacts problem(double gflop, double gb) {
  PayloadFacts facts;
  facts.flops = static_cast<int64_t>(gflop * 1e9);
  facts.bytes = static_cast<int64_t>(gb * 1e9);
  return facts;
}

TEST(ReferenceCheck, TheGpuReferenceIsCheckedAgainstTheCpuBuildWhenSmallEnough) {
  TuneConfig config;
  config.target = "gpu";
  // Within the default bound (2 GFLOP, 2 GB): checked.
  ReferenceCheck small = planReferenceCheck(config, problem(0.5, 0.1));
  EXPECT_EQ(small.status, "");
  EXPECT_NE(small.against.find("CPU build"), std::string::npos);
  // The sizes: a 128x512x1024x2048 batched product (275 GFLOP), a 2048x1048576 matvec (8.6 GB).
  // Beyond it, sampled elements check it instead; with those off too, nothing does, and the reason says why.
  ReferenceCheck flops = planReferenceCheck(config, problem(275, 1.6));
  EXPECT_EQ(flops.method, "samples");
  config.referenceSamples = 0;
  flops = planReferenceCheck(config, problem(275, 1.6));
  EXPECT_EQ(flops.status, "skipped");
  EXPECT_NE(flops.reason.find("too large for the CPU"), std::string::npos);
  EXPECT_EQ(planReferenceCheck(config, problem(4.3, 8.6)).status, "skipped");
  config.referenceCheckMaxGflop = 0;
  EXPECT_NE(planReferenceCheck(config, problem(0.5, 0.1)).reason.find("turned off"), std::string::npos);
}

TEST(LargeProblemSeeds, AProblemOverTwoGigabytesIsVerifiedOnThreeSeeds) {
  TuneConfig config;
  // The softmax: 4096 x 393216 floats in and out, 12.9 GB.
  std::string note = largeProblemSeeds(config, problem(8, 12.9));
  EXPECT_EQ(config.seeds, 3);
  EXPECT_NE(note.find("3 seeds, not 5"), std::string::npos) << note;
  EXPECT_NE(note.find("12.9 GB"), std::string::npos) << note;
  // At or under the bound: the default stays.
  TuneConfig small;
  EXPECT_EQ(largeProblemSeeds(small, problem(8, 2.0)), "");
  EXPECT_EQ(small.seeds, 5);
  // --seeds on the command line is the user's word, large or not.
  TuneConfig given;
  given.seeds = 5;
  given.seedsGiven = true;
  EXPECT_EQ(largeProblemSeeds(given, problem(8, 12.9)), "");
  EXPECT_EQ(given.seeds, 5);
  // Fewer seeds than the rule's three are never raised.
  TuneConfig fewer;
  fewer.seeds = 2;
  largeProblemSeeds(fewer, problem(8, 12.9));
  EXPECT_EQ(fewer.seeds, 2);
}

TEST(LargeProblemSeeds, OnTheGpuInputsMadeOnTheDeviceCostASeedNothing) {
  // The matvec: 2048 x 1048576 f32 in (8.6 GB), 8 KB out: its f32 inputs are made on the device, so
  // every candidate keeps the default five seeds.
  TuneConfig matvec;
  matvec.target = "gpu";
  PayloadFacts facts = problem(4.3, 8.6);
  facts.f32ArgumentBytes = static_cast<int64_t>(8.6e9) - 8192;
  EXPECT_EQ(largeProblemSeeds(matvec, facts), "");
  EXPECT_EQ(matvec.seeds, 5);
  // The softmax's 6.4 GB f32 output still counts.
  TuneConfig softmax;
  softmax.target = "gpu";
  PayloadFacts wide = problem(8, 12.9);
  wide.f32ArgumentBytes = static_cast<int64_t>(6.45e9);
  std::string note = largeProblemSeeds(softmax, wide);
  EXPECT_EQ(softmax.seeds, 3);
  EXPECT_NE(note.find("the outputs and the inputs not made on the device take 6.5 GB"), std::string::npos) << note;
  // On the CPU every argument counts.
  TuneConfig cpu;
  cpu.target = "cpu";
  EXPECT_NE(largeProblemSeeds(cpu, facts), "");
  EXPECT_EQ(cpu.seeds, 3);
}

TEST(ReferenceCheck, TheCpuTargetIsCheckedOnSampledElements) {
  TuneConfig config;
  config.target = "cpu";
  ReferenceCheck check = planReferenceCheck(config, problem(0.001, 0.001));
  EXPECT_EQ(check.status, "");
  EXPECT_EQ(check.method, "samples");
  EXPECT_NE(check.against.find("the reference is the CPU build itself"), std::string::npos);
  // Turned off, nothing else can check it: said, never faked.
  config.referenceSamples = 0;
  check = planReferenceCheck(config, problem(0.001, 0.001));
  EXPECT_EQ(check.status, "skipped");
  EXPECT_EQ(check.method, "");
  EXPECT_NE(check.reason.find("--reference-samples 0"), std::string::npos);
}

TEST(ReferenceCheck, LargeGpuProblemsAreCheckedOnSampledElements) {
  TuneConfig config;
  config.target = "gpu";
  EXPECT_EQ(planReferenceCheck(config, problem(1, 1)).method, "cpu-build");
  ReferenceCheck check = planReferenceCheck(config, problem(8, 12.9));
  EXPECT_EQ(check.status, "");
  EXPECT_EQ(check.method, "samples");
  EXPECT_NE(check.against.find("too large for the CPU build"), std::string::npos);
}

TEST(ReferenceCheck, RoundTripsThroughRunJson) {
  ReferenceCheck check;
  check.status = "disagrees";
  check.against = "the CPU build";
  check.reason = "relative L2 error 0.001000 above tolerance 0.000100";
  check.relL2Error = 1e-3;
  llvm::json::Value value(check.toJSON());
  std::optional<ReferenceCheck> back = ReferenceCheck::fromJSON(&value);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, check.status);
  EXPECT_EQ(back->reason, check.reason);
  EXPECT_DOUBLE_EQ(*back->relL2Error, 1e-3);
  EXPECT_FALSE(back->maxAbsError);
  // A run.json from before the check has none: it is run then.
  EXPECT_FALSE(ReferenceCheck::fromJSON(nullptr));
  llvm::json::Value empty = llvm::json::Object{};
  EXPECT_FALSE(ReferenceCheck::fromJSON(&empty));
}
