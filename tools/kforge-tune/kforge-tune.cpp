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
// kforge-run (verification, timing) as child processes. The search is the KforgeTuner library (lib/); this
// main picks the mode. See docs/tune.md.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"
#include "Files.h"
#include "Machine.h"
#include "Modes.h"
#include "Options.h"
#include "Tuner.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace kforge::tune;

/// --propose, --compile-trial or --trial-server (kforge.distributed's seams) on the set-up run directory -o.
static int runDistributedMode(const CommandLine &commandLine, const Tools &tools) {
  if (commandLine.outputDir.empty()) {
    llvm::errs() << "kforge-tune: error: --propose, --compile-trial and --trial-server work on a run directory "
                    "(-o RUN, set up by --no-search)\n";
    return 2;
  }
  PayloadFacts facts;
  std::optional<TuneConfig> config = loadRunConfig(commandLine.config, commandLine.outputDir, facts);
  if (!config)
    return 1;
  config->llmPolicy = llmPolicyOf(commandLine);
  if (commandLine.propose > 0)
    return proposeTrials(*config, tools, facts, commandLine.propose, commandLine.pendingFile);
  if (!commandLine.compileTrialDir.empty())
    return compileTrial(*config, tools, facts, commandLine.compileTrialDir);
  return serveTrials(*config, tools, facts);
}

/// The mode the command line picks; its exit code.
static int runMode(CommandLine &commandLine, const Tools &tools) {
  const TuneConfig &given = commandLine.config;
  if (int rc = checkOptionValues(commandLine))
    return rc;

  if (commandLine.listActions)
    return printActionRegistry();
  if (commandLine.actionsDoc)
    return printActionsDoc();
  if (commandLine.buildOnly && commandLine.replayDir.empty()) {
    llvm::errs() << "kforge-tune: error: --build-only goes with --replay RUN_DIR\n";
    return 2;
  }
  if (!commandLine.replayDir.empty())
    return replayRun(commandLine.replayDir, tools, given.quiet || given.json, /*verify=*/!commandLine.buildOnly);
  if (commandLine.propose > 0 || !commandLine.compileTrialDir.empty() || commandLine.trialServer)
    return runDistributedMode(commandLine, tools);
  if (int rc = checkPayloadOptions(commandLine))
    return rc;

  // Offline modes need no machine.
  if (commandLine.dryRun > 0)
    return printDryRun(tools, commandLine.payloadPath, given.entry, commandLine.target, commandLine.chip, given.policy,
                       given.seed, commandLine.dryRun, given.allowTf32);
  if (!commandLine.validateFile.empty() || !commandLine.renderFile.empty()) {
    // Both given: the --validate file, rendered.
    return checkScheduleFile(tools, commandLine.payloadPath, given.entry, commandLine.target,
                             commandLine.validateFile.empty() ? commandLine.renderFile : commandLine.validateFile,
                             /*render=*/!commandLine.renderFile.empty(), given.allowTf32);
  }

  TuneConfig config;
  if (int rc = makeTuneConfig(commandLine, tools, config))
    return rc;
  if (!commandLine.tryFile.empty())
    return tryScheduleFile(config, tools, commandLine.tryFile);
  return runTuner(config, tools);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  CommandLine commandLine = parseCommandLine(argc, argv);
  Tools tools = findTools(argv[0], commandLine.runtimePath);
  int rc = runMode(commandLine, tools);
  // What could not be written to stdout (a full disk) is an error, not an abort at exit.
  if (!flushStdout() && rc == 0)
    rc = 1;
  // Nothing can be said about a stderr that cannot be written; the exit code says what happened.
  llvm::errs().clear_error();
  return rc;
}
