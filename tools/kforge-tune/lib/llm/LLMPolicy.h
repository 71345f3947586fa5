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
  /// Added to the temperature in each repair round (a small model otherwise repeats its rejected reply).
  double repairHeat = 0.3;
  /// Make a rejected schedule valid by dropping the actions the validator names, before asking the model again;
  /// the trial's step says so.
  bool localRepair = true;
  int maxConsecutiveFailures = 3;
  /// llm+evolve: the model proposes the plans (which actions, in which order); the built-in search tunes the
  /// parameters of the best plans it measured (half of each batch, once the model's plans have been measured).
  bool hybrid = false;
  /// "compact": the target's actions a line each, the payload without comments, the facts on one line, shorter
  /// history tables, and schedules as JSON from the run's database (a heuristic first guess before anything is
  /// measured): about a fifth of "full" on the CPU target, for a small model with a small context on a slow
  /// CPU (docs/perf/llm-cpu.md). "full": the whole registry's documentation (docs/actions.md).
  std::string prompt = "compact";
  /// Constrain decoding to the schedule schema (scheduleSchema) where the server supports it (llama.cpp,
  /// llama-cpp-python: response_format json_object with a schema).
  bool constrain = false;
  std::string payloadText;
  std::function<void(const std::string &)> note; ///< Tells the user (stderr).
  /// Applies a proposed transform script without lowering: "" if it applies, else the diagnostics.
  std::function<std::string(const std::string &)> checkScript;
};

std::unique_ptr<Policy> createLLMPolicy(LLMPolicyOptions options, const PayloadFacts &facts,
                                        const HardwareProfile &profile, uint64_t seed);

/// The JSON schema of a reply holding 1 to `count` schedules of the actions `target` accepts, each action's
/// parameters restricted to the registry's domains (the sizes' lengths to the payload's loop counts). A
/// schedule it admits may still be rejected by the validator (order, divisibility, preconditions).
std::string scheduleSchema(const PayloadFacts &facts, llvm::StringRef target, int count);

/// The actions `target` accepts, a few lines each (summary, requirements, parameter domains), and their order.
std::string compactActions(llvm::StringRef target);

/// A schedule written in kforge's one-line form (describe(): "tile(block, 64x64); fuse(block); vectorize") as
/// the JSON list of actions the registry parses; the registry then judges it like any other. Returns false with
/// `error` when the text is not of that form (an unknown kind is left for the registry to name).
bool scheduleFromText(llvm::StringRef text, llvm::json::Value &actions, std::string &error);

/// The JSON schema of a reply holding 1 to `count` schedules in the one-line form ({"schedules": [{"schedule":
/// "...", "why": "..."}]}), the line restricted by a pattern to `target`'s kinds.
std::string scheduleTextSchema(llvm::StringRef target, int count);

/// A whole transform library in a reply (a fenced ```mlir block holding @__transform_main), or "".
std::string extractScript(const std::string &reply);

/// The schedules in a model's reply: a fenced ```json block or the outermost JSON value, holding
/// {"schedules": [{"actions": [...], "why": "..."} | {"schedule": "one-line form", "why": "..."} | "one-line form"
/// | [...], ...]}, {"actions": [...]} or [...] (a one-line form stays a JSON string). Returns
/// false with `error` when there is no such JSON. Exposed for tests.
bool extractSchedules(const std::string &reply, std::vector<llvm::json::Value> &schedules,
                      std::vector<std::string> &whys, std::string &error);

} // namespace kforge::tune

#endif // KFORGE_TUNE_LLMPOLICY_H
