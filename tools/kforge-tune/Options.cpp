//===- Options.cpp - kforge-tune's command line ---------------------------===//

#include "Options.h"
#include "Files.h"

#include "Machine.h"
#include "RunDirectory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>

using namespace kforge::tune;
namespace cl = llvm::cl;

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
static cl::opt<double> slowBaseline(
    "slow-baseline-ms",
    cl::desc("A baseline whose first run takes longer than this is timed with kforge-run's fewest repetitions (10 "
             "after one warm-up) instead of --reps; their median is as steady as 20's for a run this long"),
    cl::init(25), cl::cat(category));
static cl::opt<double> referenceCheckMaxGflop(
    "reference-check-max-gflop",
    cl::desc("GPU: check the naive reference once against the CPU build of the payload when the problem is at "
             "most this many GFLOP (the CPU build runs untransformed loops at ~0.3-1 GFLOP/s; 0: never check)"),
    cl::init(2), cl::cat(category));
static cl::opt<double> referenceCheckMaxGB(
    "reference-check-max-gb", cl::desc("... and its arguments at most this many GB (0: never check)"), cl::init(2),
    cl::cat(category));
static cl::opt<int> referenceSamples(
    "reference-samples",
    cl::desc("Where the CPU build cannot check the reference (a larger problem, or --target cpu): check it "
             "against this many output elements computed in float64 on the host from the payload's IR (0: never)"),
    cl::init(512), cl::cat(category));
static cl::opt<double> referenceSampleSeconds(
    "reference-sample-seconds",
    cl::desc("... computing them for at most this many seconds (the elements done by then are checked)"), cl::init(20),
    cl::cat(category));
static cl::opt<std::string> l2Flush(
    "l2-flush",
    cl::desc("GPU trials: how the L2 flush before each timed repetition leaves L2: dirty (kforge-run writes a "
             "buffer of 4x L2, shared/MEASURE.md's protocol) or clean (it reads one, so no dirty lines are left)"),
    cl::init("dirty"), cl::cat(category));
static cl::opt<bool> allowTf32(
    "allow-tf32",
    cl::desc("Let fp32 matmuls run on TF32 tensor cores (10-bit mantissas, as PyTorch's "
             "torch.backends.cuda.matmul.allow_tf32): the tf32 action is proposed and its kernels are verified "
             "against TF32's tolerance (2^-9 relative L2) instead of fp32's. Off by default"),
    cl::init(false), cl::cat(category));
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
static cl::opt<bool> noSearch("no-search",
                              cl::desc("Set up the run (baseline, reference check) and finish it (export the best, "
                                       "the report) without searching: kforge.distributed's set-up and end"),
                              cl::init(false), cl::cat(category));
static cl::opt<int> propose("propose",
                            cl::desc("With -o RUN (set up by --no-search): print the policy's next N proposals "
                                     "(JSON lines) given RUN/db.jsonl and --pending"),
                            cl::init(0), cl::cat(category));
static cl::opt<std::string> pending("pending",
                                    cl::desc("With --propose: proposals in flight (--propose lines), counted as tried"),
                                    cl::value_desc("file"), cl::init(""), cl::cat(category));
static cl::opt<std::string> compileTrialDir(
    "compile-trial", cl::desc("With -o RUN: render and compile DIR/proposal.json (a --propose line) into DIR"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
static cl::opt<bool> trialServer("trial-server",
                                 cl::desc("With -o RUN: measure compiled candidates named on stdin (one JSON request "
                                          "a line) and print each one's record; appends nothing"),
                                 cl::init(false), cl::cat(category));
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
static cl::opt<std::string> llmPrompt(
    "llm-prompt",
    cl::desc("compact (the target's actions a line each, few-shot schedules from the run; for small local models) "
             "or full (the whole action registry's documentation)"),
    cl::init("compact"), cl::cat(llmCategory));
static cl::opt<bool> llmJsonSchema(
    "llm-json-schema",
    cl::desc("Constrain the reply to the schedule JSON schema (response_format json_object with a schema: "
             "llama.cpp's server, llama-cpp-python); OpenAI API only"),
    cl::init(false), cl::cat(llmCategory));
static cl::opt<bool> llmLocalRepair(
    "llm-local-repair",
    cl::desc("Make a rejected schedule valid by dropping the actions the validator names before asking the model "
             "again (the trial's step says so)"),
    cl::init(true), cl::cat(llmCategory));
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

/// The client and replay options of --policy llm; a flag left empty falls back to `variable`, then `fallback`.
static LLMPolicyOptions llmOptions() {
  auto fromEnv = [](const std::string &flag, const char *variable, const char *fallback) {
    if (!flag.empty())
      return flag;
    std::optional<std::string> value = llvm::sys::Process::GetEnv(variable);
    return value ? *value : std::string(fallback);
  };
  LLMPolicyOptions options;
  LLMConfig &llm = options.client;
  llm.api = fromEnv(llmApi, "KFORGE_LLM_API", "openai");
  llm.endpoint = fromEnv(llmEndpoint, "KFORGE_LLM_ENDPOINT", "");
  llm.model = fromEnv(llmModel, "KFORGE_LLM_MODEL", "");
  llm.apiKeyEnv = llmKeyEnv;
  // Before any child starts (the payload analysis runs before the LLM client exists).
  hideFromChildren(llm.apiKeyEnv);
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
  options.replayPath = llmReplay;
  options.repairRounds = llmRepairRounds;
  options.localRepair = llmLocalRepair;
  options.prompt = llmPrompt;
  options.constrain = llmJsonSchema;
  return options;
}

/// The options the search takes as given.
static TuneConfig givenConfig() {
  TuneConfig config;
  config.entry = entry;
  config.policy = policy;
  config.seed = seed;
  config.trials = trials;
  config.timeBudget = timeBudget;
  config.earlyStop = earlyStop;
  config.jobs = jobs;
  config.seeds = seeds;
  config.seedsGiven = seeds.getNumOccurrences() > 0;
  config.reps = reps;
  config.compileTimeout = compileTimeout;
  config.runTimeout = runTimeout;
  config.memoryLimitMB = memoryLimit;
  config.cutoffFactor = cutoff;
  config.cutoffBestFactor = cutoffBest;
  config.runner = runnerMode;
  config.timingBudgetMs = timingBudget;
  config.slowBaselineMs = slowBaseline;
  config.referenceCheckMaxGflop = referenceCheckMaxGflop;
  config.referenceCheckMaxGB = referenceCheckMaxGB;
  config.referenceSamples = referenceSamples;
  config.referenceSampleSeconds = referenceSampleSeconds;
  config.l2Flush = l2Flush;
  config.allowTf32 = allowTf32;
  config.resume = resume;
  config.search = !noSearch;
  config.keepCandidates = keepCandidates;
  config.quiet = quiet;
  config.json = printJson;
  config.weights = {scoreCompiles, scoreCorrect, scoreSpeedup};
  return config;
}

CommandLine kforge::tune::parseCommandLine(int argc, char **argv) {
  cl::HideUnrelatedOptions({&category, &llmCategory});
  // A malformed value (--trials abc, --seed -1) is a usage error like the values checkOptionValues refuses.
  if (!cl::ParseCommandLineOptions(argc, argv, "kforge-tune: search for the fastest schedule of a payload\n",
                                   &llvm::errs()))
    std::exit(2);
  CommandLine c;
  c.listActions = listActions;
  c.actionsDoc = actionsDoc;
  c.replayDir = replay;
  c.buildOnly = buildOnly;
  c.dryRun = dryRun;
  c.validateFile = validateFile;
  c.renderFile = renderFile;
  c.tryFile = tryFile;
  c.propose = propose;
  c.pendingFile = pending;
  c.compileTrialDir = compileTrialDir;
  c.trialServer = trialServer;
  c.payloadPath = payloadPath;
  c.outputDir = outputDir;
  c.target = target;
  c.chip = chip;
  c.ceilingsPath = ceilingsPath;
  c.runtimePath = runtimePath;
  c.config = givenConfig();
  c.llm = llmOptions();
  return c;
}

namespace {
/// The bounds of one numeric option; a value outside them is a usage error.
struct Bound {
  const char *flag;
  double value, min, max;
  const char *why; ///< What the bounds are, as the error says it.
};
} // namespace

/// `value` as the error shows it: an integer without decimals, nan and inf as such.
static std::string numberText(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  if (value == std::trunc(value) && std::fabs(value) < 1e18)
    return std::to_string(static_cast<long long>(value));
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

int kforge::tune::checkOptionValues(const CommandLine &c) {
  const TuneConfig &config = c.config;
  if (config.trials < 1 || config.reps < 10 || config.seeds < 1) {
    llvm::errs() << "kforge-tune: error: --trials and --seeds must be at least 1, --reps at least 10\n";
    return 2;
  }
  const LLMConfig &llm = c.llm.client;
  constexpr double kInt = 2147483647; // the largest int
  // Each numeric option that is given as a number: NaN and infinities fail every bound.
  const Bound bounds[] = {
      {"--trials", double(config.trials), 1, 1000000, "from 1 to 1000000"},
      {"--time-budget", config.timeBudget, 0, 1e9, "seconds, 0 (no limit) or more"},
      {"--early-stop", double(config.earlyStop), 0, kInt, "0 (never) or more trials"},
      {"--seed", double(config.seed), 0, 9007199254740992.0, "from 0 to 2^53 (run.json keeps it as a JSON number)"},
      {"--jobs", double(config.jobs), 0, 4096, "0 (all cores) to 4096"},
      {"--seeds", double(config.seeds), 1, 1000, "from 1 to 1000"},
      {"--reps", double(config.reps), 10, 1000000, "from 10 to 1000000"},
      {"--compile-timeout", double(config.compileTimeout), 1, 86400, "from 1 to 86400 seconds"},
      {"--run-timeout", double(config.runTimeout), 1, 86400, "from 1 to 86400 seconds"},
      {"--memory-limit-mb", double(config.memoryLimitMB), 1, kInt, "1 or more"},
      {"--cutoff", config.cutoffFactor, 0, 1e6, "0 (off) or a factor up to 1e6"},
      {"--cutoff-best", config.cutoffBestFactor, 0, 1e6, "0 (off) or a factor up to 1e6"},
      {"--timing-budget-ms", config.timingBudgetMs, 0, 1e9, "0 (always --reps) or more milliseconds"},
      {"--slow-baseline-ms", config.slowBaselineMs, 0, 1e9, "0 or more milliseconds"},
      {"--reference-check-max-gflop", config.referenceCheckMaxGflop, 0, 1e9, "0 (never check) or more GFLOP"},
      {"--reference-check-max-gb", config.referenceCheckMaxGB, 0, 1e9, "0 (never check) or more GB"},
      {"--reference-samples", double(config.referenceSamples), 0, 1000000, "from 0 (never) to 1000000 elements"},
      {"--reference-sample-seconds", config.referenceSampleSeconds, 0.1, 86400, "from 0.1 to 86400 seconds"},
      {"--dry-run", double(c.dryRun), 0, 1000000, "from 0 to 1000000 schedules"},
      {"--propose", double(c.propose), 0, 1000000, "from 0 to 1000000 schedules"},
      {"--score-compiles", config.weights.compiles, 0, 1e6, "a weight from 0 to 1e6"},
      {"--score-correct", config.weights.correct, 0, 1e6, "a weight from 0 to 1e6"},
      {"--score-speedup", config.weights.speedup, 0, 1e6, "a weight from 0 to 1e6"},
      {"--llm-temperature", llm.temperature, 0, 2, "from 0 to 2"},
      {"--llm-max-tokens", double(llm.maxTokens), 1, kInt, "1 or more"},
      {"--llm-timeout", double(llm.timeoutSeconds), 1, 86400, "from 1 to 86400 seconds"},
      {"--llm-retries", double(llm.maxRetries), 0, 20, "from 0 to 20"},
      {"--llm-backoff-ms", double(llm.backoffMs), 0, 600000, "from 0 to 600000"},
      {"--llm-max-requests", double(llm.maxRequests), 1, kInt, "1 or more"},
      {"--llm-max-total-tokens", double(llm.maxTotalTokens), 1, 1e15, "1 or more"},
      {"--llm-max-response-kb", double(llm.maxResponseBytes / 1024), 1, 1 << 20, "from 1 to 1048576 (1 GiB)"},
      {"--llm-repair-rounds", double(c.llm.repairRounds), 0, 100, "from 0 to 100"},
      {"--llm-prompt-price", llm.promptPricePerMTok, 0, 1e6, "0 or more dollars"},
      {"--llm-completion-price", llm.completionPricePerMTok, 0, 1e6, "0 or more dollars"},
  };
  for (const Bound &b : bounds) {
    if (b.value >= b.min && b.value <= b.max) // false for NaN
      continue;
    llvm::errs() << "kforge-tune: error: bad value " << numberText(b.value) << " for " << b.flag
                 << " (expected " << b.why << ")\n";
    return 2;
  }
  return 0;
}

int kforge::tune::checkPayloadOptions(const CommandLine &c) {
  const TuneConfig &config = c.config;
  if (c.payloadPath.empty()) {
    llvm::errs() << "kforge-tune: error: no payload given (kforge-tune PAYLOAD.mlir; --help lists the options)\n";
    return 2;
  }
  if (c.target != "auto" && c.target != "gpu" && c.target != "cpu") {
    llvm::errs() << "kforge-tune: error: unknown --target '" << c.target << "' (expected auto, gpu or cpu)\n";
    return 2;
  }
  static const char *policies[] = {"heuristic+evolve", "heuristic", "evolve", "random", "llm", "llm+evolve"};
  if (llvm::none_of(policies, [&](const char *p) { return config.policy == p; })) {
    llvm::errs() << "kforge-tune: error: unknown policy '" << config.policy
                 << "' (expected heuristic+evolve, heuristic, evolve, random, llm or llm+evolve)\n";
    return 2;
  }
  if (config.runner != "serve" && config.runner != "process") {
    llvm::errs() << "kforge-tune: error: unknown --runner '" << config.runner << "' (expected serve or process)\n";
    return 2;
  }
  if (config.l2Flush != "dirty" && config.l2Flush != "clean") {
    llvm::errs() << "kforge-tune: error: unknown --l2-flush '" << config.l2Flush << "' (expected dirty or clean)\n";
    return 2;
  }
  if (config.l2Flush == "clean" && c.target == "cpu") {
    llvm::errs() << "kforge-tune: error: --l2-flush clean is for GPU trials; the CPU runner does not flush\n";
    return 2;
  }
  if (config.allowTf32 && c.target == "cpu") {
    llvm::errs() << "kforge-tune: error: --allow-tf32 lets fp32 matmuls use the GPU's TF32 tensor cores; the CPU "
                    "target has none\n";
    return 2;
  }
  return 0;
}

/// --policy llm / llm+evolve: the API must be known and a model named (or a transcript to replay).
static int checkLLMOptions(const TuneConfig &config, const LLMPolicyOptions &options) {
  if (config.policy != "llm" && config.policy != "llm+evolve")
    return 0;
  const LLMConfig &llm = options.client;
  if (llm.api != "openai" && llm.api != "anthropic") {
    llvm::errs() << "kforge-tune: error: unknown --llm-api '" << llm.api << "' (expected openai or anthropic)\n";
    return 2;
  }
  if (options.prompt != "compact" && options.prompt != "full") {
    llvm::errs() << "kforge-tune: error: unknown --llm-prompt '" << options.prompt << "' (expected compact or full)\n";
    return 2;
  }
  if (llm.model.empty() && options.replayPath.empty()) {
    llvm::errs() << "kforge-tune: error: --policy " << config.policy << " needs --llm-model (or $KFORGE_LLM_MODEL)\n";
    return 2;
  }
  return 0;
}

/// The LLM policy with `options`, completed with what the run gives it.
static LLMPolicyFactory llmPolicyFactory(const LLMPolicyOptions &options) {
#ifdef KFORGE_TUNE_WITHOUT_LLM
  (void)options;
  return nullptr;
#else
  return [options](const LLMPolicyContext &context, const PayloadFacts &facts, const HardwareProfile &profile,
                   uint64_t seed) {
    LLMPolicyOptions o = options;
    o.payloadText = context.payloadText;
    o.transcriptPath = context.transcriptPath;
    o.note = context.note;
    o.checkScript = context.checkScript;
    o.hybrid = context.hybrid;
    return createLLMPolicy(std::move(o), facts, profile, seed);
  };
#endif
}

LLMPolicyFactory kforge::tune::llmPolicyOf(const CommandLine &c) { return llmPolicyFactory(c.llm); }

int kforge::tune::makeTuneConfig(CommandLine &c, const Tools &tools, TuneConfig &config) {
  config = c.config;
  std::optional<HardwareProfile> gpu = c.target == "cpu" ? std::nullopt : probeGpu(tools, c.chip);
  if (c.target == "gpu" && !gpu) {
    llvm::errs() << "kforge-tune: error: --target gpu, but kforge-run finds no usable GPU (" << tools.run
                 << " --device-info says why)\n";
    return 1;
  }
  config.target = gpu ? "gpu" : "cpu";
  config.profile = gpu ? *gpu : cpuProfile();
  if (config.l2Flush == "clean" && !gpu) {
    llvm::errs() << "kforge-tune: error: --l2-flush clean is for GPU trials, and kforge-run finds no usable GPU\n";
    return 1;
  }
  if (config.allowTf32 && !gpu) {
    // (--target auto on a machine without a GPU: fp32 stays fp32, verified as usual.)
    llvm::errs() << "kforge-tune: note: --allow-tf32 has no effect on the CPU target (no TF32 units)\n";
    config.allowTf32 = false;
  }
  config.chip = c.chip.empty() ? "sm_90" : c.chip;
  if (!c.ceilingsPath.empty() && !readCeilings(c.ceilingsPath, config.profile))
    return 2;
  if (!config.quiet && !config.json && c.target == "auto")
    llvm::errs() << "kforge-tune: target " << config.target << " (" << config.profile.name << ")\n";
  config.payloadPath = c.payloadPath;
  if (c.outputDir.empty()) {
    llvm::SmallString<256> dir("kforge-runs");
    llvm::sys::path::append(dir, llvm::sys::path::stem(c.payloadPath));
    config.runDir = std::string(dir);
  } else {
    config.runDir = c.outputDir;
  }
  // Child processes get paths under it (the artifact cache among them) and records keep it.
  config.runDir = absoluteRunDir(config.runDir);
  if (int rc = checkLLMOptions(config, c.llm))
    return rc;
  config.llmPolicy = llmPolicyFactory(c.llm);
  return 0;
}
