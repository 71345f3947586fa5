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
      if (o->getString("schedule") && !o->get("actions"))
        schedules.push_back(*o->get("schedule"));
      else
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
    } else if (o->get("actions") || o->getString("schedule")) {
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

/// The actions of the registry `target` accepts.
static std::vector<const ActionSpec *> targetActions(llvm::StringRef target) {
  std::vector<const ActionSpec *> out;
  for (const ActionSpec &spec : actionRegistry())
    if (llvm::is_contained(spec.targets, target))
      out.push_back(&spec);
  return out;
}

/// The slots (kind, and level for a kind with an enum parameter) of `target`'s actions in canonical order.
static std::vector<Action> targetSlots(llvm::StringRef target) {
  std::vector<Action> slots;
  for (const ActionSpec *spec : targetActions(target)) {
    const ParamSpec *level = nullptr;
    for (const ParamSpec &p : spec->params)
      if (p.type == ParamType::Enum)
        level = &p;
    if (!level) {
      slots.push_back({spec->kind, "", {}, 0});
      continue;
    }
    for (const std::string &choice : level->choices)
      slots.push_back({spec->kind, choice, {}, 0});
  }
  std::stable_sort(slots.begin(), slots.end(),
                   [](const Action &a, const Action &b) { return actionPhase(a) < actionPhase(b); });
  return slots;
}

/// Up to the end of the first sentence of `text`.
static std::string firstSentence(llvm::StringRef text) {
  size_t end = text.find(". ");
  return (end == llvm::StringRef::npos ? text : text.take_front(end + 1)).str();
}

std::string kforge::tune::compactActions(llvm::StringRef target) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "## Actions (target " << target << ")\n"
     << "A schedule is a list of actions, written kind(parameters) and separated by \"; \". Each slot appears at "
        "most once, in this order: ";
  std::vector<Action> slots = targetSlots(target);
  for (size_t i = 0; i < slots.size(); ++i)
    os << (i ? ", " : "") << slots[i].kind << (slots[i].level.empty() ? "" : "(" + slots[i].level + ")");
  os << ". The root is the op producing the returned value; block and thread tiles cut its parallel loops (one "
        "size per loop, 0 = the whole loop).\n";
  for (const ActionSpec *spec : targetActions(target)) {
    std::vector<std::string> names;
    for (const ParamSpec &p : spec->params)
      names.push_back(p.name);
    os << "- " << spec->kind << (names.empty() ? "" : "(" + llvm::join(names, ", ") + ")") << ": "
       << firstSentence(spec->summary) << " Requires: " << spec->requires_ << ".";
    for (const ParamSpec &p : spec->params) {
      os << " " << p.name << ": " << p.doc << "; ";
      if (p.type == ParamType::Enum)
        os << "one of " << llvm::join(p.choices, ", ");
      else {
        std::vector<std::string> values;
        for (int64_t v : p.values)
          values.push_back(std::to_string(v));
        if (p.type == ParamType::IntList)
          os << "values joined by \"" << p.listSeparator << "\", each one of ";
        else
          os << "one of ";
        os << llvm::join(values, ", ");
      }
      os << ".";
    }
    os << "\n";
  }
  return out;
}

std::string kforge::tune::scheduleSchema(const PayloadFacts &facts, llvm::StringRef target, int count) {
  auto enumOf = [](const ParamSpec &p) {
    json::Array values;
    if (p.type == ParamType::Enum)
      for (const std::string &c : p.choices)
        values.push_back(c);
    else
      for (int64_t v : p.values)
        values.push_back(v);
    return values;
  };
  // A list parameter holds one value per loop (tile sizes, reorder's permutation) or one (a reduction tile).
  int64_t maxList = std::max<int64_t>({1, static_cast<int64_t>(facts.parallelSizes.size()), facts.rootLoops});
  json::Array kinds;
  for (const ActionSpec *spec : targetActions(target)) {
    json::Object properties;
    json::Array required;
    for (const ParamSpec &p : spec->params) {
      required.push_back(p.name);
      if (p.type == ParamType::IntList)
        properties[p.name] = json::Object{{"type", "array"},
                                          {"items", json::Object{{"enum", enumOf(p)}}},
                                          {"minItems", 1},
                                          {"maxItems", maxList}};
      else
        properties[p.name] = json::Object{{"enum", enumOf(p)}};
    }
    kinds.push_back(json::Object{
        {"type", "object"},
        {"properties", json::Object{{"kind", json::Object{{"const", spec->kind}}},
                                    {"params", json::Object{{"type", "object"},
                                                            {"properties", std::move(properties)},
                                                            {"required", std::move(required)},
                                                            {"additionalProperties", false}}}}},
        {"required", json::Array{"kind", "params"}},
        {"additionalProperties", false}});
  }
  json::Object schedule{
      {"type", "object"},
      {"properties", json::Object{{"why", json::Object{{"type", "string"}, {"maxLength", 160}}},
                                  {"actions", json::Object{{"type", "array"},
                                                           {"items", json::Object{{"anyOf", std::move(kinds)}}},
                                                           {"minItems", 1},
                                                           {"maxItems", static_cast<int64_t>(targetSlots(target).size())}}}}},
      {"required", json::Array{"why", "actions"}},
      {"additionalProperties", false}};
  json::Object root{{"type", "object"},
                    {"properties", json::Object{{"schedules", json::Object{{"type", "array"},
                                                                           {"items", std::move(schedule)},
                                                                           {"minItems", 1},
                                                                           {"maxItems", std::max(1, count)}}}}},
                    {"required", json::Array{"schedules"}},
                    {"additionalProperties", false}};
  std::string out;
  llvm::raw_string_ostream os(out);
  os << json::Value(std::move(root));
  return out;
}

bool kforge::tune::scheduleFromText(llvm::StringRef text, json::Value &actions, std::string &error) {
  json::Array list;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ';', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (item.empty())
      continue;
    auto [kind, rest] = item.split('(');
    kind = kind.trim();
    const ActionSpec *spec = findAction(kind);
    json::Object params;
    if (!spec) {
      list.push_back(json::Object{{"kind", kind}, {"params", json::Object{}}}); // the registry names it
      continue;
    }
    llvm::SmallVector<llvm::StringRef> args;
    if (!rest.empty()) {
      if (!rest.rtrim().ends_with(")")) {
        error = "'" + item.str() + "' has no closing parenthesis";
        return false;
      }
      rest.rtrim().drop_back().split(args, ',', -1, /*KeepEmpty=*/false);
    }
    size_t next = 0;
    auto integer = [&](llvm::StringRef word, int64_t &value) {
      if (word.trim().getAsInteger(10, value)) {
        error = "'" + item.str() + "': '" + word.trim().str() + "' is not an integer";
        return false;
      }
      return true;
    };
    for (const ParamSpec &p : spec->params) {
      if (next >= args.size()) {
        error = "'" + item.str() + "' lacks its parameter " + p.name;
        return false;
      }
      if (p.type == ParamType::Enum) {
        params[p.name] = args[next++].trim();
        continue;
      }
      if (p.type == ParamType::Int) {
        int64_t value;
        if (!integer(args[next++], value))
          return false;
        params[p.name] = value;
        continue;
      }
      // A list: "64x64" in one argument, or (separator ",") the remaining arguments.
      llvm::SmallVector<llvm::StringRef> words;
      if (p.listSeparator == ",")
        words.assign(args.begin() + next, args.end()), next = args.size();
      else
        args[next++].split(words, p.listSeparator, -1, /*KeepEmpty=*/false);
      json::Array values;
      for (llvm::StringRef word : words) {
        int64_t value;
        if (!integer(word, value))
          return false;
        values.push_back(value);
      }
      params[p.name] = std::move(values);
    }
    if (next < args.size()) {
      error = "'" + item.str() + "' has more parameters than " + spec->kind + " takes";
      return false;
    }
    list.push_back(json::Object{{"kind", spec->kind}, {"params", std::move(params)}});
  }
  if (list.empty()) {
    error = "the schedule '" + text.str() + "' holds no action";
    return false;
  }
  actions = std::move(list);
  return true;
}

std::string kforge::tune::scheduleTextSchema(llvm::StringRef target, int count) {
  std::vector<std::string> kinds;
  for (const ActionSpec *spec : targetActions(target))
    kinds.push_back(spec->kind);
  std::string item = "(" + llvm::join(kinds, "|") + ")(\\([a-z0-9, ]+\\))?";
  json::Object schedule{
      {"type", "object"},
      {"properties", json::Object{{"why", json::Object{{"type", "string"}, {"maxLength", 100}}},
                                  {"schedule", json::Object{{"type", "string"}, {"pattern", "^" + item + "(; " + item + ")*$"}}}}},
      {"required", json::Array{"why", "schedule"}},
      {"additionalProperties", false}};
  json::Object root{{"type", "object"},
                    {"properties", json::Object{{"schedules", json::Object{{"type", "array"},
                                                                           {"items", std::move(schedule)},
                                                                           {"minItems", 1},
                                                                           {"maxItems", std::max(1, count)}}}}},
                    {"required", json::Array{"schedules"}},
                    {"additionalProperties", false}};
  std::string out;
  llvm::raw_string_ostream os(out);
  os << json::Value(std::move(root));
  return out;
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
