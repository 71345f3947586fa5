//===- Isolation.h - run work in a child process with limits ----*- C++ -*-===//

#ifndef KFORGE_RUNNER_ISOLATION_H
#define KFORGE_RUNNER_ISOLATION_H

#include <cstddef>
#include <functional>
#include <string>

namespace kforge {

struct ChildOutcome {
  std::string status; ///< "ok", "timeout", "crashed" (killed by a signal) or "failed" (non-zero exit).
  std::string output; ///< What the work returned (sent back over a pipe).
  std::string errors; ///< The tail of the child's stderr (e.g. the CUDA error the runtime printed).
  std::string reason; ///< One line for a report when status is not "ok".
};

/// Why not llvm::sys::ExecuteAndWait (which kforge-compile uses): kforge-run links no LLVM, so it runs on the
/// GPU machine without carrying libLLVM, and the work here is a function of this process (forked after the
/// artifacts' manifests are read, before CUDA is initialised) whose report comes back over a pipe.
///
/// Runs `work` in a forked child: wall-clock limit `timeoutSeconds`, address-space limit `memoryBytes`
/// (0: none; CUDA reserves huge virtual ranges, so leave it 0 for GPU work). A crash, hang or out-of-memory
/// in the child becomes an outcome, never the caller's death. Call before this process initialises CUDA.
ChildOutcome runIsolated(const std::function<std::string()> &work, int timeoutSeconds, size_t memoryBytes);

} // namespace kforge

#endif // KFORGE_RUNNER_ISOLATION_H
