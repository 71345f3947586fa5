//===- Distributed.cpp - kforge-tune's modes for a distributed driver -----===//

#include "Distributed.h"

#include "Database.h"
#include "Evaluate.h"
#include "Files.h"
#include "RunDirectory.h"

#include "kforge/Tune/Actions.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace kforge::tune;
using llvm::StringRef;
namespace json = llvm::json;

std::optional<TuneConfig> kforge::tune::loadRunConfig(const TuneConfig &given, const std::string &dir,
                                                      PayloadFacts &facts) {
  std::string runDir = absoluteRunDir(dir);
  llvm::Expected<json::Value> saved = readJSONFile(joinPath(runDir, "run.json"));
  const json::Object *run = saved ? saved->getAsObject() : nullptr;
  json::Path::Root root;
  const json::Value *factsJSON = run ? run->get("facts") : nullptr;
  const json::Value *hardware = run ? run->get("hardware") : nullptr;
  TuneConfig config = given;
  if (!run || !factsJSON || !fromJSON(*factsJSON, facts, root) || !hardware ||
      !fromJSON(*hardware, config.profile, root) || !run->getString("target")) {
    llvm::errs() << "kforge-tune: error: " << runDir
                 << " is not a tuning run set up by kforge-tune (no readable run.json with facts, hardware and "
                    "target; `kforge-tune PAYLOAD -o RUN --no-search` sets one up)";
    if (!saved)
      llvm::errs() << ": " << llvm::toString(saved.takeError());
    llvm::errs() << "\n";
    return std::nullopt;
  }
  largeProblemSeeds(config, facts); // as the run's own kforge-tune chose (it printed the note)
  config.runDir = runDir;
  config.payloadPath = joinPath(runDir, "payload.mlir");
  config.target = run->getString("target")->str();
  config.chip = run->getString("chip").value_or("sm_90").str();
  config.l2Flush = run->getString("l2_flush").value_or("dirty").str();
  config.allowTf32 = facts.allowTf32; // run.json's facts: as the set-up run was asked
  config.entry = run->getString("entry").value_or(config.entry).str();
  config.policy = run->getString("policy").value_or(config.policy).str();
  if (std::optional<int64_t> seed = run->getInteger("seed"))
    config.seed = static_cast<uint64_t>(*seed);
  if (const json::Object *score = run->getObject("score")) {
    config.weights.compiles = score->getNumber("compiles").value_or(config.weights.compiles);
    config.weights.correct = score->getNumber("correct").value_or(config.weights.correct);
    config.weights.speedup = score->getNumber("speedup").value_or(config.weights.speedup);
  }
  return config;
}

/// The proposal a --propose line describes; false when its actions do not parse.
static bool proposalFromJSON(const json::Object &o, Proposal &p) {
  p.policy = o.getString("policy").value_or("").str();
  p.island = o.getString("island").value_or("").str();
  p.step = o.getString("step").value_or("").str();
  p.parentHash = o.getString("parent_hash").value_or("").str();
  p.script = o.getString("script").value_or("").str();
  const json::Value *actions = o.get("actions");
  return actions && parseSchedule(*actions, p.schedule).empty();
}

static json::Object proposalToJSON(const Proposal &p) {
  json::Object o{{"policy", p.policy},       {"island", p.island},
                 {"step", p.step},           {"parent_hash", p.parentHash},
                 {"schedule_hash", proposalHash(p)},
                 {"description", p.script.empty() ? describe(p.schedule) : std::string("transform script")},
                 {"actions", toJSON(p.schedule)}};
  if (!p.script.empty())
    o["script"] = p.script;
  return o;
}

int kforge::tune::proposeTrials(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts, int count,
                                const std::string &pendingPath) {
  llvm::Expected<Database> db = Database::open(joinPath(config.runDir, "db.jsonl"), /*readOnly=*/true);
  if (!db) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(db.takeError()) << "\n";
    return 1;
  }
  std::vector<TrialRecord> history = historyOf(db->entries());
  int nextId = 1;
  for (const DatabaseRecord &r : db->entries())
    nextId = std::max<int>(nextId, static_cast<int>(r.id) + 1);
  if (!pendingPath.empty()) {
    llvm::Expected<std::string> text = readFile(pendingPath, kMaxDatabaseBytes);
    if (!text) {
      llvm::errs() << "kforge-tune: error: --pending: " << llvm::toString(text.takeError()) << "\n";
      return 2;
    }
    int lineNumber = 0;
    for (StringRef rest = *text; !rest.empty();) {
      auto [line, tail] = rest.split('\n');
      rest = tail;
      ++lineNumber;
      if (line.trim().empty())
        continue;
      llvm::Expected<json::Value> value = parseJSON(line);
      Proposal p;
      if (!value || !value->getAsObject() || !proposalFromJSON(*value->getAsObject(), p)) {
        if (!value)
          llvm::consumeError(value.takeError());
        llvm::errs() << "kforge-tune: error: --pending " << pendingPath << ":" << lineNumber
                     << ": not a proposal (a --propose line)\n";
        return 2;
      }
      // In flight: measured by nobody yet, but the policy must not propose it again.
      TrialRecord r;
      r.id = nextId++;
      r.schedule = p.schedule;
      r.hash = proposalHash(p);
      r.status = "not-run";
      r.policy = p.policy;
      r.island = p.island;
      history.push_back(std::move(r));
    }
  }
  std::string error;
  std::unique_ptr<Policy> policy = makePolicy(config, tools, facts, error);
  if (!policy) {
    llvm::errs() << "kforge-tune: error: " << error << "\n";
    return 2;
  }
  for (const Proposal &p : policy->propose(history, count))
    llvm::outs() << json::Value(proposalToJSON(p)) << "\n";
  return 0;
}

/// DIR/proposal.json as a candidate with its files: nothing (said in `error`) when it cannot be read.
static std::optional<Candidate> readProposal(const std::string &dir, std::string &error) {
  llvm::Expected<json::Value> value = readJSONFile(joinPath(dir, "proposal.json"));
  if (!value) {
    error = llvm::toString(value.takeError());
    return std::nullopt;
  }
  Candidate c;
  c.dir = dir;
  c.recipePath = joinPath(dir, "schedule.mlir");
  if (!value->getAsObject() || !proposalFromJSON(*value->getAsObject(), c.proposal)) {
    error = joinPath(dir, "proposal.json") + " is not a proposal (a --propose line)";
    return std::nullopt;
  }
  return c;
}

int kforge::tune::compileTrial(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts,
                               const std::string &given) {
  std::string dir = absoluteRunDir(given);
  std::string error;
  std::optional<Candidate> c = readProposal(dir, error);
  if (!c) {
    llvm::errs() << "kforge-tune: error: --compile-trial: " << error << "\n";
    return 1;
  }
  bool written = !c->proposal.script.empty()
                     ? writeText(c->recipePath, c->proposal.script)
                     : writeText(c->recipePath, renderSchedule(c->proposal.schedule, facts, config.target,
                                                               &c->actionLines)) &&
                           writeJSON(joinPath(dir, "schedule.json"), toJSON(c->proposal.schedule));
  if (!written)
    return 1;
  compileCandidate(config, tools, *c, /*naive=*/false);
  json::Object outcome{{"compiled", c->compiled},
                       {"stage", c->stage},
                       {"status", c->compileStatus},
                       {"message", c->message},
                       {"diagnostics", json::Array(c->diagnostics)},
                       {"faulty_action", c->faultyAction},
                       {"compile_s", c->compileSeconds},
                       {"action_lines", json::Array(std::vector<json::Value>(c->actionLines.begin(),
                                                                             c->actionLines.end()))}};
  return writeJSON(joinPath(dir, "compile.json"), json::Value(std::move(outcome))) ? 0 : 1;
}

/// The candidate of one --trial-server request, with its compile outcome; nothing (said in `error`) when the
/// request or the candidate's files cannot be read.
static std::optional<Candidate> requestedCandidate(const json::Object &request, std::string &error) {
  std::optional<StringRef> dir = request.getString("dir");
  std::optional<int64_t> id = request.getInteger("id");
  if (!dir || !id || *id < 1) {
    error = "a request needs \"dir\" and \"id\" (1 or more)";
    return std::nullopt;
  }
  std::optional<Candidate> c = readProposal(absoluteRunDir(*dir), error);
  if (!c)
    return std::nullopt;
  c->id = static_cast<int>(*id);
  llvm::Expected<json::Value> compiled = readJSONFile(joinPath(c->dir, "compile.json"));
  const json::Object *o = compiled ? compiled->getAsObject() : nullptr;
  if (!o || !o->getBoolean("compiled")) {
    error = "the candidate was not compiled (no " + joinPath(c->dir, "compile.json") + ")";
    if (!compiled)
      llvm::consumeError(compiled.takeError());
    return std::nullopt;
  }
  c->compiled = *o->getBoolean("compiled");
  c->stage = o->getString("stage").value_or("").str();
  c->compileStatus = o->getString("status").value_or("").str();
  c->message = o->getString("message").value_or("").str();
  if (const json::Array *d = o->getArray("diagnostics"))
    c->diagnostics = *d;
  c->faultyAction = static_cast<int>(o->getInteger("faulty_action").value_or(-1));
  c->compileSeconds = o->getNumber("compile_s").value_or(0);
  if (const json::Array *lines = o->getArray("action_lines"))
    for (const json::Value &line : *lines)
      c->actionLines.push_back(static_cast<int>(line.getAsInteger().value_or(0)));
  return c;
}

int kforge::tune::serveTrials(const TuneConfig &config, const Tools &tools, const PayloadFacts &facts) {
  Evaluator evaluator(config, tools, facts);
  // The run's baseline (set up by --no-search) gives the too-slow cutoff its slack, as in a search.
  llvm::Expected<Database> db = Database::open(joinPath(config.runDir, "db.jsonl"), /*readOnly=*/true);
  if (!db) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(db.takeError()) << "\n";
    return 1;
  }
  if (const DatabaseRecord *baseline = findBaseline(db->entries()))
    evaluator.setBaseline(*baseline);
  std::string line;
  // std::getline: stdin is a pipe from the caller, one request per line.
  while (std::getline(std::cin, line)) {
    if (StringRef(line).trim().empty())
      continue;
    std::string error = "a request must be a JSON object";
    json::Value answer = nullptr;
    llvm::Expected<json::Value> value = parseJSON(line);
    const json::Object *request = value ? value->getAsObject() : nullptr;
    if (!value)
      error = "not JSON: " + llvm::toString(value.takeError());
    std::optional<Candidate> c = request ? requestedCandidate(*request, error) : std::nullopt;
    if (c) {
      double baselineMs = request->getNumber("baseline_ms").value_or(0);
      double bestMs = request->getNumber("best_ms").value_or(baselineMs);
      double budgetLeft = std::max(0.0, request->getNumber("budget_left_s").value_or(0));
      std::optional<int64_t> parent = request->getInteger("parent");
      if (baselineMs <= 0 || bestMs <= 0) {
        error = "a request needs \"baseline_ms\" and \"best_ms\" above 0";
        c.reset();
      } else {
        DatabaseRecord record = evaluator.evaluate(*c, baselineMs, bestMs, budgetLeft, parent);
        // The best so far is only known to the caller: a correct candidate keeps its artifact until
        // `--no-search --resume` exports the best and drops the rest.
        if (!record.isCorrect() && !config.keepCandidates)
          pruneCandidate(c->dir);
        answer = toJSON(record);
      }
    }
    if (!c)
      answer = json::Object{{"error", error}};
    llvm::outs() << answer << "\n";
    llvm::outs().flush();
  }
  return 0;
}
