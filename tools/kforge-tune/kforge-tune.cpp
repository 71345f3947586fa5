//===- kforge-tune.cpp - search for the fastest schedule of a payload -----===//
//
//   kforge-tune PAYLOAD.mlir [-o RUN_DIR] [--target auto|gpu|cpu] [--policy heuristic+evolve] [--trials N]
//   kforge-tune PAYLOAD.mlir -o RUN_DIR --resume        continue a run (killed or with a larger budget)
//   kforge-tune --replay RUN_DIR                          rebuild and verify the best kernel, no search
//   kforge-tune --replay RUN_DIR --build-only             rebuild it only
//   kforge-tune PAYLOAD.mlir --try S.json -o RUN_DIR      evaluate one given schedule
//   kforge-tune PAYLOAD.mlir --validate S.json | --render S.json
//   kforge-tune --list-actions | --actions-doc
//
// kforge-tune is a driver: it links no MLIR, and runs kforge-compile (payload analysis, compiles) and
// kforge-run (verification, timing) as child processes. See docs/tune.md.
//
//===----------------------------------------------------------------------===//

#include "Files.h"
#include "Tuner.h"

#include "kforge/Tune/Actions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"

using namespace kforge::tune;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::OptionCategory category("kforge-tune options");
static cl::opt<std::string> payloadPath(cl::Positional, cl::desc("<payload.mlir>"), cl::init(""), cl::cat(category));
static cl::opt<std::string> outputDir("o", cl::desc("Run directory (default: kforge-runs/<payload name>)"),
                                      cl::value_desc("dir"), cl::init(""), cl::cat(category));
static cl::alias outputAlias("output", cl::aliasopt(outputDir), cl::desc("Alias for -o"));
static cl::opt<std::string> target("target", cl::desc("gpu, cpu, or auto (the GPU if there is one)"),
                                   cl::init("auto"), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture (default: the GPU's, else sm_90)"), cl::init(""),
                                 cl::cat(category));
static cl::opt<std::string> entry("entry", cl::desc("Entry function (default: the only public one)"), cl::init(""),
                                  cl::cat(category));
static cl::opt<std::string> policy("policy",
                                   cl::desc("heuristic+evolve, heuristic, evolve, random, llm or llm+evolve"),
                                   cl::init("heuristic+evolve"), cl::cat(category));
static cl::opt<int> trials("trials", cl::desc("Trial budget (candidates; the baseline is not one)"), cl::init(64),
                           cl::cat(category));
static cl::opt<double> timeBudget("time-budget", cl::desc("Stop after this many seconds (0: no limit)"), cl::init(0),
                                  cl::cat(category));
static cl::opt<int> earlyStop("early-stop", cl::desc("Stop after this many trials without a faster kernel (0: never)"),
                              cl::init(0), cl::cat(category));
static cl::opt<unsigned long long> seed("seed", cl::desc("Seed of the policies"), cl::init(1), cl::cat(category));
static cl::opt<int> jobs("jobs", cl::desc("Parallel compiles (0: all cores)"), cl::init(0), cl::cat(category));
static cl::opt<int> seeds("seeds", cl::desc("Random inputs each candidate is verified on"), cl::init(5),
                          cl::cat(category));
static cl::opt<int> reps("reps", cl::desc("Timed repetitions per candidate (at least 10)"), cl::init(20),
                         cl::cat(category));
static cl::opt<int> compileTimeout("compile-timeout", cl::desc("Seconds a candidate may take to compile"),
                                   cl::init(120), cl::cat(category));
static cl::opt<int> runTimeout("run-timeout", cl::desc("Seconds a candidate may take to verify and time, at most (each trial is also bounded by the too-slow cutoff and the time budget left)"),
                               cl::init(300), cl::cat(category));
static cl::opt<double> cutoff("cutoff",
                              cl::desc("A candidate whose first run is this many times slower than the untransformed "
                                       "payload is recorded too-slow without full verification and timing (0: off)"),
                              cl::init(20), cl::cat(category));
static cl::opt<double> cutoffBest("cutoff-best",
                                  cl::desc("... or this many times slower than the best kernel found so far (0: off)"),
                                  cl::init(4), cl::cat(category));
static cl::opt<double> timingBudget(
    "timing-budget-ms",
    cl::desc("A trial's timed repetitions stop near this many milliseconds (at least 10 repetitions; 0: always "
             "--reps); --replay always times --reps"),
    cl::init(1000), cl::cat(category));
static cl::opt<std::string> l2Flush(
    "l2-flush",
    cl::desc("GPU trials: how the L2 flush before each timed repetition leaves L2: dirty (kforge-run writes a "
             "buffer of 4x L2, shared/MEASURE.md's protocol) or clean (it reads one, so no dirty lines are left)"),
    cl::init("dirty"), cl::cat(category));
static cl::opt<std::string> runnerMode(
    "runner",
    cl::desc("How trials are verified and timed: serve (one long-lived kforge-run for the search) or process "
             "(a kforge-run per candidate)"),
    cl::init("serve"), cl::cat(category));
static cl::opt<int> memoryLimit("memory-limit-mb", cl::desc("Memory a compile may use"), cl::init(8192),
                                cl::cat(category));
static cl::opt<bool> resume("resume", cl::desc("Continue the run in the run directory"), cl::init(false),
                            cl::cat(category));
static cl::opt<std::string> replay("replay", cl::desc("Rebuild and verify the best kernel of this run directory"),
                                   cl::value_desc("run dir"), cl::init(""), cl::cat(category));
static cl::opt<bool> buildOnly("build-only",
                               cl::desc("With --replay: rebuild the best kernel and its transform library, without "
                                        "verifying or timing it (for a caller that verifies it itself)"),
                               cl::init(false), cl::cat(category));
static cl::opt<std::string> tryFile("try", cl::desc("Evaluate this schedule (JSON) as one trial of the run"),
                                    cl::value_desc("schedule.json"), cl::init(""), cl::cat(category));
static cl::opt<std::string> validateFile("validate", cl::desc("Check this schedule (JSON) against the payload"),
                                         cl::value_desc("schedule.json"), cl::init(""), cl::cat(category));
static cl::opt<std::string> renderFile("render", cl::desc("Print this schedule (JSON) as a transform library"),
                                       cl::value_desc("schedule.json"), cl::init(""), cl::cat(category));
static cl::opt<bool> listActions("list-actions", cl::desc("Print the action registry as JSON"), cl::init(false),
                                 cl::cat(category));
static cl::opt<bool> actionsDoc("actions-doc", cl::desc("Print docs/actions.md from the registry"), cl::init(false),
                                cl::cat(category));
static cl::opt<int> dryRun("dry-run",
                           cl::desc("Print the first N schedules the policy would propose (JSON lines), without "
                                    "compiling or measuring anything"),
                           cl::init(0), cl::cat(category));
static cl::opt<bool> keepCandidates("keep-candidates", cl::desc("Keep every candidate's compiled files"),
                                    cl::init(false), cl::cat(category));
static cl::opt<bool> printJson("json", cl::desc("Print a JSON summary on stdout (no progress)"), cl::init(false),
                               cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing but errors"), cl::init(false), cl::cat(category));
static cl::opt<double> scoreCompiles("score-compiles", cl::desc("Score for a candidate that compiles"),
                                     cl::init(0.1), cl::cat(category));
static cl::opt<double> scoreCorrect("score-correct", cl::desc("Score for a candidate verified correct"),
                                    cl::init(0.3), cl::cat(category));
static cl::opt<double> scoreSpeedup("score-speedup", cl::desc("Weight of ln(previous best time / time)"),
                                    cl::init(1.0), cl::cat(category));
static cl::OptionCategory llmCategory("kforge-tune LLM policy options (--policy llm; docs/llm.md)");
static cl::opt<std::string> llmApi("llm-api", cl::desc("openai (chat completions; also llama.cpp, vLLM, Ollama) or "
                                                       "anthropic (messages); default $KFORGE_LLM_API or openai"),
                                   cl::init(""), cl::cat(llmCategory));
static cl::opt<std::string> llmEndpoint("llm-endpoint",
                                        cl::desc("Base URL, e.g. http://localhost:8080/v1 (default $KFORGE_LLM_ENDPOINT "
                                                 "or the API's)"),
                                        cl::init(""), cl::cat(llmCategory));
static cl::opt<std::string> llmModel("llm-model", cl::desc("Model name (default $KFORGE_LLM_MODEL)"), cl::init(""),
                                     cl::cat(llmCategory));
static cl::opt<std::string> llmKeyEnv("llm-key-env",
                                      cl::desc("Environment variable holding the API key (default OPENAI_API_KEY or "
                                               "ANTHROPIC_API_KEY); the key is never printed or stored"),
                                      cl::init(""), cl::cat(llmCategory));
static cl::opt<double> llmTemperature("llm-temperature", cl::desc("Sampling temperature"), cl::init(0.2),
                                      cl::cat(llmCategory));
static cl::opt<int> llmMaxTokens("llm-max-tokens", cl::desc("Tokens per response"), cl::init(2048),
                                 cl::cat(llmCategory));
static cl::opt<int> llmTimeout("llm-timeout", cl::desc("Seconds per request attempt"), cl::init(120),
                               cl::cat(llmCategory));
static cl::opt<int> llmRetries("llm-retries", cl::desc("Retries after 429, 5xx or a timeout"), cl::init(3),
                               cl::cat(llmCategory));
static cl::opt<int> llmBackoffMs("llm-backoff-ms", cl::desc("First retry delay, doubled each time"), cl::init(1000),
                                 cl::cat(llmCategory));
static cl::opt<int> llmMaxRequests("llm-max-requests", cl::desc("Budget: requests per run"), cl::init(100),
                                   cl::cat(llmCategory));
static cl::opt<long long> llmMaxTokensTotal("llm-max-total-tokens", cl::desc("Budget: tokens per run"),
                                            cl::init(1000000), cl::cat(llmCategory));
static cl::opt<unsigned> llmMaxResponseKB("llm-max-response-kb", cl::desc("Largest response accepted"),
                                          cl::init(1024), cl::cat(llmCategory));
static cl::opt<int> llmRepairRounds("llm-repair-rounds", cl::desc("Follow-ups after an unusable reply"),
                                    cl::init(2), cl::cat(llmCategory));
static cl::opt<double> llmPromptPrice("llm-prompt-price", cl::desc("Dollars per million prompt tokens (for the cost)"),
                                      cl::init(0), cl::cat(llmCategory));
static cl::opt<double> llmCompletionPrice("llm-completion-price",
                                          cl::desc("Dollars per million completion tokens (for the cost)"),
                                          cl::init(0), cl::cat(llmCategory));
static cl::opt<std::string> llmReplay("llm-replay",
                                      cl::desc("Answer from this recorded transcript (llm-transcript.jsonl) instead of "
                                               "the endpoint: reproducible, offline"),
                                      cl::init(""), cl::cat(llmCategory));

static cl::opt<std::string> ceilingsPath(
    "ceilings",
    cl::desc("Measured ceilings of the target for the policies and the LLM prompt: JSON {\"copy_gbps\": G, "
             "\"fp32_tflops\": T, \"source\": \"...\"} or the two numbers \"G T\" (scripts/gpu ceilings.txt)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> runtimePath("runtime", cl::desc("kforge's mgpu runtime (default: next to the tools)"),
                                        cl::init(""), cl::cat(category));

/// The tools next to this executable (build/bin), the runtime in build/lib.
static Tools findTools(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(argv0, reinterpret_cast<void *>(&findTools));
  llvm::SmallString<256> bin(llvm::sys::path::parent_path(self));
  Tools tools;
  auto sibling = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(bin);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  tools.compile = sibling("kforge-compile");
  tools.run = sibling("kforge-run");
  if (!runtimePath.empty()) {
    tools.runtime = runtimePath;
  } else if (std::optional<std::string> env = llvm::sys::Process::GetEnv("KFORGE_RUNTIME")) {
    tools.runtime = *env;
  } else {
    llvm::SmallString<256> lib(llvm::sys::path::parent_path(bin));
    llvm::sys::path::append(lib, "lib", "libkforge_mgpu.so");
    tools.runtime = std::string(lib);
  }
  return tools;
}

/// The GPU's profile from `kforge-run --device-info`, or nothing when there is no GPU.
static std::optional<HardwareProfile> probeGpu(const Tools &tools) {
  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("kforge-device", "json", out))
    return std::nullopt;
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef("")};
  llvm::StringRef argv[] = {tools.run, "--device-info"};
  int rc = llvm::sys::ExecuteAndWait(tools.run, argv, std::nullopt, redirects, 60);
  std::optional<json::Value> value = readJSON(out);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !value)
    return std::nullopt;
  const json::Object *o = value->getAsObject();
  if (!o || !o->getBoolean("gpu").value_or(false))
    return std::nullopt;
  HardwareProfile p;
  p.target = "gpu";
  p.name = o->getString("name").value_or("").str() + " (" + o->getString("chip").value_or("").str() + ")";
  p.multiprocessors = static_cast<int>(o->getInteger("multiprocessors").value_or(1));
  p.maxThreadsPerBlock = static_cast<int>(o->getInteger("max_threads_per_block").value_or(1024));
  p.sharedBytesPerBlock = o->getInteger("shared_bytes_per_block_optin").value_or(48 * 1024);
  p.registersPerBlock = o->getInteger("registers_per_block").value_or(65536);
  p.l2Bytes = o->getInteger("l2_bytes").value_or(0);
  if (chip.empty())
    chip = o->getString("chip").value_or("sm_90").str();
  p.chip = chip;
  return p;
}

/// --ceilings: measured copy bandwidth and fp32 matmul rate, from JSON or from "GBPS TFLOPS".
static bool readCeilings(llvm::StringRef path, HardwareProfile &profile) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << "kforge-tune: error: cannot read " << path << "\n";
    return false;
  }
  llvm::StringRef text = (*buffer)->getBuffer().trim();
  if (text.starts_with("{")) {
    llvm::Expected<json::Value> value = json::parse(text);
    const json::Object *o = value ? value->getAsObject() : nullptr;
    if (!o) {
      if (!value)
        llvm::consumeError(value.takeError());
      llvm::errs() << "kforge-tune: error: " << path << " is not a JSON object\n";
      return false;
    }
    profile.measuredCopyGBps = o->getNumber("copy_gbps").value_or(0);
    profile.measuredFp32Tflops = o->getNumber("fp32_tflops").value_or(0);
    profile.ceilingsSource = o->getString("source").value_or(path).str();
  } else {
    auto [first, second] = text.split(' ');
    if (first.trim().getAsDouble(profile.measuredCopyGBps) || second.trim().getAsDouble(profile.measuredFp32Tflops)) {
      llvm::errs() << "kforge-tune: error: " << path << " holds neither JSON nor \"GBPS TFLOPS\"\n";
      return false;
    }
    profile.ceilingsSource = path.str();
  }
  if (profile.measuredCopyGBps < 0 || profile.measuredFp32Tflops < 0) {
    llvm::errs() << "kforge-tune: error: negative ceilings in " << path << "\n";
    return false;
  }
  return true;
}

static HardwareProfile cpuProfile() {
  HardwareProfile p;
  p.target = "cpu";
  p.name = "host CPU";
  int cores = llvm::get_physical_cores();
  p.multiprocessors = cores > 0 ? cores : static_cast<int>(llvm::hardware_concurrency().compute_thread_count());
  return p;
}

static json::Value registryJSON() {
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
    kinds.push_back(json::Object{{"kind", spec.kind},
                                 {"summary", spec.summary},
                                 {"renders", spec.renders},
                                 {"requires", spec.requires_},
                                 {"targets", json::Array(std::vector<json::Value>(spec.targets.begin(),
                                                                                  spec.targets.end()))},
                                 {"params", std::move(params)}});
  }
  return json::Object{{"format", "kforge-actions/1"}, {"actions", std::move(kinds)}};
}

/// --validate / --render: parse and check a schedule file; prints problems as JSON.
static int checkSchedule(const PayloadFacts &facts, llvm::StringRef file, llvm::StringRef resolvedTarget,
                         bool render) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer) {
    llvm::errs() << "kforge-tune: error: cannot read " << file << "\n";
    return 2;
  }
  llvm::Expected<json::Value> value = json::parse((*buffer)->getBuffer());
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
    llvm::outs() << llvm::formatv("{0:2}", json::Value(json::Object{{"status", "valid"},
                                                                     {"description", describe(schedule)}}))
                 << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&category, &llmCategory});
  cl::ParseCommandLineOptions(argc, argv, "kforge-tune: search for the fastest schedule of a payload\n");
  Tools tools = findTools(argv[0]);

  if (listActions) {
    llvm::outs() << llvm::formatv("{0:2}", registryJSON()) << "\n";
    return 0;
  }
  if (actionsDoc) {
    llvm::outs() << actionsMarkdown();
    return 0;
  }
  if (buildOnly && replay.empty()) {
    llvm::errs() << "kforge-tune: error: --build-only goes with --replay RUN_DIR\n";
    return 2;
  }
  if (!replay.empty())
    return replayRun(replay, tools, quiet || printJson, /*verify=*/!buildOnly);
  if (payloadPath.empty()) {
    llvm::errs() << "kforge-tune: error: no payload given (kforge-tune PAYLOAD.mlir; --help lists the options)\n";
    return 2;
  }
  if (target != "auto" && target != "gpu" && target != "cpu") {
    llvm::errs() << "kforge-tune: error: unknown --target '" << target << "' (expected auto, gpu or cpu)\n";
    return 2;
  }
  static const char *policies[] = {"heuristic+evolve", "heuristic", "evolve", "random", "llm", "llm+evolve"};
  if (llvm::none_of(policies, [](const char *p) { return policy == p; })) {
    llvm::errs() << "kforge-tune: error: unknown policy '" << policy
                 << "' (expected heuristic+evolve, heuristic, evolve, random, llm or llm+evolve)\n";
    return 2;
  }
  if (runnerMode != "serve" && runnerMode != "process") {
    llvm::errs() << "kforge-tune: error: unknown --runner '" << runnerMode << "' (expected serve or process)\n";
    return 2;
  }
  if (l2Flush != "dirty" && l2Flush != "clean") {
    llvm::errs() << "kforge-tune: error: unknown --l2-flush '" << l2Flush << "' (expected dirty or clean)\n";
    return 2;
  }
  if (l2Flush == "clean" && target == "cpu") {
    llvm::errs() << "kforge-tune: error: --l2-flush clean is for GPU trials; the CPU runner does not flush\n";
    return 2;
  }
  if (trials < 1 || reps < 10 || seeds < 1 || jobs < 0) {
    llvm::errs() << "kforge-tune: error: --trials and --seeds must be at least 1, --reps at least 10\n";
    return 2;
  }

  // Offline modes need no machine.
  if (dryRun > 0) {
    std::optional<PayloadFacts> facts = loadFacts(tools, payloadPath, entry);
    if (!facts)
      return 1;
    HardwareProfile profile = cpuProfile();
    if (target != "cpu") { // the GPU's profile if there is one, else the H200's shape
      std::optional<HardwareProfile> gpu = probeGpu(tools);
      profile = gpu ? *gpu : HardwareProfile{"gpu", "(no GPU: a 132-SM profile)", 132, 1024, 232448, 65536, 0};
    }
    std::string error;
    std::unique_ptr<Policy> p = createPolicy(policy, *facts, profile, seed, error);
    if (!p) {
      llvm::errs() << "kforge-tune: error: " << error << " (--dry-run takes the built-in policies)\n";
      return 2;
    }
    // The policy sees its earlier proposals as tried (and failed): what it would do if nothing compiled.
    std::vector<TrialRecord> history;
    while (static_cast<int>(history.size()) < dryRun) {
      std::vector<Proposal> batch = p->propose(history, std::min(8, dryRun - static_cast<int>(history.size())));
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
  if (!validateFile.empty() || !renderFile.empty()) {
    std::optional<PayloadFacts> facts = loadFacts(tools, payloadPath, entry);
    if (!facts)
      return 1;
    std::string resolved = target == "auto" ? "gpu" : target.getValue();
    return checkSchedule(*facts, validateFile.empty() ? renderFile : validateFile, resolved, !renderFile.empty());
  }

  TuneConfig config;
  std::optional<HardwareProfile> gpu = target == "cpu" ? std::nullopt : probeGpu(tools);
  if (target == "gpu" && !gpu) {
    llvm::errs() << "kforge-tune: error: --target gpu, but kforge-run finds no usable GPU ("
                 << tools.run << " --device-info says why)\n";
    return 1;
  }
  config.target = gpu ? "gpu" : "cpu";
  config.profile = gpu ? *gpu : cpuProfile();
  if (l2Flush == "clean" && !gpu) {
    llvm::errs() << "kforge-tune: error: --l2-flush clean is for GPU trials, and kforge-run finds no usable GPU\n";
    return 1;
  }
  config.l2Flush = l2Flush;
  config.chip = chip.empty() ? "sm_90" : chip.getValue();
  if (!ceilingsPath.empty() && !readCeilings(ceilingsPath, config.profile))
    return 2;
  if (!quiet && !printJson && target == "auto")
    llvm::errs() << "kforge-tune: target " << config.target << " (" << config.profile.name << ")\n";
  config.payloadPath = payloadPath;
  if (outputDir.empty()) {
    llvm::SmallString<256> dir("kforge-runs");
    llvm::sys::path::append(dir, llvm::sys::path::stem(payloadPath));
    config.runDir = std::string(dir);
  } else {
    config.runDir = outputDir;
  }
  config.entry = entry;
  config.policy = policy;
  config.seed = seed;
  config.trials = trials;
  config.timeBudget = timeBudget;
  config.earlyStop = earlyStop;
  config.jobs = jobs;
  config.seeds = seeds;
  config.reps = reps;
  config.compileTimeout = compileTimeout;
  config.runTimeout = runTimeout;
  config.memoryLimitMB = memoryLimit;
  config.cutoffFactor = cutoff;
  config.cutoffBestFactor = cutoffBest;
  config.runner = runnerMode;
  config.timingBudgetMs = timingBudget;
  config.resume = resume;
  config.keepCandidates = keepCandidates;
  config.quiet = quiet;
  config.json = printJson;
  config.weights = {scoreCompiles, scoreCorrect, scoreSpeedup};
  auto fromEnv = [](const std::string &flag, const char *variable, const char *fallback) {
    if (!flag.empty())
      return flag;
    std::optional<std::string> value = llvm::sys::Process::GetEnv(variable);
    return value ? *value : std::string(fallback);
  };
  LLMConfig &llm = config.llm.client;
  llm.api = fromEnv(llmApi, "KFORGE_LLM_API", "openai");
  llm.endpoint = fromEnv(llmEndpoint, "KFORGE_LLM_ENDPOINT", "");
  llm.model = fromEnv(llmModel, "KFORGE_LLM_MODEL", "");
  llm.apiKeyEnv = llmKeyEnv;
  llm.temperature = llmTemperature;
  llm.maxTokens = llmMaxTokens;
  llm.timeoutSeconds = llmTimeout;
  llm.maxRetries = llmRetries;
  llm.backoffMs = llmBackoffMs;
  llm.maxRequests = llmMaxRequests;
  llm.maxTotalTokens = llmMaxTokensTotal;
  llm.maxResponseBytes = static_cast<size_t>(llmMaxResponseKB) * 1024;
  llm.promptPricePerMTok = llmPromptPrice;
  llm.completionPricePerMTok = llmCompletionPrice;
  config.llm.replayPath = llmReplay;
  config.llm.repairRounds = llmRepairRounds;
  if (policy == "llm" || policy == "llm+evolve") {
    if (llm.api != "openai" && llm.api != "anthropic") {
      llvm::errs() << "kforge-tune: error: unknown --llm-api '" << llm.api << "' (expected openai or anthropic)\n";
      return 2;
    }
    if (llm.model.empty() && llmReplay.empty()) {
      llvm::errs() << "kforge-tune: error: --policy " << policy << " needs --llm-model (or $KFORGE_LLM_MODEL)\n";
      return 2;
    }
  }
  if (!tryFile.empty())
    return tryScheduleFile(config, tools, tryFile);
  return runTuner(config, tools);
}
