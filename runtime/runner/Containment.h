//===- Containment.h - what a candidate's process may not do ----*- C++ -*-===//
//
// kforge-run's judge (the process that decides verdicts and writes reports) never runs candidate code: an
// executor child does (Executor.h). Before the executor loads a candidate it contains itself, so that the
// candidate's host code cannot reach the judge or anything it trusts:
//  - every inherited file descriptor but its channel to the judge is closed; stdin is /dev/null and stdout
//    goes to stderr (which the judge only ever quotes as a diagnostic);
//  - it is its own process group and dies with the judge (PR_SET_PDEATHSIG);
//  - no new privileges, every capability dropped (as root this is what keeps /proc/<judge>/mem closed, with
//    the judge non-dumpable: see makeJudgeNonDumpable);
//  - seccomp: signals only to itself (kill, tgkill, rt_sigqueueinfo...), no ptrace, no process_vm_*, no new
//    processes (fork, vfork, clone without CLONE_THREAD), no execve;
//  - Landlock, where the kernel has it: no file may be created, written or removed outside /dev, and files
//    are readable only under the system directories and the directories the judge names (the staged
//    artifact, the runtime library, the library path), so the seed cache of expected outputs, the run
//    directory and the user's home are out of reach; no TCP, and (ABI 6) no signal leaves the sandbox.
// What was applied is reported ("containment" in every report), so a weaker kernel is visible, not silent.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_RUNNER_CONTAINMENT_H
#define KFORGE_RUNNER_CONTAINMENT_H

#include <string>
#include <vector>

namespace kforge {

struct ContainmentPlan {
  std::vector<int> keepDescriptors;      ///< Besides 0-2: the channel to the judge and its shared buffers.
  std::vector<std::string> readableDirs; ///< Readable (and executable) beyond the system directories.
  /// Paths the candidate must not be able to read (the seed cache): if one lies under a readable directory
  /// the report says the containment is partial.
  std::vector<std::string> secretDirs;
};

struct ContainmentReport {
  bool seccomp = false;
  int landlockAbi = 0;      ///< 0: no Landlock (the kernel lacks it or refused it).
  bool signalScope = false; ///< Landlock ABI 6: signals cannot leave the sandbox.
  std::vector<std::string> notes; ///< What is weaker than the full containment, one line each.
};

/// Contains the calling (executor) process as described above. Call in the child right after fork, before
/// anything loads candidate code. Failures of the optional layers (Landlock) are notes; a failure to close
/// descriptors or install the seccomp filter returns false with `error` set (the executor must then exit).
bool containCandidateProcess(const ContainmentPlan &plan, ContainmentReport &report, std::string &error);

/// The judge: not dumpable, so a process without CAP_SYS_PTRACE (a contained executor) cannot open its
/// /proc/<pid>/mem, environ or fds.
void makeJudgeNonDumpable();

} // namespace kforge

#endif // KFORGE_RUNNER_CONTAINMENT_H
