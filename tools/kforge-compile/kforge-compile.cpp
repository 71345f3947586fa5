//===- kforge-compile.cpp - payload (+ recipe) -> loadable artifact -------===//
//
//   kforge-compile PAYLOAD.mlir [--recipe R.mlir] [--target gpu|cpu] [--entry F] -o DIR [--name N]
//   kforge-compile PAYLOAD.mlir --facts-json FILE      (what kforge-tune needs to know; no compile)
//   kforge-compile PAYLOAD.mlir --sample-outputs FILE --manifest M.json [--seed S] [--samples N]
//                                                       (output elements in float64 on the host; no compile)
//
// Writes DIR/N.so (C entry point _mlir_ciface_F), DIR/N.json (the manifest the runner reads), and the
// scheduled and lowered IR for inspection. See docs/artifacts.md.
//
//===----------------------------------------------------------------------===//

#include "SampleOutputs.h"

#include "kforge/Artifact/Artifact.h"
#include "kforge/InitAll.h"
#include "kforge/Support/SourceFile.h"
#include "kforge/Tune/PayloadFacts.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"

namespace cl = llvm::cl;

static cl::opt<std::string> payloadPath(cl::Positional, cl::desc("<payload.mlir>"), cl::Required);
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"), cl::value_desc("dir"), cl::init(""));
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
static cl::opt<std::string> cacheDir("cache-dir",
                                     cl::desc("Reuse artifacts compiled before from this directory, keyed by the "
                                              "hash of payload, recipe, options and versions"),
                                     cl::init(""));
static cl::opt<std::string>
    diagnosticsPath("diagnostics-json",
                    cl::desc("Write the stage reached and every diagnostic (severity, message, file, line, column) "
                             "to this JSON file, for tools that act on failures"),
                    cl::init(""));
static cl::opt<std::string> factsPath("facts-json",
                                      cl::desc("Only analyse the payload: write what kforge-tune needs to know about "
                                               "it (root op, loop sizes, contraction, hash) to this JSON file"),
                                      cl::init(""));
static cl::opt<std::string>
    samplesPath("sample-outputs",
                cl::desc("Only evaluate output elements: write chosen elements of the entry's results, computed in "
                         "float64 on the host from the inputs kforge-run draws for --seed, to this JSON file "
                         "(kforge-tune's independent check of the reference on problems too large for the CPU "
                         "build)"),
                cl::init(""));
static cl::opt<std::string> samplesManifest("manifest",
                                            cl::desc("--sample-outputs: the reference artifact's manifest (its "
                                                     "argument order, element types and input domains)"),
                                            cl::init(""));
static cl::opt<int> samplesSeed("seed", cl::desc("--sample-outputs: whose inputs"), cl::init(0));
static cl::opt<int> samplesCount("samples", cl::desc("--sample-outputs: how many output elements"), cl::init(512));
static cl::opt<double> samplesSeconds("sample-seconds",
                                      cl::desc("--sample-outputs: stop evaluating after this long, keeping what "
                                               "was evaluated"),
                                      cl::init(60));
static cl::opt<bool> scheduleOnly("schedule-only",
                                  cl::desc("Stop after applying and verifying the recipe (writes N.scheduled.mlir)"),
                                  cl::init(false));
static cl::opt<bool> trusted("kforge-trusted",
                             cl::desc("Apply the recipe without kforge's allowlist of transform ops and passes (only "
                                      "for hand-written recipes you trust; never for schedules from a model)"),
                             cl::init(false));
static cl::opt<unsigned> timeout("timeout", cl::desc("Compile in a child process killed after this many seconds"),
                                 cl::init(0));
static cl::opt<unsigned> memoryLimitMB("memory-limit-mb",
                                       cl::desc("Compile in a child process limited to this much memory"), cl::init(0));

namespace {
/// The stage the compile reached and the diagnostics it produced, kept up to date in --diagnostics-json so
/// that a compile killed for time or memory still says where it was.
class DiagnosticsReport {
public:
  void enter(llvm::StringRef newStage) {
    stage = newStage.str();
    write("running");
  }
  void record(mlir::Diagnostic &diagnostic) {
    llvm::json::Object entry{{"severity", severityName(diagnostic.getSeverity())}, {"message", diagnostic.str()}};
    if (auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(diagnostic.getLocation())) {
      entry["file"] = loc.getFilename().str();
      entry["line"] = loc.getLine();
      entry["column"] = loc.getColumn();
    }
    llvm::json::Array notes;
    for (mlir::Diagnostic &note : diagnostic.getNotes())
      notes.push_back(note.str());
    if (!notes.empty())
      entry["notes"] = std::move(notes);
    diagnostics.push_back(std::move(entry));
  }
  void finish(bool ok) { write(ok ? "ok" : "failed"); }
  /// Written by the parent when the child did not finish: keeps the child's stage and diagnostics.
  static void markUnfinished(llvm::StringRef path, llvm::StringRef status, llvm::StringRef message) {
    llvm::json::Object report{{"format", "kforge-diagnostics/1"}, {"stage", "unknown"}};
    if (auto buffer = llvm::MemoryBuffer::getFile(path)) {
      llvm::Expected<llvm::json::Value> old = llvm::json::parse((*buffer)->getBuffer());
      if (old && old->getAsObject())
        report = *old->getAsObject();
      else if (!old)
        llvm::consumeError(old.takeError());
    }
    report["status"] = status.str();
    report["message"] = message.str();
    writeJSON(path, llvm::json::Value(std::move(report)));
  }

private:
  static const char *severityName(mlir::DiagnosticSeverity severity) {
    switch (severity) {
    case mlir::DiagnosticSeverity::Error:
      return "error";
    case mlir::DiagnosticSeverity::Warning:
      return "warning";
    case mlir::DiagnosticSeverity::Note:
      return "note";
    case mlir::DiagnosticSeverity::Remark:
      return "remark";
    }
    return "error";
  }
  static void writeJSON(llvm::StringRef path, llvm::json::Value value) {
    if (llvm::Error error = kforge::writeFileAtomically(
            path, [&](llvm::raw_ostream &os) { os << llvm::formatv("{0:2}", value) << "\n"; }))
      llvm::errs() << "kforge-compile: warning: " << llvm::toString(std::move(error))
                   << "\n";
  }
  void write(llvm::StringRef status) {
    if (diagnosticsPath.empty())
      return;
    writeJSON(diagnosticsPath, llvm::json::Object{{"format", "kforge-diagnostics/1"},
                                                  {"status", status.str()},
                                                  {"stage", stage},
                                                  {"diagnostics", llvm::json::Array(diagnostics)}});
  }

  std::string stage = "parse";
  llvm::json::Array diagnostics;
};
} // namespace

/// Runs this tool again, without the isolation flags, in a child process with the given limits, so a
/// schedule that makes the compiler crash, hang or exhaust memory fails with a message instead.
static int compileIsolated(int argc, char **argv) {
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], reinterpret_cast<void *>(&compileIsolated));
  std::vector<std::string> storage;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    bool isolationFlag = arg.starts_with("--timeout") || arg.starts_with("-timeout") ||
                         arg.starts_with("--memory-limit-mb") || arg.starts_with("-memory-limit-mb");
    if (isolationFlag) {
      if (!arg.contains('=') && i + 1 < argc)
        ++i; // the flag's value is the next argument
      continue;
    }
    storage.push_back(arg.str());
  }
  std::vector<llvm::StringRef> args{self};
  args.insert(args.end(), storage.begin(), storage.end());
  std::string message;
  bool executionFailed = false;
  int rc = llvm::sys::ExecuteAndWait(self, args, std::nullopt, {}, timeout, memoryLimitMB, &message, &executionFailed);
  if (rc >= 0)
    return rc;
  std::string why = "the compile did not finish: " + (message.empty() ? std::string("crashed") : message) +
                    " (limits: " + (timeout ? std::to_string(timeout) + " s" : "no time limit") + ", " +
                    (memoryLimitMB ? std::to_string(memoryLimitMB) + " MB" : "no memory limit") + ")";
  llvm::errs() << "kforge-compile: error: " << why << "\n";
  if (!diagnosticsPath.empty())
    DiagnosticsReport::markUnfinished(diagnosticsPath, llvm::StringRef(message).contains("timed out") ? "timeout" : "crashed", why);
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "kforge artifact compiler\n");
  if (timeout || memoryLimitMB)
    return compileIsolated(argc, argv);

  mlir::DialectRegistry registry;
  kforge::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the payload location; a dump of the whole op would bury them.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  DiagnosticsReport report;
  mlir::ScopedDiagnosticHandler recorder(&context, [&](mlir::Diagnostic &diagnostic) {
    report.record(diagnostic);
    return mlir::failure(); // and print it as usual
  });
  report.enter("parse");
  // Regular files of bounded size and nesting only (kforge/Support/SourceFile.h).
  auto read = [&](llvm::StringRef path) -> std::unique_ptr<llvm::MemoryBuffer> {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file = kforge::readSourceFile(path);
    if (file)
      return std::move(*file);
    llvm::errs() << "kforge-compile: error: " << llvm::toString(file.takeError()) << "\n";
    report.finish(false);
    return nullptr;
  };
  std::unique_ptr<llvm::MemoryBuffer> payloadFile = read(payloadPath);
  if (!payloadFile)
    return 1;
  std::string payloadText = payloadFile->getBuffer().str();
  std::string recipeText;
  if (!recipePath.empty()) {
    std::unique_ptr<llvm::MemoryBuffer> recipeFile = read(recipePath);
    if (!recipeFile)
      return 1;
    recipeText = recipeFile->getBuffer().str();
  }
  sourceMgr.AddNewSourceBuffer(std::move(payloadFile), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> payload = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!payload) {
    report.finish(false);
    return 1;
  }

  if (!factsPath.empty()) {
    llvm::FailureOr<kforge::tune::PayloadFacts> facts = kforge::analyzePayload(*payload, entry);
    if (llvm::failed(facts))
      return 1;
    if (llvm::Error error = kforge::writeFileAtomically(factsPath, [&](llvm::raw_ostream &os) {
          os << llvm::formatv("{0:2}", kforge::tune::toJSON(*facts)) << "\n";
        })) {
      llvm::errs() << "kforge-compile: error: " << llvm::toString(std::move(error))
                   << "\n";
      return 1;
    }
    return 0;
  }
  if (!samplesPath.empty()) {
    if (samplesManifest.empty() || samplesCount <= 0 || !(samplesSeconds > 0) || samplesSeed < 0) {
      llvm::errs() << "kforge-compile: error: --sample-outputs needs --manifest FILE, --samples N > 0, "
                      "--sample-seconds S > 0 and --seed S >= 0\n";
      return 2;
    }
    return kforge::sampleOutputs(*payload, entry,
                                 {samplesPath, samplesManifest, samplesSeed, samplesCount, samplesSeconds});
  }
  if (outputDir.empty()) {
    llvm::errs() << "kforge-compile: error: no output directory (-o DIR)\n";
    return 2;
  }
  // The name becomes file names inside -o: a path in it would write elsewhere.
  if (name.empty() || name == "." || name == ".." || llvm::StringRef(name).contains('/') ||
      llvm::StringRef(name).contains('\0')) {
    llvm::errs() << "kforge-compile: error: --name must be a plain file name (no '/', not '.' or '..'), not '"
                 << name << "'\n";
    return 2;
  }
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
  options.cacheDir = cacheDir;
  options.scheduleOnly = scheduleOnly;
  options.trusted = trusted;
  options.onStage = [&](llvm::StringRef stage) { report.enter(stage); };
  bool ok = mlir::succeeded(kforge::compileArtifact(*payload, payloadText, recipeText, options));
  report.finish(ok);
  return ok ? 0 : 1;
}
