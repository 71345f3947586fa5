//===- kforge-opt.cpp - kforge's mlir-opt -----------------------------------===//
//
// All upstream dialects, passes and transform extensions plus kforge's passes and
// pipelines. Compiler pipelines and the lit tests call this tool.
//
// Transform scripts are confined by default: before `-transform-interpreter` runs,
// every script it can see (the preloaded library and scripts inside the input) is
// checked against kforge's allowlist (kforge/Transforms/ScheduleConfinement.h), so
// replaying a schedule from a language model or a copied run directory cannot write
// files or inject foreign IR. `--kforge-trusted` turns the allowlist off for
// hand-written recipes that need more; the guards against upstream crashes stay.
//
//===----------------------------------------------------------------------===//

#include "kforge/InitAll.h"
#include "kforge/Support/SourceFile.h"
#include "kforge/Transforms/ScheduleConfinement.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static llvm::cl::opt<bool> trusted("kforge-trusted",
                                   llvm::cl::desc("Run transform scripts without kforge's allowlist of ops and "
                                                  "passes (only for hand-written recipes you trust)"),
                                   llvm::cl::init(false));

/// Puts kforge-confine-transform-scripts before every transform-interpreter of `pm`'s pipeline. The pipeline is
/// rebuilt from its textual form (which round-trips every pass and option), since a pass manager has no insertion.
static LogicalResult confineTransformScripts(PassManager &pm) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  StringRef interpreter = "transform-interpreter";
  std::string confine = std::string("kforge-confine-transform-scripts{trusted=") + (trusted ? "true" : "false") + "},";
  std::string rewritten;
  size_t from = 0;
  for (size_t at = text.find(interpreter); at != std::string::npos; at = text.find(interpreter, at + 1)) {
    size_t end = at + interpreter.size();
    bool startsPass = at > 0 && StringRef("(, ").contains(text[at - 1]);
    bool endsName = end == text.size() || StringRef("{,)").contains(text[end]);
    if (!startsPass || !endsName)
      continue;
    rewritten += text.substr(from, at - from) + confine;
    from = at;
  }
  if (from == 0)
    return success(); // no interpreter in this pipeline
  rewritten += text.substr(from);
  StringRef inner(rewritten);
  if (!inner.consume_front("builtin.module(") || !inner.consume_back(")")) {
    llvm::errs() << "kforge-opt: error: cannot confine transform scripts in the pipeline '" << text << "'\n";
    return failure();
  }
  pm.clear();
  return parsePassPipeline(inner, pm, llvm::errs());
}

int main(int argc, char **argv) {
  kforge::registerAllPasses();
  DialectRegistry registry;
  kforge::registerAllDialects(registry);
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, "kforge optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Upstream's driver as it is (it sets up LLVM's signal handlers itself).
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  llvm::InitLLVM init(argc, argv);
  MlirOptMainConfig fromCommandLine = config;
  config.setPassPipelineSetupFn([fromCommandLine](PassManager &pm) {
    if (failed(fromCommandLine.setupPassPipeline(pm)))
      return failure();
    return confineTransformScripts(pm);
  });
  // A regular file of bounded size and nesting (a FIFO would block, 60,000 nested regions overflow the parser).
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> read = kforge::readSourceFile(inputFilename);
  if (!read) {
    llvm::errs() << "kforge-opt: error: " << llvm::toString(read.takeError()) << "\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input = std::move(*read);
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
