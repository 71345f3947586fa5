//===- Manifest.h - an artifact's manifest (kforge-artifact/1) --*- C++ -*-===//

#ifndef KFORGE_RUNNER_MANIFEST_H
#define KFORGE_RUNNER_MANIFEST_H

#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

struct ManifestArgument {
  bool isOutput = false;
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t numElements() const;
};

struct Manifest {
  std::string directory; ///< Where the manifest was read from; the library path is relative to it.
  std::string entry;     ///< C entry point, e.g. _mlir_ciface_gemm.
  std::string library;   ///< Shared object file name.
  std::string target;    ///< "gpu" or "cpu".
  std::string hash;
  double flops = 0; ///< Floating-point operations per call (0: unknown).
  std::vector<ManifestArgument> arguments;
  std::string libraryPath() const { return directory + "/" + library; }
};

/// Reads `<directory>/<name>.json`. Returns an empty string on success, else a message saying what is wrong.
std::string readManifest(const std::string &directory, const std::string &name, Manifest &manifest);

} // namespace kforge

#endif // KFORGE_RUNNER_MANIFEST_H
