//===- LLMPolicy.cpp - an LLM proposes schedules; kforge checks and measures ===//

#include "LLMPolicy.h"

#include "JsonLimits.h"
#include "Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <ctime>

using namespace kforge::tune;
namespace json = llvm::json;

bool kforge::tune::extractSchedules(const std::string &reply, std::vector<json::Value> &schedules,
                                    std::vector<std::string> &whys, std::string &error) {
  std::string text = reply;
  size_t fence = reply.find("```json");
  if (fence != std::string::npos) {
    size_t start = reply.find('\n', fence);
    size_t end = start == std::string::npos ? std::string::npos : reply.find("```", start);
    if (end != std::string::npos)
      text = reply.substr(start + 1, end - start - 1);
  } else {
    size_t first = reply.find_first_of("{["), last = reply.find_last_of("}]");
    if (first == std::string::npos || last == std::string::npos || last < first) {
      error = "the reply holds no JSON";
      return false;
    }
    text = reply.substr(first, last - first + 1);
  }
  // llvm::json::parse recurses per level: 60,000 '[' would overflow the stack.
  if (!jsonDepthWithin(text, kMaxReplyJsonDepth)) {
    error = "the reply's JSON nests deeper than " + std::to_string(kMaxReplyJsonDepth) + " levels";
    return false;
  }
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value) {
    error = "the reply's JSON does not parse: " + llvm::toString(value.takeError());
    return false;
  }
  auto addOne = [&](const json::Value &v) {
    if (const json::Object *o = v.getAsObject()) {
      whys.push_back(o->getString("why").value_or("").str());
      schedules.push_back(o->get("actions") ? *o->get("actions") : v);
      return;
    }
    whys.push_back("");
    schedules.push_back(v);
  };
  if (const json::Object *o = value->getAsObject()) {
    if (const json::Array *list = o->getArray("schedules")) {
      for (const json::Value &v : *list)
        addOne(v);
    } else if (o->get("actions")) {
      addOne(*value);
    } else {
      error = "the reply's JSON has neither \"schedules\" nor \"actions\"";
      return false;
    }
  } else if (value->getAsArray()) {
    addOne(*value);
  }
  if (schedules.empty()) {
    error = "the reply proposes no schedule";
    return false;
  }
  return true;
}

std::string kforge::tune::extractScript(const std::string &reply) {
  size_t fence = reply.find("```mlir");
  if (fence == std::string::npos)
    return "";
  size_t start = reply.find('\n', fence);
  size_t end = start == std::string::npos ? std::string::npos : reply.find("```", start);
  if (end == std::string::npos)
    return "";
  std::string script = reply.substr(start + 1, end - start - 1);
  return script.find("@__transform_main") == std::string::npos ? "" : script;
}

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
    std::vector<ChatMessage> messages = {{"system", systemPrompt()}, {"user", userPrompt(history, count)}};
    for (int round = 0; round <= options.repairRounds; ++round) {
      Completion completion;
      std::string error;
      bool ok = client->complete(messages, completion, error);
      record(messages, round, ok ? &completion : nullptr, error);
      if (!ok) {
        // The endpoint or the budget failed, not the model: say so and stop asking.
        std::string why;
        disable(client->budgetLeft(why) ? "the LLM request failed: " + error : why);
        return fallback->propose(history, count);
      }
      std::vector<Proposal> proposals;
      std::string problems = usable(completion.text, history, count, proposals);
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
    return "You are the macro policy of kforge, a compiler that makes GPU kernels fast. You choose schedules: "
           "ordered lists of kforge actions. kforge applies them with MLIR's transform dialect, verifies the "
           "kernel against a reference and measures it; you only propose. Reply with one JSON object and "
           "nothing else.";
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
  std::string usable(const std::string &reply, llvm::ArrayRef<TrialRecord> history, int count,
                     std::vector<Proposal> &proposals) {
    std::vector<json::Value> schedules;
    std::vector<std::string> whys;
    std::string error;
    if (std::string script = extractScript(reply); !script.empty()) {
      Proposal p;
      p.script = script;
      p.policy = "llm";
      p.step = "llm: transform script";
      std::string hash = proposalHash(p);
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
    // A reply of thousands of schedules costs no more than a reasonable one: a bounded number is checked, and a
    // bounded number of rejections goes back to the model.
    const size_t maxChecked = 64, maxReported = 16;
    json::Array rejected;
    for (size_t i = 0; i < schedules.size() && i < maxChecked && static_cast<int>(proposals.size()) < count; ++i) {
      Schedule schedule;
      std::vector<Problem> problems = checkSchedule(schedules[i], facts, profile.target, schedule);
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
      proposals.push_back(std::move(p));
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << json::Value(std::move(rejected));
    return "every proposed schedule was rejected: " + text;
  }

  void record(const std::vector<ChatMessage> &messages, int round, const Completion *completion,
              const std::string &error) {
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
                                                {"messages", std::move(list)}}},
                       {"requests_so_far", client->requestsMade()},
                       {"tokens_so_far", client->tokensUsed()},
                       {"cost_dollars_so_far", client->costDollars()}};
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
};

} // namespace

std::unique_ptr<Policy> kforge::tune::createLLMPolicy(LLMPolicyOptions options, const PayloadFacts &facts,
                                                      const HardwareProfile &profile, uint64_t seed) {
  return std::make_unique<LLMPolicy>(std::move(options), facts, profile, seed);
}
