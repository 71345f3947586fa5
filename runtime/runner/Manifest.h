//===- Manifest.h - an artifact's manifest (kforge-artifact/1) --*- C++ -*-===//

#ifndef KFORGE_RUNNER_MANIFEST_H
#define KFORGE_RUNNER_MANIFEST_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

struct ManifestArgument {
  bool isOutput = false;
  std::string dtype;
  std::vector<int64_t> shape;
  /// Inputs: "positive" (the computation takes its square root or logarithm: kforge-run draws |N(0, 1)|, never 0),
  /// "index:N" (an integer input used as an index into a dimension of N, class indices: uniform integers in
  /// [0, N)) or empty (N(0, 1)). The judge uses the reference manifest's, never a candidate's.
  std::string domain;
  int64_t numElements() const;
};

/// The bound N of an "index:N" domain (0 < N <= 2^24, so every index is exact as a float); 0 for "positive"
/// and for no domain; nullopt for anything else.
std::optional<int64_t> parseDomain(const std::string &domain);

struct Manifest {
  std::string directory; ///< Where the manifest was read from; the library path is relative to it.
  std::string entry;     ///< C entry point, e.g. _mlir_ciface_gemm.
  std::string library;   ///< Shared object file name.
  std::string target;    ///< "gpu" or "cpu".
  std::string hash;
  double flops = 0; ///< Floating-point operations per call (0: unknown).
  /// The narrowest float type the computation rounds an intermediate to ("bf16"; empty: none recorded).
  std::string narrowestRounding;
  std::vector<ManifestArgument> arguments;
  std::string libraryPath() const { return directory + "/" + library; }
};

/// Opens `path` for reading if it is a regular file of at most `maxBytes` (never a FIFO, device or directory;
/// with `noFollow` never a symbolic link either): the descriptor, or -1 with `why` set.
/// `what` names the file in the message ("manifest", "library").
int openRegularFile(const std::string &path, const std::string &what, bool noFollow, size_t maxBytes,
                    std::string &why);

/// Reads `<directory>/<name>.json`. Returns an empty string on success, else a message saying what is wrong.
std::string readManifest(const std::string &directory, const std::string &name, Manifest &manifest);

} // namespace kforge

#endif // KFORGE_RUNNER_MANIFEST_H
