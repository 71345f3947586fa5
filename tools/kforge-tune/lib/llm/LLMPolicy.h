//===- LLMPolicy.h - an LLM proposes schedules; kforge checks and measures -*- C++ -*-===//
//
// The model sees the payload, the target's hardware profile, the action registry and the run's history, and
// answers with schedules as JSON. Each proposal goes through the same parser and validator as any other
// (the model never touches the measurement); a reply that cannot be used is sent back with the reasons for
// a bounded number of repair rounds. Every exchange is appended to a transcript (no key ever reaches it),
// and a recorded transcript can stand in for the endpoint (`--llm-replay`). When the endpoint is
// unreachable, the budget is spent, or the model keeps failing, the policy says so once and continues with
// the built-in heuristic+evolve policy.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_LLMPOLICY_H
#define KFORGE_TUNE_LLMPOLICY_H

#include "LLMClient.h"

#include "kforge/Tune/Policies.h"

#include <functional>
#include <memory>

namespace kforge::tune {

struct LLMPolicyOptions {
  LLMConfig client;
  std::string replayPath;     ///< A transcript to answer from instead of the endpoint.
  std::string transcriptPath; ///< Where every exchange is appended (JSON lines).
  int repairRounds = 2;       ///< Follow-up requests after an unusable reply.
  int maxConsecutiveFailures = 3;
  /// llm+evolve: the model proposes the plans (which actions, in which order); the built-in search tunes the
  /// parameters of the best plans it measured (half of each batch, once the model's plans have been measured).
  bool hybrid = false;
  std::string payloadText;
  std::function<void(const std::string &)> note; ///< Tells the user (stderr).
  /// Applies a proposed transform script without lowering: "" if it applies, else the diagnostics.
  std::function<std::string(const std::string &)> checkScript;
};

std::unique_ptr<Policy> createLLMPolicy(LLMPolicyOptions options, const PayloadFacts &facts,
                                        const HardwareProfile &profile, uint64_t seed);

/// A whole transform library in a reply (a fenced ```mlir block holding @__transform_main), or "".
std::string extractScript(const std::string &reply);

/// The schedules in a model's reply: a fenced ```json block or the outermost JSON value, holding
/// {"schedules": [{"actions": [...], "why": "..."} | [...], ...]}, {"actions": [...]} or [...]. Returns
/// false with `error` when there is no such JSON. Exposed for tests.
bool extractSchedules(const std::string &reply, std::vector<llvm::json::Value> &schedules,
                      std::vector<std::string> &whys, std::string &error);

} // namespace kforge::tune

#endif // KFORGE_TUNE_LLMPOLICY_H
