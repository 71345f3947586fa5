//===- SeedCache.h - inputs and reference outputs kept across runs -*- C++ -*-===//
//
// A search verifies hundreds of candidates against the same reference on the same seeds. Generating the
// random inputs and running the reference (a naive GPU kernel: ~85 ms per call for a 4096^3 gemm) once per
// seed instead of once per candidate and seed is most of kforge-tune's time per trial on the GPU. The cache
// stores, per seed, the inputs (after rounding to the candidate's element types) and the reference's
// outputs as raw float32 files under DIR/KEY/, where KEY names the reference build (its manifest hash) and
// the arguments' shapes and types. Files are written to a temporary name and renamed, so a reader never sees
// half a file; anything unreadable or of the wrong size is a miss. Each file ends with an HMAC-SHA-256 of its
// name and values under this user's cache key (the one kforge-compile's artifact cache uses), so reference
// outputs planted by hand, or copied from another user or machine, are a miss too and recomputed: the cache
// never decides a verdict. A long-lived runner (kforge-run --serve) also keeps them in memory, so a
// candidate's verification reads no files at all.
//
// Size bounds: a seed whose inputs and outputs take more than kMaxSeedFileBytes gets no files (on the H200, a
// 4 GB seed read back and checked took longer than drawing its inputs and running the reference again:
// docs/perf/kernelbench-h200.md, "Where the set-up goes"; writing and signing them cost as much again), and the
// in-memory entries stop growing at a quarter of the machine's memory (the executors hold the arguments too).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_SEEDCACHE_H
#define KFORGE_RUNNER_SEEDCACHE_H

#include "Floats.h"
#include "Metrics.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

/// Where this user's cache key lives: $KFORGE_CACHE_KEY_FILE, or ~/.cache/kforge/cache.key.
std::string cacheKeyPath();

/// Seeds larger than this (inputs and outputs, as floats) are not kept in files.
inline constexpr size_t kMaxSeedFileBytes = size_t(1) << 30;

class SeedCache {
public:
  /// `dir` empty and `inMemory` false: a cache that never hits and stores nothing. `inMemory`: entries stay
  /// in this process's memory too (for every SeedCache of the same key), in front of the files. `seedBytes`:
  /// the bytes of one seed's inputs and outputs (as floats), which decides whether files are used.
  SeedCache(std::string dir, std::string key, bool inMemory = false, size_t seedBytes = 0);
  bool enabled() const { return !root.empty() || !memoryKey.empty(); }
  /// Why the files are not used although a directory was given (no libcrypto, no key); empty otherwise.
  const std::string &disabledBecause() const { return note; }

  /// Fills `values[i]` (i in `which`) with `sizes[i]` floats of `seed`'s `kind` ("inputs" or "outputs").
  /// False (and `values` untouched) unless every selected argument is present with the right size.
  bool load(int seed, const std::string &kind, const std::vector<size_t> &which, const std::vector<size_t> &sizes,
            std::vector<Floats> &values) const;
  /// Points `data[i]` (i in `which`) at the in-memory entries of `seed`'s `kind`, without copying them: valid
  /// until this process stores that seed and kind again. False (and `data` untouched) unless every selected
  /// argument is held in memory with the right size.
  bool view(int seed, const std::string &kind, const std::vector<size_t> &which, const std::vector<size_t> &sizes,
            std::vector<const float *> &data) const;
  /// Stores the selected `values`; failures only cost a later recomputation.
  void store(int seed, const std::string &kind, const std::vector<size_t> &which,
             const std::vector<Floats> &values) const;
  /// store, except that the in-memory entries take the vectors over instead of copying them (a multi-GB seed's
  /// copy cost seconds): true when every selected argument is now held in memory (read it with view; its
  /// vector in `values` is left empty), false when it is not (`values` then still holds what is not kept).
  bool adopt(int seed, const std::string &kind, const std::vector<size_t> &which, std::vector<Floats> &values) const;

  /// The summary kept (keepSummary) for `seed`'s reference output `argument` of `size` floats, while that output
  /// is held in memory; nothing otherwise.
  std::optional<ReferenceSummary> summary(int seed, size_t argument, size_t size) const;
  /// Keeps `summary` (summarize of the in-memory entry) beside `seed`'s reference output `argument`, if that is
  /// held in memory with `size` floats; it is dropped with the entry.
  void keepSummary(int seed, size_t argument, size_t size, const ReferenceSummary &summary) const;

private:
  std::string file(int seed, const std::string &kind, size_t argument) const;
  void writeFiles(int seed, const std::string &kind, const std::vector<size_t> &which,
                  const std::vector<Floats> &values) const;
  std::array<unsigned char, 32> signature(int seed, const std::string &kind, size_t argument,
                                          const Floats &values) const;
  std::string root;      ///< DIR/KEY, or empty: no files.
  std::string memoryKey; ///< KEY, or empty: nothing kept in memory.
  std::string secret;    ///< This user's cache key.
  std::string note;
};

} // namespace kforge

#endif // KFORGE_RUNNER_SEEDCACHE_H
