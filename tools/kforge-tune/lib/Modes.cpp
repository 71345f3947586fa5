//===- Modes.cpp - kforge-tune's modes that run no search -----------------===//

#include "Modes.h"

#include "Files.h"
#include "Machine.h"

#include "kforge/Tune/Actions.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace kforge::tune;
namespace json = llvm::json;

json::Value kforge::tune::actionRegistryJSON() {
  json::Array kinds;
  for (const ActionSpec &spec : actionRegistry()) {
    json::Array params;
    for (const ParamSpec &p : spec.params) {
      json::Object param{{"name", p.name}, {"doc", p.doc}};
      param["type"] = p.type == ParamType::Enum ? "enum" : p.type == ParamType::Int ? "int" : "int_list";
      if (p.type == ParamType::Enum)
        param["choices"] = json::Array(std::vector<json::Value>(p.choices.begin(), p.choices.end()));
      else
        param["values"] = json::Array(std::vector<json::Value>(p.values.begin(), p.values.end()));
      params.push_back(std::move(param));
    }
    kinds.push_back(
        json::Object{{"kind", spec.kind},
                     {"summary", spec.summary},
                     {"renders", spec.renders},
                     {"requires", spec.requires_},
                     {"targets", json::Array(std::vector<json::Value>(spec.targets.begin(), spec.targets.end()))},
                     {"params", std::move(params)}});
  }
  return json::Object{{"format", "kforge-actions/1"}, {"actions", std::move(kinds)}};
}

int kforge::tune::printActionRegistry() {
  llvm::outs() << llvm::formatv("{0:2}", actionRegistryJSON()) << "\n";
  return 0;
}

int kforge::tune::printActionsDoc() {
  llvm::outs() << actionsMarkdown();
  return 0;
}

/// Parses and checks a schedule file against `facts`; prints problems as JSON.
static int validateOrRender(const PayloadFacts &facts, llvm::StringRef file, llvm::StringRef resolvedTarget,
                            bool render) {
  llvm::Expected<std::string> text = readFile(file, kMaxScheduleBytes);
  if (!text) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(text.takeError()) << "\n";
    return 2;
  }
  llvm::Expected<json::Value> value = parseJSON(*text);
  std::vector<Problem> problems;
  Schedule schedule;
  if (!value)
    problems.push_back({-1, "bad-json", "not JSON: " + llvm::toString(value.takeError())});
  else
    problems = checkSchedule(*value, facts, resolvedTarget, schedule);
  if (!problems.empty()) {
    llvm::outs() << llvm::formatv("{0:2}", invalidScheduleReport(problems)) << "\n";
    return 1;
  }
  if (render)
    llvm::outs() << renderSchedule(schedule, facts, resolvedTarget);
  else
    llvm::outs() << llvm::formatv("{0:2}",
                                  json::Value(json::Object{{"status", "valid"}, {"description", describe(schedule)}}))
                 << "\n";
  return 0;
}

int kforge::tune::checkScheduleFile(const Tools &tools, const std::string &payloadPath, const std::string &entry,
                                    const std::string &target, const std::string &file, bool render, bool allowTf32) {
  std::optional<PayloadFacts> facts = loadFacts(tools, payloadPath, entry);
  if (!facts)
    return 1;
  facts->allowTf32 = allowTf32;
  return validateOrRender(*facts, file, target == "auto" ? "gpu" : target, render);
}

int kforge::tune::printDryRun(const Tools &tools, const std::string &payloadPath, const std::string &entry,
                              const std::string &target, std::string chip, const std::string &policy, uint64_t seed,
                              int count, bool allowTf32) {
  std::optional<PayloadFacts> facts = loadFacts(tools, payloadPath, entry);
  if (!facts)
    return 1;
  facts->allowTf32 = allowTf32;
  HardwareProfile profile = cpuProfile();
  if (target != "cpu") { // the GPU's profile if there is one, else the H200's shape
    std::optional<HardwareProfile> gpu = probeGpu(tools, chip);
    profile = gpu ? *gpu : placeholderGpuProfile();
    if (!gpu) // (--chip names the GPU the proposals are for: sm_80 gets no wgmma)
      profile.chip = chip;
  }
  std::string error;
  std::unique_ptr<Policy> p = createPolicy(policy, *facts, profile, seed, error);
  if (!p) {
    llvm::errs() << "kforge-tune: error: " << error << " (--dry-run takes the built-in policies)\n";
    return 2;
  }
  // The policy sees its earlier proposals as tried (and failed): what it would do if nothing compiled.
  std::vector<TrialRecord> history;
  while (static_cast<int>(history.size()) < count) {
    std::vector<Proposal> batch = p->propose(history, std::min(8, count - static_cast<int>(history.size())));
    if (batch.empty())
      break;
    for (const Proposal &proposal : batch) {
      llvm::outs() << json::Value(json::Object{{"policy", proposal.policy},
                                               {"step", proposal.step},
                                               {"description", describe(proposal.schedule)},
                                               {"actions", toJSON(proposal.schedule)}})
                   << "\n";
      TrialRecord r;
      r.id = static_cast<int>(history.size()) + 1;
      r.schedule = proposal.schedule;
      r.hash = scheduleHash(proposal.schedule);
      r.status = "not-run";
      history.push_back(r);
    }
  }
  return 0;
}
