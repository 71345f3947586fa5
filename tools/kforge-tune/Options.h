//===- Options.h - kforge-tune's command line -------------------*- C++ -*-===//

#ifndef KFORGE_TUNE_OPTIONS_H
#define KFORGE_TUNE_OPTIONS_H

#include "Tuner.h"

#include "llm/LLMPolicy.h"

#include <string>

namespace kforge::tune {

/// kforge-tune's command line as given; main picks the mode, makeTuneConfig resolves the rest.
struct CommandLine {
  // The modes, in the order main tries them.
  bool listActions = false, actionsDoc = false;
  std::string replayDir;
  bool buildOnly = false;
  int dryRun = 0;
  std::string validateFile, renderFile, tryFile;
  /// kforge.distributed's modes on a set-up run directory (Distributed.h).
  int propose = 0;
  std::string pendingFile, compileTrialDir;
  bool trialServer = false;

  std::string payloadPath, outputDir;
  std::string target; ///< auto, gpu or cpu
  std::string chip;   ///< empty: the GPU's, else sm_90
  std::string ceilingsPath, runtimePath;
  /// The options taken as given (policy, seed, budgets, limits, cutoffs, runner, weights, ...); the target, its
  /// profile, the chip, the run directory and the LLM policy are left to makeTuneConfig.
  TuneConfig config;
  LLMPolicyOptions llm; ///< --policy llm: the client's endpoint, model, budget; the replay transcript.
};

/// Parses argv (llvm::cl: --help and a bad option exit here).
CommandLine parseCommandLine(int argc, char **argv);

/// Checks every numeric option's value (NaN, infinities, negative or out-of-range counts, budgets, timeouts,
/// cutoffs, weights): 0, or the exit code (2, usage) after saying on stderr which option is wrong.
int checkOptionValues(const CommandLine &commandLine);

/// Checks the options a payload's modes share (payload, target, policy, runner, L2 flush, limits): 0, or
/// the exit code after saying on stderr what is wrong.
int checkPayloadOptions(const CommandLine &commandLine);

/// The LLM policy of the command line's --llm-* options (empty in a kforge-tune built without the LLM client).
LLMPolicyFactory llmPolicyOf(const CommandLine &commandLine);

/// The run's configuration: the target resolved (probing the GPU), its profile and ceilings, the chip, the run
/// directory and the LLM policy. 0, or the exit code after saying on stderr what is wrong.
int makeTuneConfig(CommandLine &commandLine, const Tools &tools, TuneConfig &config);

} // namespace kforge::tune

#endif // KFORGE_TUNE_OPTIONS_H
