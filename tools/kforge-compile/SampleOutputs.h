//===- SampleOutputs.h - kforge-compile --sample-outputs -------*- C++ -*-===//

#ifndef KFORGE_COMPILE_SAMPLEOUTPUTS_H
#define KFORGE_COMPILE_SAMPLEOUTPUTS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kforge {

struct SampleOptions {
  std::string outputPath;   ///< The samples, as JSON (kforge-samples/1).
  std::string manifestPath; ///< The reference's manifest: argument order, element types and input domains.
  int seed = 0;             ///< Whose inputs (kforge-run's draw for this seed).
  int samples = 512;        ///< Output elements to evaluate, over all outputs.
  double seconds = 60;      ///< Evaluation stops after this long; what was evaluated is kept.
};

/// Evaluates `samples` output elements of the payload's entry in float64 on the host, on the inputs kforge-run
/// draws for `seed` (the runtime's own generator), and writes them with their positions. The first and last
/// element and the corners of each output come first, then positions drawn at random. Returns the exit code.
int sampleOutputs(mlir::ModuleOp payload, const std::string &entry, const SampleOptions &options);

} // namespace kforge

#endif // KFORGE_COMPILE_SAMPLEOUTPUTS_H
