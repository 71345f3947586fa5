//===- kforge-compile.cpp - payload (+ recipe) -> loadable artifact -------===//
//
//   kforge-compile PAYLOAD.mlir [--recipe R.mlir] [--target gpu|cpu] [--entry F] -o DIR [--name N]
//
// Writes DIR/N.so (C entry point _mlir_ciface_F), DIR/N.json (the manifest the runner reads), and the
// scheduled and lowered IR for inspection. See docs/artifacts.md.
//
//===----------------------------------------------------------------------===//

#include "kforge/Artifact/Artifact.h"
#include "kforge/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace cl = llvm::cl;

static cl::opt<std::string> payloadPath(cl::Positional, cl::desc("<payload.mlir>"), cl::Required);
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"), cl::value_desc("dir"), cl::Required);
static cl::opt<std::string> recipePath("recipe", cl::desc("Transform library to apply first"), cl::init(""));
static cl::opt<bool> naive("naive",
                           cl::desc("GPU: map each op to a one-thread-per-output kernel (the runner's reference)"),
                           cl::init(false));
static cl::opt<std::string> target("target", cl::desc("gpu or cpu"), cl::init("gpu"));
static cl::opt<std::string> entry("entry", cl::desc("Entry function (default: the only public one)"), cl::init(""));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture"), cl::init("sm_90"));
static cl::opt<std::string> features("features", cl::desc("PTX features"), cl::init("+ptx80"));
static cl::opt<int> optLevel("opt-level", cl::desc("Device code optimisation level"), cl::init(3));
static cl::opt<std::string> name("name", cl::desc("Base name of the files written"), cl::init("kernel"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "kforge artifact compiler\n");

  mlir::DialectRegistry registry;
  kforge::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the payload location; a dump of the whole op would bury them.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> payloadFile = mlir::openInputFile(payloadPath, &message);
  if (!payloadFile) {
    llvm::errs() << "kforge-compile: error: " << message << "\n";
    return 1;
  }
  std::string payloadText = payloadFile->getBuffer().str();
  std::string recipeText;
  if (!recipePath.empty()) {
    std::unique_ptr<llvm::MemoryBuffer> recipeFile = mlir::openInputFile(recipePath, &message);
    if (!recipeFile) {
      llvm::errs() << "kforge-compile: error: " << message << "\n";
      return 1;
    }
    recipeText = recipeFile->getBuffer().str();
  }
  sourceMgr.AddNewSourceBuffer(std::move(payloadFile), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> payload = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!payload)
    return 1;

  kforge::ArtifactOptions options;
  options.target = target;
  options.entry = entry;
  options.recipePath = recipePath;
  options.naive = naive;
  options.chip = chip;
  options.features = features;
  options.optLevel = optLevel;
  options.outputDir = outputDir;
  options.name = name;
  return mlir::failed(kforge::compileArtifact(*payload, payloadText, recipeText, options)) ? 1 : 0;
}
