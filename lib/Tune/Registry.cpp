//===- Registry.cpp - the action registry: parse, validate, describe -------===//
//
// The registry is the list of every family's definitions. Everything here is a loop over it: parsing an
// action's parameters by their specs, the checks every action gets (target, domain, canonical order) before its
// definition's own, the text of an action, docs/actions.md.
//
//===----------------------------------------------------------------------===//

#include "ActionDefinition.h"
#include "Renderer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace kforge::tune;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Definitions
//===----------------------------------------------------------------------===//

llvm::ArrayRef<std::unique_ptr<ActionDefinition>> kforge::tune::actionDefinitions() {
  static const ActionDefinitions definitions = [] {
    ActionDefinitions all;
    addKernelSplitActions(all);
    addTilingActions(all);
    addRowActions(all);
    addTensorCoreActions(all);
    addKernelActions(all);
    return all;
  }();
  return definitions;
}

const ActionDefinition *kforge::tune::findDefinition(StringRef kind) {
  for (const auto &definition : actionDefinitions())
    if (definition->kind() == kind)
      return definition.get();
  return nullptr;
}

const ActionDefinition &kforge::tune::definitionOf(const Action &action) {
  const ActionDefinition *definition = findDefinition(action.kind);
  if (!definition)
    llvm::report_fatal_error("kforge: an action of unknown kind '" + llvm::Twine(action.kind) +
                             "' reached the renderer or a policy (validate schedules first)");
  return *definition;
}

llvm::ArrayRef<ActionSpec> kforge::tune::actionRegistry() {
  static const std::vector<ActionSpec> specs = [] {
    std::vector<ActionSpec> all;
    for (const auto &definition : actionDefinitions())
      all.push_back(definition->spec);
    return all;
  }();
  return specs;
}

const ActionSpec *kforge::tune::findAction(StringRef kind) {
  const ActionDefinition *definition = findDefinition(kind);
  return definition ? &definition->spec : nullptr;
}

/// A count of rows or blocks: the registry's values, or any count from 1 to 65536.
std::optional<std::string> kforge::tune::countOutOfDomain(const ActionDefinition &definition, int64_t value) {
  const ParamSpec &param = *definition.intParam();
  if (llvm::is_contained(param.values, value) || (value >= 1 && value <= 65536))
    return std::nullopt;
  return definition.spec.kind + "." + param.name + " is " + std::to_string(value) + ", expected one of " +
         joinInts(param.values, ", ") + " (or any count from 1 to 65536)";
}

int ActionDefinition::phase(const Action &action) const {
  for (const Slot &slot : slots)
    if (slot.level == action.level)
      return slot.phase;
  return 90;
}

const ParamSpec *ActionDefinition::intParam() const {
  return spec.params.size() == 1 && spec.params[0].type == ParamType::Int ? &spec.params[0] : nullptr;
}

std::optional<std::string> ActionDefinition::outOfDomain(int64_t value) const {
  const ParamSpec *param = intParam();
  if (!param || llvm::is_contained(param->values, value))
    return std::nullopt;
  return spec.kind + "." + param->name + " is " + std::to_string(value) + ", expected one of " +
         joinInts(param->values, ", ");
}

void ActionDefinition::checkDomain(const ValidationContext &context) const {
  if (intParam())
    if (std::optional<std::string> why = outOfDomain(context.action().value))
      context.problem("out-of-domain", *why);
}

std::vector<int64_t> ActionDefinition::searchValues(const PayloadFacts &facts) const {
  const ParamSpec *param = intParam();
  return param ? param->values : std::vector<int64_t>{};
}

bool kforge::tune::actsOnKernel(const Action &action) {
  const ActionDefinition *definition = findDefinition(action.kind);
  return definition && definition->actsOnKernel();
}

int kforge::tune::actionPhase(const Action &action) {
  const ActionDefinition *definition = findDefinition(action.kind);
  return definition ? definition->phase(action) : 90;
}

std::string kforge::tune::canonicalOrderText(bool withSplits) {
  std::vector<std::pair<int, std::string>> slots;
  for (const auto &definition : actionDefinitions()) {
    if (definition->splitsKernels() && !withSplits)
      continue;
    for (const Slot &slot : definition->slots)
      slots.push_back(
          {slot.phase, slot.level.empty() ? definition->spec.kind : definition->spec.kind + "(" + slot.level + ")"});
  }
  std::stable_sort(slots.begin(), slots.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (const auto &slot : slots)
    names.push_back(slot.second);
  return joinStrings(names, ", ");
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::string kforge::tune::joinStrings(llvm::ArrayRef<std::string> items, StringRef separator) {
  std::string out;
  for (auto [i, item] : llvm::enumerate(items))
    out += (i ? separator.str() : "") + item;
  return out;
}

std::string kforge::tune::joinInts(llvm::ArrayRef<int64_t> values, StringRef separator) {
  std::vector<std::string> items;
  for (int64_t v : values)
    items.push_back(std::to_string(v));
  return joinStrings(items, separator);
}

bool ValidationContext::before(StringRef kind, StringRef level) const {
  for (size_t j = 0; j < index; ++j)
    if (schedule[j].kind == kind && schedule[j].level == level)
      return true;
  return false;
}

void ValidationContext::problem(StringRef code, const llvm::Twine &message) const {
  problems.push_back({static_cast<int>(index), code.str(), message.str()});
}

void ValidationContext::problemAt(int at, StringRef code, const llvm::Twine &message) const {
  problems.push_back({at, code.str(), message.str()});
}

//===----------------------------------------------------------------------===//
// JSON and text
//===----------------------------------------------------------------------===//

llvm::json::Value kforge::tune::toJSON(const Problem &problem) {
  llvm::json::Object object{{"code", problem.code}, {"message", problem.message}};
  object["action"] = problem.action >= 0 ? llvm::json::Value(problem.action) : llvm::json::Value(nullptr);
  return object;
}

llvm::json::Value kforge::tune::toJSON(const Action &action) {
  llvm::json::Object params;
  if (const ActionSpec *spec = findAction(action.kind))
    for (const ParamSpec &param : spec->params) {
      if (param.type == ParamType::Enum)
        params[param.name] = action.level;
      else if (param.type == ParamType::IntList)
        params[param.name] = llvm::json::Array(action.sizes);
      else
        params[param.name] = action.value;
    }
  return llvm::json::Object{{"kind", action.kind}, {"params", std::move(params)}};
}

llvm::json::Value kforge::tune::toJSON(const Schedule &schedule) {
  llvm::json::Array array;
  for (const Action &action : schedule)
    array.push_back(toJSON(action));
  return array;
}

std::string kforge::tune::describe(const Action &action) {
  const ActionSpec *spec = findAction(action.kind);
  if (!spec)
    return action.kind;
  std::vector<std::string> parts;
  for (const ParamSpec &param : spec->params) {
    if (param.type == ParamType::Enum)
      parts.push_back(action.level);
    else if (param.type == ParamType::IntList)
      parts.push_back(joinInts(action.sizes, param.listSeparator));
    else
      parts.push_back(std::to_string(action.value));
  }
  return parts.empty() ? action.kind : action.kind + "(" + joinStrings(parts, ", ") + ")";
}

std::string kforge::tune::describe(const Schedule &schedule) {
  if (schedule.empty())
    return "(none)";
  std::vector<std::string> items;
  for (const Action &action : schedule)
    items.push_back(describe(action));
  return joinStrings(items, "; ");
}

std::string kforge::tune::scheduleHash(const Schedule &schedule) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(schedule);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(text));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

/// Reads one parameter into its field of the action (Enum: level, IntList: sizes, Int: value).
static void parseParam(const ParamSpec &param, const llvm::json::Value &v, const ActionDefinition &definition,
                       Action &action, llvm::function_ref<void(StringRef, const llvm::Twine &)> problem) {
  const std::string where = action.kind + "." + param.name;
  switch (param.type) {
  case ParamType::Enum: {
    std::optional<StringRef> s = v.getAsString();
    if (!s)
      return problem("bad-param", where + " must be a string");
    if (!llvm::is_contained(param.choices, *s))
      return problem("out-of-domain", where + " is '" + *s + "', expected one of " + joinStrings(param.choices, ", "));
    action.level = s->str();
    return;
  }
  case ParamType::Int: {
    std::optional<int64_t> n = v.getAsInteger();
    if (!n)
      return problem("bad-param", where + " must be an integer");
    if (std::optional<std::string> why = definition.outOfDomain(*n))
      return problem("out-of-domain", *why);
    action.value = *n;
    return;
  }
  case ParamType::IntList: {
    const llvm::json::Array *list = v.getAsArray();
    std::vector<int64_t> values;
    for (size_t i = 0; list && i < list->size(); ++i) {
      std::optional<int64_t> n = (*list)[i].getAsInteger();
      if (!n)
        list = nullptr;
      else
        values.push_back(*n);
    }
    if (!list)
      return problem("bad-param", where + " must be a list of integers");
    action.sizes = values;
    return;
  }
  }
}

/// Parses one action; problems are appended with `index`.
static void parseAction(const llvm::json::Value &value, int index, Action &action, std::vector<Problem> &problems) {
  auto problem = [&](StringRef code, const llvm::Twine &message) {
    problems.push_back({index, code.str(), message.str()});
  };
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return problem("bad-param", "an action must be an object {\"kind\": ..., \"params\": {...}}");
  std::optional<StringRef> kind = object->getString("kind");
  if (!kind)
    return problem("bad-param", "the action has no \"kind\" string");
  const ActionDefinition *definition = findDefinition(*kind);
  if (!definition) {
    std::vector<std::string> kinds;
    for (const auto &d : actionDefinitions())
      kinds.push_back(d->spec.kind);
    return problem("unknown-kind", "unknown action kind '" + *kind + "' (known: " + joinStrings(kinds, ", ") + ")");
  }
  const ActionSpec &spec = definition->spec;
  action.kind = kind->str();
  for (const auto &entry : *object)
    if (entry.first != "kind" && entry.first != "params")
      problem("bad-param", "unexpected key '" + StringRef(entry.first) + "' in the action (only kind and params)");
  const llvm::json::Object empty;
  const llvm::json::Object *params = object->getObject("params");
  if (!params && object->get("params"))
    return problem("bad-param", "\"params\" must be an object");
  if (!params)
    params = &empty;
  for (const auto &entry : *params)
    if (llvm::none_of(spec.params, [&](const ParamSpec &p) { return p.name == StringRef(entry.first); }))
      problem("bad-param", "unknown parameter '" + StringRef(entry.first) + "' of " + action.kind);
  for (const ParamSpec &param : spec.params) {
    const llvm::json::Value *v = params->get(param.name);
    if (!v) {
      problem("bad-param", action.kind + " needs parameter '" + param.name + "' (" + param.doc + ")");
      continue;
    }
    size_t before = problems.size();
    parseParam(param, *v, *definition, action, problem);
    if (param.type == ParamType::IntList && problems.size() > before)
      return; // a malformed list: the parameters after it are not read
  }
  definition->checkParsed(action, index, problems);
}

/// The most actions a schedule may have. Each slot (kind and level) appears at most once, so no valid schedule
/// comes near it; the checks of an action look at the actions before it, so validation takes time quadratic in
/// the length, and a schedule of a million actions (10 MB of JSON) would not finish.
static constexpr size_t kMaxScheduleActions = 64;

static std::optional<Problem> tooLong(size_t actions) {
  if (actions <= kMaxScheduleActions)
    return std::nullopt;
  std::string message = "a schedule has at most " + std::to_string(kMaxScheduleActions) +
                        " actions (each slot appears at most once); this one has " + std::to_string(actions);
  return Problem{-1, "too-large", message};
}

std::vector<Problem> kforge::tune::parseSchedule(const llvm::json::Value &value, Schedule &schedule) {
  std::vector<Problem> problems;
  const llvm::json::Array *actions = value.getAsArray();
  if (const llvm::json::Object *object = value.getAsObject())
    actions = object->getArray("actions");
  if (!actions) {
    problems.push_back(
        {-1, "bad-param", "a schedule is a JSON array of actions or an object with an \"actions\" array"});
    return problems;
  }
  schedule.clear();
  if (std::optional<Problem> problem = tooLong(actions->size()))
    return {*problem};
  for (auto [index, element] : llvm::enumerate(*actions)) {
    Action action;
    parseAction(element, static_cast<int>(index), action, problems);
    schedule.push_back(std::move(action));
  }
  return problems;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static bool splitsKernels(const Action &action) {
  const ActionDefinition *definition = findDefinition(action.kind);
  return definition && definition->splitsKernels();
}

/// A schedule that starts with a kernel split: the split's own checks, then the rest as the schedule of the
/// op it leaves to the actions after it (split: the contraction; split_k: the partial matmul).
static std::vector<Problem> validateKernelSplit(const Schedule &schedule, size_t index, const PayloadFacts &facts,
                                                StringRef target) {
  std::vector<Problem> problems;
  const Action &split = schedule[index];
  const ActionDefinition &definition = definitionOf(split);
  ValidationContext context(schedule, facts, target == "gpu", index, problems);
  if (!llvm::is_contained(definition.spec.targets, target.str()))
    context.problem("target", split.kind + " is not available on the " + target + " target");
  definition.checkDomain(context);
  if (index != 0)
    context.problem("order", split.kind + " comes first, once");
  for (size_t j = index + 1; j < schedule.size(); ++j)
    if (splitsKernels(schedule[j]))
      context.problemAt(
          static_cast<int>(j), "order",
          "kernel splits (split, split_k, split_rows, channels_last, transpose_b) come first, once, one of them");
  definition.validate(context);
  if (!problems.empty())
    return problems;
  Schedule rest = withoutSplit(schedule);
  if (rest.empty())
    problems.push_back(
        {-1, "precondition", split.kind + " needs the contraction's schedule after it (at least tile(block))"});
  for (Problem p : validateSchedule(rest, scheduledFacts(schedule, facts), target)) {
    if (p.action >= 0)
      p.action += 1;
    problems.push_back(p);
  }
  return problems;
}

/// What every schedule on the GPU needs, whatever its actions.
static void checkGpuSchedule(const Schedule &schedule, const PayloadFacts &facts, std::vector<Problem> &problems) {
  auto problem = [&](StringRef code, const llvm::Twine &message) {
    problems.push_back({-1, code.str(), message.str()});
  };
  if (!findSlot(schedule, "tile", "block"))
    problem("precondition", "the gpu target needs tile(block): without it nothing runs on the device");
  if (facts.linalgOps > 1 && findSlot(schedule, "tile", "block") && !findSlot(schedule, "fuse", "block"))
    problem("precondition",
            "the root has producers: on the gpu target they need fuse(block), or they would run on the host");
  if (findSlot(schedule, "fuse", "block") && findSlot(schedule, "tile", "thread") &&
      !findSlot(schedule, "fuse", "thread"))
    problem("precondition", "with tile(thread), fused producers need fuse(thread), or every thread runs them");
}

std::vector<Problem> kforge::tune::validateSchedule(const Schedule &schedule, const PayloadFacts &facts,
                                                    StringRef target) {
  if (std::optional<Problem> problem = tooLong(schedule.size()))
    return {*problem};
  auto splitAt = llvm::find_if(schedule, splitsKernels);
  if (splitAt != schedule.end())
    return validateKernelSplit(schedule, splitAt - schedule.begin(), facts, target);
  std::vector<Problem> problems;
  bool gpu = target == "gpu";
  int lastPhase = 0;
  for (size_t i = 0; i < schedule.size(); ++i) {
    const Action &action = schedule[i];
    ValidationContext context(schedule, facts, gpu, i, problems);
    const ActionDefinition *definition = findDefinition(action.kind);
    if (!definition) {
      context.problem("unknown-kind", "unknown action kind '" + action.kind + "'");
      continue;
    }
    if (!llvm::is_contained(definition->spec.targets, target.str()))
      context.problem("target", action.kind + " is not available on the " + target + " target");
    // Domains again: schedules built in memory (by a policy) have not been through parseSchedule.
    definition->checkDomain(context);
    int phase = definition->phase(action);
    if (phase <= lastPhase)
      context.problem("order", (action.level.empty() ? action.kind : action.kind + "(" + action.level + ")") +
                                   " is out of order or repeated: each slot appears at most once, in the order " +
                                   canonicalOrderText(/*withSplits=*/false));
    lastPhase = std::max(lastPhase, phase);
    definition->validate(context);
  }
  if (gpu)
    checkGpuSchedule(schedule, facts, problems);
  return problems;
}

std::vector<Problem> kforge::tune::checkSchedule(const llvm::json::Value &value, const PayloadFacts &facts,
                                                 StringRef target, Schedule &schedule) {
  std::vector<Problem> problems = parseSchedule(value, schedule);
  return problems.empty() ? validateSchedule(schedule, facts, target) : problems;
}

llvm::json::Value kforge::tune::invalidScheduleReport(llvm::ArrayRef<Problem> problems) {
  llvm::json::Array list;
  for (const Problem &p : problems)
    list.push_back(toJSON(p));
  return llvm::json::Object{{"status", "invalid"}, {"problems", std::move(list)}};
}

//===----------------------------------------------------------------------===//
// Rendering and docs
//===----------------------------------------------------------------------===//

std::string kforge::tune::renderSchedule(const Schedule &schedule, const PayloadFacts &facts, StringRef target,
                                         std::vector<int> *actionLines) {
  return Renderer(facts, target).render(schedule, actionLines);
}

int kforge::tune::actionAtLine(llvm::ArrayRef<int> actionLines, int line, int totalActions) {
  // The fragment starting last at or before `line`; entry totalActions is the finish. Launch bounds are
  // rendered after the finish, so their starts come after its start.
  int found = -1, foundStart = 0;
  for (int i = 0; i < static_cast<int>(actionLines.size()) && i <= totalActions; ++i)
    if (actionLines[i] > 0 && actionLines[i] <= line && actionLines[i] >= foundStart) {
      found = i;
      foundStart = actionLines[i];
    }
  return found == totalActions ? -1 : found;
}

std::string kforge::tune::actionsMarkdown() {
  std::string out;
  llvm::raw_string_ostream os(out);
  int kernelActions = llvm::count_if(actionDefinitions(), [](const auto &d) { return d->actsOnKernel(); });
  os << "# Actions\n\n"
     << "<!-- Generated from kforge's action registry by `kforge-tune --actions-doc`; a test fails when this\n"
     << "     file and the registry disagree. Edit the action's definition in lib/Tune/actions/, then regenerate. "
        "-->\n\n"
     << "A schedule is an ordered list of actions, each a JSON object `{\"kind\": ..., \"params\": {...}}`, e.g.\n\n"
     << "    [{\"kind\": \"tile\", \"params\": {\"level\": \"block\", \"sizes\": [64, 64]}},\n"
     << "     {\"kind\": \"fuse\", \"params\": {\"into\": \"block\"}}]\n\n"
     << "Each action renders to a fragment of one transform-dialect named sequence (`kforge-tune --render`). "
     << "Every schedule ends with the target's finish, which is not an action: one-shot bufferization; on the "
     << "GPU, mapping the block loop to the grid and the thread loop to the block (the block's size follows "
     << "from the block and thread tiles); lowering of vector ops.\n\n"
     << "Order: each slot (kind and level) appears at most once, in this order: " << canonicalOrderText(true)
     << " (the last " << kernelActions << " act on the kernel the GPU mapping makes).\n\n"
     << "The root is the op that produces the entry's returned value; block and thread tiles cut its parallel "
     << "loops (one size per loop, 0 = whole loop). After split, the actions schedule the contraction instead "
     << "(the root is then the contraction), and the ops after it get a row kernel of their own.\n\n";
  for (const auto &definition : actionDefinitions()) {
    const ActionSpec &spec = definition->spec;
    os << "## " << spec.kind << "\n\n" << spec.summary << "\n\n";
    os << "- renders to: " << spec.renders << "\n";
    os << "- targets: " << joinStrings(spec.targets, ", ") << "\n";
    os << "- requires: " << spec.requires_ << "\n";
    if (spec.params.empty())
      os << "- parameters: none\n";
    for (const ParamSpec &param : spec.params) {
      os << "- `" << param.name << "`: " << param.doc << "; ";
      if (param.type == ParamType::Enum)
        os << "one of " << joinStrings(param.choices, ", ");
      else if (param.type == ParamType::Int)
        os << "one of " << joinInts(param.values, ", ");
      else
        os << "a list; each element one of " << joinInts(param.values, ", ");
      os << "\n";
    }
    os << "\n";
  }
  os << "## Not yet in the registry\n\n"
     << "Promotion to shared memory beyond the staged matmul, warp-level tiles other than mma's, and "
     << "convolution-specific rewrites exist only as hand-written recipes (recipes/) or not at all.\n";
  return out;
}
