//===- LLMFormats.cpp - what the model reads and writes: actions, schemas, replies ===//
//
// The LLM policy's text formats, apart from the policy itself (LLMPolicy.cpp): the target's actions in the
// compact prompt, the JSON schema and the one-line schedule form a reply is constrained to, and the parsing of
// a reply (JSON schedules, one-line schedules, a transform script). A reply is hostile input: every function
// here bounds what it reads and reports what it could not use.
//
//===----------------------------------------------------------------------===//

#include "LLMPolicy.h"

#include "JsonLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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

/// The reply's JSON schema: {"schedules": [1 .. count of `schedule`]}, nothing else, as text.
static std::string schedulesSchema(json::Object schedule, int count) {
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
  return schedulesSchema(std::move(schedule), count);
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
  return schedulesSchema(std::move(schedule), count);
}
