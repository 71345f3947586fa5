//===- Artifact.h - compile a payload into a loadable artifact --*- C++ -*-===//
//
// An artifact is what the runner loads: a shared object with the payload's C entry
// point (`_mlir_ciface_<entry>`, memref descriptors by pointer, GPU binary embedded for
// the GPU target) and a JSON manifest describing how to call it. It needs neither
// kforge nor MLIR to be loaded; a GPU artifact needs kforge's mgpu runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_ARTIFACT_ARTIFACT_H
#define KFORGE_ARTIFACT_ARTIFACT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <string>
#include <vector>

namespace kforge {

namespace tune {
/// Plain data the search reads (kforge/Tune/PayloadFacts.h); analyzePayload fills it, and only the callers that
/// read it or print it as JSON (kforge-compile --facts-json) need its header and the Tune library.
struct PayloadFacts;
} // namespace tune

/// One argument of the artifact's entry point, in call order.
struct ArgumentInfo {
  std::string role;  ///< "input" (only read) or "output" (written by the kernel).
  std::string dtype; ///< "f32", "f16", "bf16", "f64", "i32", ...
  std::vector<int64_t> shape;
  /// "positive" for an input the computation takes the square root or logarithm of (kforge-run draws positive
  /// values for it); empty: any value.
  std::string domain;
};

/// What to build.
struct ArtifactOptions {
  std::string target = "gpu"; ///< "gpu" or "cpu".
  std::string entry;          ///< Entry function; empty: the module's only public function with a body.
  std::string recipePath;     ///< Transform library applied first; empty: none.
  bool naive = false;         ///< GPU: one thread per output point, one kernel per op (the runner's reference).
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  int optLevel = 3;
  std::string outputDir;
  std::string name = "kernel"; ///< Base name of the files written (<name>.so, <name>.json, ...).
  std::string cacheDir;        ///< Reuse / keep artifacts under <cacheDir>/<content hash>/; empty: no cache.
  bool scheduleOnly = false;   ///< Stop after applying and verifying the schedule (writes <name>.scheduled.mlir).
  /// Skip the confinement of the recipe (kforge/TransformOps/ScheduleConfinement.h): for hand-written recipes
  /// that need ops or passes outside the allowlist. Never for schedules from a search, a model or a run directory.
  bool trusted = false;
  /// Called as each stage begins, so a caller can say where a failure happened: "schedule-parse",
  /// "check-uses", "apply", "verify", "lower", "codegen", "link", "manifest".
  std::function<void(llvm::StringRef)> onStage;
};

/// Writes `path` completely or not at all: into a temporary file beside it, checked for write errors (a full
/// disk) after the last byte and after closing, then renamed over `path`. On failure `path` is untouched, the
/// temporary file removed, and the error says why.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write);

/// The entry point's arguments after kforge's bufferization (results become trailing outputs). Fails with a
/// diagnostic on a missing or ambiguous entry or on an argument that is not a statically shaped tensor/memref.
mlir::FailureOr<std::vector<ArgumentInfo>> describeEntryArguments(mlir::ModuleOp payload, llvm::StringRef entry);

/// Floating-point operations one call performs: for every linalg op, its iteration points times the float
/// arithmetic in its body (an FMA counts 2, a math function 1; fills and copies 0). 0 if a bound is dynamic.
int64_t countFlops(mlir::ModuleOp payload, llvm::StringRef entry);

/// The entry function's name: `requested` if given and present, else the only public function with a body.
mlir::FailureOr<std::string> findEntry(mlir::ModuleOp payload, llvm::StringRef requested);

/// What the search needs to know about `payload`'s entry (`entry` empty: its only public function). Fails
/// with a diagnostic when the returned value is not produced by a linalg op with static loop sizes.
mlir::FailureOr<tune::PayloadFacts> analyzePayload(mlir::ModuleOp payload, llvm::StringRef entry);

/// Compiles `payload` (consumed) into `<outputDir>/<name>.so` and `<name>.json`, keeping the scheduled and
/// lowered IR next to them. `payloadText`/`recipeText` feed the manifest's content hash. Diagnostics go to
/// the context's handler; failures are returned, never aborted on.
mlir::LogicalResult compileArtifact(mlir::ModuleOp payload, llvm::StringRef payloadText, llvm::StringRef recipeText,
                                    const ArtifactOptions &options);

} // namespace kforge

#endif // KFORGE_ARTIFACT_ARTIFACT_H
