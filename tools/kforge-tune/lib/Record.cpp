//===- Record.cpp - one line of the tuning database, typed ----------------===//

#include "Record.h"

#include "llvm/Config/llvm-config.h"

#include <ctime>

#ifndef KFORGE_VERSION
#define KFORGE_VERSION "unknown"
#endif

using namespace kforge::tune;
namespace json = llvm::json;

/// A key that is written whenever its record has it, as null when the value does not apply.
template <typename T> static json::Value orNull(const std::optional<T> &value) {
  return value ? json::Value(*value) : json::Value(nullptr);
}

template <typename T> static void setIf(json::Object &object, llvm::StringRef key, const std::optional<T> &value) {
  if (value)
    object[key] = *value;
}

json::Value kforge::tune::toJSON(const DatabaseRecord &r) {
  json::Object o{{"format", r.format},
                 {"id", r.id},
                 {"kind", r.kind},
                 {"schedule", r.schedule},
                 {"description", r.description},
                 {"payload_hash", r.payloadHash},
                 {"target", r.target},
                 {"versions", r.versions},
                 {"timestamp", r.timestamp},
                 {"compile_s", r.compileSeconds},
                 {"status", r.status}};
  if (r.isCandidate()) {
    o["policy"] = r.policy;
    o["island"] = r.island;
    o["step"] = r.step;
    o["schedule_hash"] = r.scheduleHash;
    o["chip"] = orNull(r.chip);
    o["l2_flush"] = orNull(r.l2Flush);
    o["parent"] = orNull(r.parent);
  }
  if (r.status == "compile-failed")
    o["action"] = orNull(r.action);
  setIf(o, "script", r.script);
  setIf(o, "stage", r.stage);
  setIf(o, "reason", r.reason);
  setIf(o, "diagnostics", r.diagnostics);
  setIf(o, "run_timeout_s", r.runTimeoutSeconds);
  setIf(o, "run_s", r.runSeconds);
  setIf(o, "resources", r.resources);
  setIf(o, "runner", r.runner);
  setIf(o, "verification_runs_ms", r.verificationRunsMs);
  setIf(o, "phases_ms", r.phasesMs);
  setIf(o, "time_ms", r.timeMs);
  setIf(o, "speedup_vs_baseline", r.speedupVsBaseline);
  setIf(o, "speedup_vs_previous_best", r.speedupVsPreviousBest);
  setIf(o, "timing", r.timing);
  setIf(o, "score", r.score);
  setIf(o, "run", r.run);
  return o;
}

bool kforge::tune::fromJSON(const json::Value &value, DatabaseRecord &r, json::Path path) {
  json::ObjectMapper o(value, path);
  if (!o)
    return false;
  // Reports of the other tools, passed through as they are.
  const json::Object &object = *value.getAsObject();
  auto keep = [&](llvm::StringRef key, std::optional<json::Value> &slot) {
    if (const json::Value *v = object.get(key))
      slot = *v;
  };
  if (const json::Value *v = object.get("schedule"))
    r.schedule = *v;
  if (const json::Value *v = object.get("versions"))
    r.versions = *v;
  keep("diagnostics", r.diagnostics);
  keep("resources", r.resources);
  keep("runner", r.runner);
  keep("verification_runs_ms", r.verificationRunsMs);
  keep("phases_ms", r.phasesMs);
  keep("timing", r.timing);
  keep("run", r.run);
  return o.mapOptional("format", r.format) && o.mapOptional("id", r.id) && o.mapOptional("kind", r.kind) &&
         o.mapOptional("status", r.status) && o.mapOptional("description", r.description) &&
         o.mapOptional("payload_hash", r.payloadHash) && o.mapOptional("target", r.target) &&
         o.mapOptional("timestamp", r.timestamp) && o.mapOptional("compile_s", r.compileSeconds) &&
         o.mapOptional("policy", r.policy) && o.mapOptional("island", r.island) && o.mapOptional("step", r.step) &&
         o.mapOptional("schedule_hash", r.scheduleHash) && o.mapOptional("chip", r.chip) &&
         o.mapOptional("l2_flush", r.l2Flush) && o.mapOptional("parent", r.parent) &&
         o.mapOptional("script", r.script) && o.mapOptional("stage", r.stage) && o.mapOptional("reason", r.reason) &&
         o.mapOptional("action", r.action) && o.mapOptional("run_timeout_s", r.runTimeoutSeconds) &&
         o.mapOptional("run_s", r.runSeconds) && o.mapOptional("time_ms", r.timeMs) &&
         o.mapOptional("speedup_vs_baseline", r.speedupVsBaseline) &&
         o.mapOptional("speedup_vs_previous_best", r.speedupVsPreviousBest) && o.mapOptional("score", r.score);
}

Schedule DatabaseRecord::parsedSchedule() const {
  Schedule parsed;
  parseSchedule(schedule, parsed);
  return parsed;
}

json::Object kforge::tune::toolVersions() {
  return json::Object{{"kforge", KFORGE_VERSION}, {"llvm", LLVM_VERSION_STRING}};
}

std::string kforge::tune::timestampNow() {
  std::time_t t = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buffer;
}

const DatabaseRecord *kforge::tune::findBaseline(llvm::ArrayRef<DatabaseRecord> records) {
  for (const DatabaseRecord &record : records)
    if (record.isBaseline())
      return &record;
  return nullptr;
}

const DatabaseRecord *kforge::tune::findBest(llvm::ArrayRef<DatabaseRecord> records) {
  const DatabaseRecord *best = nullptr;
  for (const DatabaseRecord &record : records) {
    if (!record.isCandidate() || !record.isCorrect())
      continue;
    double t = record.timeMs.value_or(0);
    if (t > 0 && (!best || t < best->timeMs.value_or(0)))
      best = &record;
  }
  return best;
}

std::vector<TrialRecord> kforge::tune::historyOf(llvm::ArrayRef<DatabaseRecord> records) {
  std::vector<TrialRecord> history;
  for (const DatabaseRecord &record : records) {
    if (!record.isCandidate())
      continue;
    TrialRecord r;
    r.id = static_cast<int>(record.id);
    r.schedule = record.parsedSchedule();
    r.hash = record.scheduleHash;
    r.status = record.status;
    r.timeMs = record.timeMs.value_or(0);
    r.island = record.island;
    r.reason = record.reason.value_or("");
    r.description = record.description;
    r.policy = record.policy;
    history.push_back(std::move(r));
  }
  return history;
}
