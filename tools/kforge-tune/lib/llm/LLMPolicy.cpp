//===- LLMPolicy.cpp - an LLM proposes schedules; kforge checks and measures ===//

#include "LLMPolicy.h"

#include "JsonLimits.h"
#include "Report.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>

using namespace kforge::tune;
namespace json = llvm::json;

namespace {

/// Answers from a recorded transcript, in order, instead of the network.
class ReplayClient : public LLMClient {
public:
  ReplayClient(LLMConfig config, const std::string &path, std::string &error) : LLMClient(std::move(config)) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      error = "cannot read the transcript " + path;
      return;
    }
    llvm::StringRef rest = (*buffer)->getBuffer();
    while (!rest.empty()) {
      auto [line, tail] = rest.split('\n');
      rest = tail;
      if (line.trim().empty())
        continue;
      if (!jsonDepthWithin(line, kMaxReplyJsonDepth)) {
        error = "the transcript " + path + " has a line nested deeper than " + std::to_string(kMaxReplyJsonDepth) +
                " levels";
        return;
      }
      llvm::Expected<json::Value> v = json::parse(line);
      if (!v) {
        error = "the transcript " + path + " has a line that is not JSON";
        llvm::consumeError(v.takeError());
        return;
      }
      entries.push_back(std::move(*v));
    }
  }
  bool complete(const std::vector<ChatMessage> &, Completion &completion, std::string &error) override {
    if (next >= entries.size()) {
      error = "the recorded transcript has no more replies";
      return false;
    }
    const json::Object *entry = entries[next++].getAsObject();
    ++requests;
    if (const json::Object *response = entry ? entry->getObject("response") : nullptr) {
      completion.text = response->getString("text").value_or("").str();
      // A hand-edited transcript is as untrusted as an endpoint: counts saturate, never overflow.
      completion.promptTokens = saturateTokens(response->getInteger("prompt_tokens").value_or(0));
      completion.completionTokens = saturateTokens(response->getInteger("completion_tokens").value_or(0));
      completion.attempts = 1;
      tokens = addTokens(tokens, addTokens(completion.promptTokens, completion.completionTokens));
      return true;
    }
    error = entry ? entry->getString("error").value_or("a recorded failure").str() : "a malformed transcript entry";
    return false;
  }

private:
  std::vector<json::Value> entries;
  size_t next = 0;
};

class LLMPolicy : public Policy {
public:
  LLMPolicy(LLMPolicyOptions options, const PayloadFacts &facts, const HardwareProfile &profile, uint64_t seed)
      : options(std::move(options)), facts(facts), profile(profile) {
    std::string error;
    fallback = createPolicy("heuristic+evolve", facts, profile, seed, error);
    if (!this->options.replayPath.empty()) {
      std::string replayError;
      client = std::make_unique<ReplayClient>(this->options.client, this->options.replayPath, replayError);
      if (!replayError.empty())
        disable(replayError);
    } else {
      client = std::make_unique<LLMClient>(this->options.client);
    }
    // Few-shot before anything is measured: one schedule known to be valid for this payload.
    if (this->options.prompt == "compact")
      if (std::unique_ptr<Policy> heuristic = createPolicy("heuristic", facts, profile, seed, error))
        if (std::vector<Proposal> first = heuristic->propose({}, 1); !first.empty() && first[0].script.empty())
          example = first[0].schedule;
  }
  std::string name() const override { return options.hybrid ? "llm+evolve" : "llm"; }

  std::vector<Proposal> propose(llvm::ArrayRef<TrialRecord> history, int count) override {
    if (disabled)
      return fallback->propose(history, count);
    std::vector<Proposal> tuned;
    if (options.hybrid && count > 1)
      tuned = tuneParameters(history, count / 2);
    std::vector<Proposal> planned = askModel(history, count - static_cast<int>(tuned.size()), tuned);
    planned.insert(planned.end(), tuned.begin(), tuned.end());
    return planned;
  }

private:
  /// The built-in half of llm+evolve: parameter moves around the fastest schedules the model proposed.
  std::vector<Proposal> tuneParameters(llvm::ArrayRef<TrialRecord> history, int count) {
    std::vector<const TrialRecord *> plans;
    for (const TrialRecord &r : history)
      if (r.status == "correct" && r.timeMs > 0 && !r.schedule.empty() && llvm::StringRef(r.policy).starts_with("llm"))
        plans.push_back(&r);
    std::stable_sort(plans.begin(), plans.end(),
                     [](const TrialRecord *a, const TrialRecord *b) { return a->timeMs < b->timeMs; });
    if (plans.size() > 3)
      plans.resize(3);
    std::vector<Proposal> out;
    if (plans.empty())
      return out;
    std::seed_seq sequence{static_cast<uint64_t>(history.size()), uint64_t(17)};
    std::mt19937_64 rng(sequence);
    for (int attempt = 0; attempt < count * 20 && static_cast<int>(out.size()) < count; ++attempt) {
      const TrialRecord *parent = plans[attempt % plans.size()];
      std::string step;
      Schedule child = mutateParameters(parent->schedule, facts, profile, rng, step);
      std::string hash = scheduleHash(child);
      if (step.empty() || llvm::any_of(history, [&](const TrialRecord &r) { return r.hash == hash; }) ||
          llvm::any_of(out, [&](const Proposal &p) { return proposalHash(p) == hash; }))
        continue;
      Proposal p;
      p.schedule = child;
      p.policy = "llm+evolve";
      p.parentHash = parent->hash;
      p.step = "tune the model's plan #" + std::to_string(parent->id) + ": " + step;
      out.push_back(std::move(p));
    }
    return out;
  }

  std::vector<Proposal> askModel(llvm::ArrayRef<TrialRecord> history, int count, llvm::ArrayRef<Proposal> also) {
    // The built-in half's proposals count as tried: the model must not repeat them.
    std::vector<TrialRecord> seen(history.begin(), history.end());
    for (const Proposal &p : also) {
      TrialRecord r;
      r.hash = proposalHash(p);
      r.schedule = p.schedule;
      r.status = "pending";
      seen.push_back(r);
    }
    history = seen;
    bool compact = options.prompt == "compact";
    if (options.constrain)
      client->setResponseSchema(compact ? scheduleTextSchema(profile.target, count)
                                        : scheduleSchema(facts, profile.target, count));
    std::vector<ChatMessage> messages = {{"system", systemPrompt()},
                                         {"user", compact ? compactPrompt(history, count) : userPrompt(history, count)}};
    for (int round = 0; round <= options.repairRounds; ++round) {
      // A repair round at the first round's temperature gets the same reply back from a small model (measured);
      // each round samples hotter.
      client->setTemperature(options.client.temperature + options.repairHeat * round);
      Completion completion;
      std::string error;
      auto start = std::chrono::steady_clock::now();
      bool ok = client->complete(messages, completion, error);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!ok)
        record(messages, round, nullptr, error, seconds, {});
      if (!ok) {
        // The endpoint or the budget failed, not the model: say so and stop asking.
        std::string why;
        disable(client->budgetLeft(why) ? "the LLM request failed: " + error : why);
        return fallback->propose(history, count);
      }
      std::vector<Proposal> proposals;
      Outcome outcome;
      repairedInLastReply = 0;
      std::string problems = usable(completion.text, history, count, proposals, outcome.proposed);
      outcome.accepted = static_cast<int>(proposals.size());
      outcome.repaired = repairedInLastReply;
      outcome.problems = problems;
      record(messages, round, &completion, error, seconds, outcome);
      if (!proposals.empty()) {
        consecutiveFailures = 0;
        return proposals;
      }
      messages.push_back({"assistant", completion.text});
      messages.push_back({"user", "Your reply could not be used: " + problems +
                                      "\nReply again with only the JSON object described above, with schedules "
                                      "that are new and valid."});
    }
    if (++consecutiveFailures >= options.maxConsecutiveFailures)
      disable("the model gave no usable schedule " + std::to_string(consecutiveFailures) + " times in a row");
    else
      note("kforge-tune: the model gave no usable schedule after " + std::to_string(options.repairRounds) +
           " repair rounds; this batch comes from the built-in policy");
    return fallback->propose(history, count);
  }

  void note(const std::string &text) {
    if (options.note)
      options.note(text);
  }
  void disable(const std::string &why) {
    if (disabled)
      return;
    disabled = true;
    note("kforge-tune: " + why + "; continuing with the built-in policy (heuristic+evolve)");
  }

  std::string systemPrompt() const {
    if (options.prompt == "compact")
      return "You are the macro policy of kforge, a compiler that makes kernels fast. You choose schedules: "
             "ordered lists of kforge actions. kforge applies them, verifies the kernel against a reference and "
             "measures it; you only propose. Reply with one JSON object and nothing else.";
    return "You are the macro policy of kforge, a compiler that makes GPU kernels fast. You choose schedules: "
           "ordered lists of kforge actions. kforge applies them with MLIR's transform dialect, verifies the "
           "kernel against a reference and measures it; you only propose. Reply with one JSON object and "
           "nothing else.";
  }

  /// The trials of `history` measured correct, fastest first.
  static std::vector<const TrialRecord *> fastest(llvm::ArrayRef<TrialRecord> history) {
    std::vector<const TrialRecord *> measured;
    for (const TrialRecord &r : history)
      if (r.status == "correct" && r.timeMs > 0)
        measured.push_back(&r);
    std::stable_sort(measured.begin(), measured.end(),
                     [](const TrialRecord *a, const TrialRecord *b) { return a->timeMs < b->timeMs; });
    return measured;
  }

  /// The "compact" prompt: what a 1.5B model on two CPU cores can read in reasonable time (docs/perf/llm-cpu.md).
  std::string compactPrompt(llvm::ArrayRef<TrialRecord> history, int count) const {
    std::string out;
    llvm::raw_string_ostream os(out);
    os << "## Target\n" << llvm::formatv("{0:2}", toJSON(profile)) << "\n\n";
    // Comment lines carry nothing a schedule depends on, and cost tokens.
    std::string payload;
    for (llvm::StringRef rest = options.payloadText; !rest.empty();) {
      auto [line, tail] = rest.split('\n');
      rest = tail;
      if (!line.trim().empty() && !line.ltrim().starts_with("//"))
        payload += line.rtrim().str() + "\n";
    }
    bool truncated = payload.size() > 16000;
    payload.resize(std::min<size_t>(payload.size(), 16000));
    os << "## Payload (MLIR, linalg on tensors)\n```mlir\n" << payload << (truncated ? "// (truncated)\n" : "")
       << "```\n\n";
    json::Value factsJson = toJSON(facts);
    if (json::Object *o = factsJson.getAsObject())
      o->erase("structural_hash");
    os << "## What kforge knows about it\n" << factsJson << "\n\n";
    os << compactActions(profile.target) << "\n";

    // Few-shot: schedules known to be valid for this payload, as JSON, from the run's own database.
    std::vector<const TrialRecord *> measured = fastest(history);
    const TrialRecord *first = measured.empty() || measured[0]->schedule.empty() ? nullptr : measured[0];
    const TrialRecord *second = nullptr;
    for (size_t i = 1; first && i < measured.size() && !second; ++i)
      if (!measured[i]->schedule.empty() && describe(measured[i]->schedule) != describe(first->schedule))
        second = measured[i];
    if (first && second) {
      os << "## Two good schedules to combine\n";
      for (const TrialRecord *r : {first, second})
        os << llvm::formatv("Trial {0} ({1:F4} ms): ", r->id, r->timeMs) << describe(r->schedule) << "\n";
      os << "At least one of your schedules should combine what makes each of these fast.\n\n";
    } else if (first) {
      os << "## The fastest schedule so far\n"
         << llvm::formatv("Trial {0} ({1:F4} ms): ", first->id, first->timeMs) << describe(first->schedule) << "\n\n";
    } else if (!example.empty()) {
      os << "## A valid schedule for this payload (kforge's first guess, not measured yet)\n"
         << describe(example) << "\n\n";
    }

    os << "## History of this run\n";
    if (history.empty())
      os << "(nothing tried yet)\n";
    auto row = [&](const TrialRecord *r) {
      os << "| " << r->id << " | " << r->status << " | "
         << (r->timeMs > 0 ? llvm::formatv("{0:F4}", r->timeMs).str() : std::string("-")) << " | "
         << (r->description.empty() ? describe(r->schedule) : r->description) << " | " << r->reason.substr(0, 120)
         << " |\n";
    };
    const char *header = "| trial | status | time (ms) | schedule | reason |\n|---|---|---|---|---|\n";
    if (!measured.empty()) {
      os << "Fastest so far:\n" << header;
      for (size_t i = 0; i < measured.size() && i < 5; ++i)
        row(measured[i]);
    }
    if (!history.empty()) {
      os << "Latest trials:\n" << header;
      for (size_t i = history.size() > 5 ? history.size() - 5 : 0; i < history.size(); ++i)
        row(&history[i]);
    }
    os << "\n## Task\nPropose up to " << count
       << " new schedules (not in the history) likely to be faster than the fastest so far. Use only the actions "
          "above, in their order, with parameter values from their lists. Write each schedule in one line as in "
          "the history, e.g. tile(block, 64x64); fuse(block); tile(reduction, 8); vectorize. Reply with only this "
          "JSON object:\n"
          "{\"schedules\": [{\"schedule\": \"...\", \"why\": \"a few words\"}, ...]}\n";
    return out;
  }

  std::string userPrompt(llvm::ArrayRef<TrialRecord> history, int count) const {
    std::string out;
    llvm::raw_string_ostream os(out);
    os << "## Target\n" << llvm::formatv("{0:2}", toJSON(profile)) << "\n\n";
    std::string payload = options.payloadText.substr(0, 16000);
    os << "## Payload (MLIR, linalg on tensors)\n```mlir\n" << payload
       << (options.payloadText.size() > payload.size() ? "\n// (truncated)" : "") << "\n```\n\n";
    os << "## What kforge knows about it\n" << llvm::formatv("{0:2}", toJSON(facts)) << "\n\n";
    os << actionsMarkdown() << "\n";
    os << "## History of this run\n";
    std::vector<const TrialRecord *> measured, latest;
    for (const TrialRecord &r : history)
      if (r.status == "correct" && r.timeMs > 0)
        measured.push_back(&r);
    std::stable_sort(measured.begin(), measured.end(),
                     [](const TrialRecord *a, const TrialRecord *b) { return a->timeMs < b->timeMs; });
    for (size_t i = history.size() > 10 ? history.size() - 10 : 0; i < history.size(); ++i)
      latest.push_back(&history[i]);
    if (history.empty())
      os << "(nothing tried yet)\n";
    auto row = [&](const TrialRecord *r) {
      os << "| " << r->id << " | " << r->status << " | "
         << (r->timeMs > 0 ? llvm::formatv("{0:F4}", r->timeMs).str() : std::string("-")) << " | "
         << (r->description.empty() ? describe(r->schedule) : r->description) << " | " << r->reason.substr(0, 200)
         << " |\n";
    };
    if (!measured.empty()) {
      os << "Fastest so far:\n| trial | status | time (ms) | schedule | reason |\n|---|---|---|---|---|\n";
      for (size_t i = 0; i < measured.size() && i < 10; ++i)
        row(measured[i]);
    }
    if (!latest.empty()) {
      os << "Latest trials:\n| trial | status | time (ms) | schedule | reason |\n|---|---|---|---|---|\n";
      for (const TrialRecord *r : latest)
        row(r);
    }
    // Crossover prompting: the two fastest schedules with different actions, to be combined.
    const TrialRecord *first = measured.empty() ? nullptr : measured[0], *second = nullptr;
    for (size_t i = 1; first && i < measured.size() && !second; ++i)
      if (!measured[i]->schedule.empty() && !first->schedule.empty() &&
          describe(measured[i]->schedule) != describe(first->schedule))
        second = measured[i];
    if (first && second && !first->schedule.empty()) {
      os << "\n## Two good schedules to combine\n";
      for (const TrialRecord *r : {first, second})
        os << llvm::formatv("Trial {0} ({1:F4} ms): ", r->id, r->timeMs) << json::Value(toJSON(r->schedule)) << "\n";
      os << "At least one of your schedules should combine what makes each of these fast.\n";
    }
    os << "\n## Task\nPropose up to " << count
       << " new schedules (not in the history) likely to be faster than the fastest so far. Reply with one "
          "JSON object:\n"
          "{\"schedules\": [{\"why\": \"one sentence\", \"actions\": [{\"kind\": \"tile\", \"params\": "
          "{\"level\": \"block\", \"sizes\": [64, 64]}}, ...]}, ...]}\n"
          "If the actions cannot express the schedule you want, reply instead with one complete transform "
          "library in a ```mlir block: a module with transform.with_named_sequence whose "
          "@__transform_main(%module: !transform.any_op {transform.consumed}) schedules the payload, "
          "bufferizes it and (on the GPU) maps it to blocks and threads.\n";
    return out;
  }

  /// Parses and validates the reply; fills `proposals` with the new, valid schedules, or returns why not.
  /// Drops the actions `problems` names from `actions` (a JSON list, or an object holding one) until the rest
  /// validates, at most 3 times; returns the dropped actions' text and fills `schedule`, or nullopt.
  std::optional<std::string> dropFaultyActions(json::Value actions, std::vector<Problem> problems, Schedule &schedule,
                                               std::string &dropped) {
    if (json::Object *o = actions.getAsObject())
      if (json::Value *inner = o->get("actions"))
        actions = *inner;
    std::vector<std::string> names;
    for (int attempt = 0; attempt < 3; ++attempt) {
      json::Array *list = actions.getAsArray();
      if (!list)
        return std::nullopt;
      std::vector<bool> drop(list->size(), false);
      bool any = false;
      for (const Problem &p : problems) {
        if (p.action < 0 || static_cast<size_t>(p.action) >= list->size() ||
            (p.code != "precondition" && p.code != "order" && p.code != "bad-param" && p.code != "out-of-domain" &&
             p.code != "shape" && p.code != "target"))
          return std::nullopt; // a problem of the whole schedule: nothing to drop
        any = !drop[p.action] || any;
        drop[p.action] = true;
      }
      if (!any)
        return std::nullopt;
      json::Array kept;
      for (size_t i = 0; i < list->size(); ++i) {
        if (!drop[i]) {
          kept.push_back((*list)[i]);
          continue;
        }
        const json::Object *a = (*list)[i].getAsObject();
        names.push_back(a && a->getString("kind") ? a->getString("kind")->str() : "an action");
      }
      if (kept.empty())
        return std::nullopt;
      actions = json::Value(std::move(kept));
      schedule.clear();
      problems = checkSchedule(actions, facts, profile.target, schedule);
      if (problems.empty()) {
        dropped = llvm::join(names, ", ");
        return dropped;
      }
    }
    return std::nullopt;
  }

  /// What became of one reply, for the transcript.
  struct Outcome {
    int proposed = 0, accepted = 0; ///< Schedules (or a script) in the reply; those new and valid.
    int repaired = 0;               ///< Of the accepted, those kforge made valid by dropping actions.
    std::string problems;           ///< Why the others were rejected ("" when none were).
  };

  std::string usable(const std::string &reply, llvm::ArrayRef<TrialRecord> history, int count,
                     std::vector<Proposal> &proposals, int &proposed) {
    std::vector<json::Value> schedules;
    std::vector<std::string> whys;
    std::string error;
    if (std::string script = extractScript(reply); !script.empty()) {
      Proposal p;
      p.script = script;
      p.policy = "llm";
      p.step = "llm: transform script";
      std::string hash = proposalHash(p);
      proposed = 1;
      if (llvm::any_of(history, [&](const TrialRecord &r) { return r.hash == hash; }))
        return "this transform script was tried before";
      if (options.checkScript)
        if (std::string problems = options.checkScript(script); !problems.empty())
          return problems;
      proposals.push_back(std::move(p));
      return "";
    }
    if (!extractSchedules(reply, schedules, whys, error))
      return error;
    proposed = static_cast<int>(schedules.size());
    // A reply of thousands of schedules costs no more than a reasonable one: a bounded number is checked, and a
    // bounded number of rejections goes back to the model.
    const size_t maxChecked = 64, maxReported = 16;
    json::Array rejected;
    for (size_t i = 0; i < schedules.size() && i < maxChecked && static_cast<int>(proposals.size()) < count; ++i) {
      Schedule schedule;
      std::vector<Problem> problems;
      json::Value actions = schedules[i];
      if (std::optional<llvm::StringRef> text = schedules[i].getAsString()) {
        std::string textError;
        if (!scheduleFromText(*text, actions, textError))
          problems.push_back({-1, "bad-text", textError});
      }
      if (problems.empty())
        problems = checkSchedule(actions, facts, profile.target, schedule);
      // kforge's own repair: drop the actions the validator names and keep the rest when it is valid. A small
      // model repeats a rejected reply nearly verbatim in a repair round (measured: docs/perf/llm-cpu.md), and
      // a round costs minutes on a CPU; the trial's step says what was dropped.
      std::string dropped;
      if (!problems.empty() && options.localRepair) {
        std::vector<Problem> original = problems;
        if (std::optional<std::string> kept = dropFaultyActions(actions, problems, schedule, dropped)) {
          problems.clear();
        } else {
          problems = original;
          dropped.clear();
        }
      }
      std::string hash = problems.empty() ? scheduleHash(schedule) : "";
      bool tried = !hash.empty() && (llvm::any_of(history, [&](const TrialRecord &r) { return r.hash == hash; }) ||
                                     llvm::any_of(proposals, [&](const Proposal &p) {
                                       return proposalHash(p) == hash;
                                     }));
      if (tried)
        problems.push_back({-1, "repeated", "this schedule was tried before"});
      if (!problems.empty()) {
        if (rejected.size() >= maxReported)
          continue;
        json::Array list;
        for (const Problem &p : problems)
          list.push_back(toJSON(p));
        rejected.push_back(json::Object{{"schedule", static_cast<int64_t>(i)}, {"problems", std::move(list)}});
        continue;
      }
      Proposal p;
      p.schedule = schedule;
      p.policy = "llm";
      // The model's words reach the terminal, the database and the report: printable text only.
      p.step = "llm: " + printableText(whys[i], 200);
      if (!dropped.empty()) {
        p.step = "llm, repaired by kforge (dropped " + dropped + "): " + printableText(whys[i], 150);
        ++repairedInLastReply;
      }
      proposals.push_back(std::move(p));
    }
    if (rejected.empty())
      return "";
    std::string text;
    llvm::raw_string_ostream os(text);
    os << json::Value(std::move(rejected));
    return (proposals.empty() ? "every proposed schedule was rejected: " : "some proposed schedules were rejected: ") +
           text;
  }

  void record(const std::vector<ChatMessage> &messages, int round, const Completion *completion,
              const std::string &error, double seconds, const Outcome &outcome) {
    if (options.transcriptPath.empty())
      return;
    json::Array list;
    for (const ChatMessage &m : messages)
      list.push_back(json::Object{{"role", m.role}, {"content", m.content}});
    const LLMConfig &c = client->config();
    json::Object entry{{"round", round},
                       {"time", static_cast<int64_t>(std::time(nullptr))},
                       {"request", json::Object{{"api", c.api},
                                                {"endpoint", c.endpoint},
                                                {"model", c.model},
                                                {"prompt", options.prompt},
                                                {"constrained", !c.responseSchema.empty()},
                                                {"messages", std::move(list)}}},
                       {"requests_so_far", client->requestsMade()},
                       {"tokens_so_far", client->tokensUsed()},
                       {"cost_dollars_so_far", client->costDollars()}};
    entry["seconds"] = std::round(seconds * 1000) / 1000;
    if (completion)
      entry["outcome"] = json::Object{{"proposed", outcome.proposed},
                                      {"accepted", outcome.accepted},
                                      {"repaired", outcome.repaired},
                                      {"problems", outcome.problems.substr(0, 2000)}};
    if (completion)
      entry["response"] = json::Object{{"text", completion->text},
                                       {"prompt_tokens", completion->promptTokens},
                                       {"completion_tokens", completion->completionTokens},
                                       {"attempts", completion->attempts}};
    else
      entry["error"] = error;
    std::string line;
    llvm::raw_string_ostream os(line);
    os << json::Value(std::move(entry)) << "\n";
    std::error_code ec;
    llvm::raw_fd_ostream out(options.transcriptPath, ec, llvm::sys::fs::OF_Append);
    if (!ec)
      out << line;
  }

  LLMPolicyOptions options;
  PayloadFacts facts;
  HardwareProfile profile;
  std::unique_ptr<LLMClient> client;
  std::unique_ptr<Policy> fallback;
  bool disabled = false;
  int consecutiveFailures = 0;
  Schedule example; ///< The heuristic's first guess, shown before anything is measured (compact prompt).
  int repairedInLastReply = 0;
};

} // namespace

std::unique_ptr<Policy> kforge::tune::createLLMPolicy(LLMPolicyOptions options, const PayloadFacts &facts,
                                                      const HardwareProfile &profile, uint64_t seed) {
  return std::make_unique<LLMPolicy>(std::move(options), facts, profile, seed);
}
