//===- Containment.cpp - what a candidate's process may not do ------------===//

#include "Containment.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace kforge;

void kforge::makeJudgeNonDumpable() { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// Closes every descriptor from 3 up except `keep`.
static void closeInheritedDescriptors(std::vector<int> keep) {
  keep.push_back(INT_MAX);
  std::sort(keep.begin(), keep.end());
  unsigned first = 3;
  for (int k : keep) {
    if (k < 3)
      continue;
    if (static_cast<unsigned>(k) > first) {
      unsigned last = k == INT_MAX ? ~0U : static_cast<unsigned>(k) - 1;
#ifdef SYS_close_range
      if (syscall(SYS_close_range, first, last, 0) == 0) {
        first = static_cast<unsigned>(k) + 1;
        continue;
      }
#endif
      // No close_range (kernel < 5.9): every descriptor up to the limit.
      rlimit limit{};
      getrlimit(RLIMIT_NOFILE, &limit);
      unsigned top = std::min<unsigned>(last, limit.rlim_cur == RLIM_INFINITY ? 1u << 20 : limit.rlim_cur);
      for (unsigned fd = first; fd <= top; ++fd)
        close(static_cast<int>(fd));
    }
    if (k == INT_MAX)
      break;
    first = static_cast<unsigned>(k) + 1;
  }
}

namespace {
/// A classic-BPF program for seccomp, built instruction by instruction.
struct Filter {
  std::vector<sock_filter> code;
  void load(uint32_t offset) { code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void jumpIfEqual(uint32_t value, uint8_t ifTrue, uint8_t ifFalse) {
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, ifTrue, ifFalse));
  }
  void ret(uint32_t action) { code.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  static uint32_t argLow(int i) { return offsetof(seccomp_data, args) + 8 * i; }
  static uint32_t argHigh(int i) { return offsetof(seccomp_data, args) + 8 * i + 4; }

  /// `nr` fails with `errnoValue`.
  void refuse(long nr, int errnoValue = EPERM) {
    jumpIfEqual(static_cast<uint32_t>(nr), 0, 1);
    ret(SECCOMP_RET_ERRNO | static_cast<uint32_t>(errnoValue));
  }
  /// `nr` is allowed only when its first argument (a pid or thread-group id) is exactly `self`.
  void onlyOnSelf(long nr, pid_t self) {
    jumpIfEqual(static_cast<uint32_t>(nr), 0, 6);
    load(argLow(0));
    jumpIfEqual(static_cast<uint32_t>(self), 0, 3);
    load(argHigh(0));
    jumpIfEqual(0, 0, 1);
    ret(SECCOMP_RET_ALLOW);
    ret(SECCOMP_RET_ERRNO | EPERM);
  }
  /// clone only for threads (CLONE_THREAD set): no new processes.
  void onlyThreads(long nr) {
    jumpIfEqual(static_cast<uint32_t>(nr), 0, 4);
    load(argLow(0));
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
    ret(SECCOMP_RET_ALLOW);
    ret(SECCOMP_RET_ERRNO | EPERM);
  }
};
} // namespace

static bool installSeccomp(std::string &error) {
#if defined(__x86_64__)
  const uint32_t arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  const uint32_t arch = AUDIT_ARCH_AARCH64;
#else
  error = "seccomp filter not written for this architecture";
  return false;
#endif
  pid_t self = getpid();
  Filter f;
  f.load(offsetof(seccomp_data, arch));
  f.jumpIfEqual(arch, 1, 0);
  f.ret(SECCOMP_RET_KILL_PROCESS);
  f.load(offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  // The x32 ABI's numbers (bit 30) would bypass the checks below.
  f.code.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  f.ret(SECCOMP_RET_ERRNO | EPERM);
#endif
  f.onlyOnSelf(SYS_kill, self);
  f.onlyOnSelf(SYS_tgkill, self);
  f.onlyOnSelf(SYS_rt_sigqueueinfo, self);
  f.onlyOnSelf(SYS_rt_tgsigqueueinfo, self);
  f.refuse(SYS_tkill);
  f.refuse(SYS_ptrace);
  f.refuse(SYS_process_vm_readv);
  f.refuse(SYS_process_vm_writev);
#ifdef SYS_pidfd_send_signal
  f.refuse(SYS_pidfd_send_signal);
#endif
#ifdef SYS_pidfd_open
  f.refuse(SYS_pidfd_open);
#endif
#ifdef SYS_pidfd_getfd
  f.refuse(SYS_pidfd_getfd);
#endif
#ifdef SYS_fork
  f.refuse(SYS_fork);
#endif
#ifdef SYS_vfork
  f.refuse(SYS_vfork);
#endif
  f.refuse(SYS_execve);
#ifdef SYS_execveat
  f.refuse(SYS_execveat);
#endif
#ifdef SYS_clone3
  // clone3's flags live in memory a filter cannot read: ENOSYS makes glibc fall back to clone for threads.
  f.refuse(SYS_clone3, ENOSYS);
#endif
  f.onlyThreads(SYS_clone);
  f.ret(SECCOMP_RET_ALLOW);

  sock_fprog program{static_cast<unsigned short>(f.code.size()), f.code.data()};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
    error = std::string("cannot install the seccomp filter: ") + std::strerror(errno);
    return false;
  }
  return true;
}

namespace {
// The Landlock ABI (include/uapi/linux/landlock.h), spelled out: Debian 12's header predates ABI 4-6.
struct RulesetAttr {
  uint64_t handledAccessFs, handledAccessNet, scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowedAccess;
  int32_t parentFd;
};
constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3,
                   kRemoveFile = 1ull << 5, kMakeReg = 1ull << 8, kTruncate = 1ull << 14, kIoctlDev = 1ull << 15;
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr int kRulePathBeneath = 1;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
#ifndef SYS_landlock_create_ruleset
constexpr long SYS_landlock_create_ruleset = 444, SYS_landlock_add_rule = 445, SYS_landlock_restrict_self = 446;
#endif

/// Every filesystem right of a Landlock ABI.
uint64_t fsRightsOf(int abi) {
  uint64_t rights = (1ull << 13) - 1; // ABI 1: execute .. make_sym
  if (abi >= 2)
    rights |= 1ull << 13; // refer
  if (abi >= 3)
    rights |= kTruncate;
  if (abi >= 5)
    rights |= kIoctlDev;
  return rights;
}
} // namespace

/// Whether `path` is `dir` or lies beneath it (both canonical).
static bool isBeneath(const std::string &path, const std::string &dir) {
  if (dir == "/")
    return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

static std::string canonical(const std::string &path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

static void applyLandlock(const ContainmentPlan &plan, ContainmentReport &report) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi <= 0) {
    report.notes.push_back("no Landlock in this kernel: the candidate can read and write the user's files");
    return;
  }
  uint64_t handled = fsRightsOf(static_cast<int>(abi));
  RulesetAttr attr{handled, abi >= 4 ? (kNetBindTcp | kNetConnectTcp) : 0,
                   abi >= 6 ? (kScopeAbstractUnix | kScopeSignal) : 0};
  size_t size = abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    report.notes.push_back(std::string("Landlock refused the ruleset: ") + std::strerror(errno));
    return;
  }
  uint64_t read = kExecute | kReadFile | kReadDir;
  uint64_t device = read | kWriteFile | kTruncate | kIoctlDev | kMakeReg | kRemoveFile; // /dev/shm files too
  std::vector<std::pair<std::string, uint64_t>> rules = {
      {"/usr", read},  {"/lib", read},  {"/lib32", read}, {"/lib64", read}, {"/libx32", read},
      {"/bin", read},  {"/sbin", read}, {"/etc", read},   {"/opt", read},   {"/run", read},
      {"/proc", read}, {"/sys", read},  {"/var/lib", read}, {"/dev", device},
      // The process's own /proc/<pid> (what /proc/self names when the rule is made): the CUDA driver writes
      // there (its threads' names, through pthread_setname_np: cuInit failed with CUDA_ERROR_OPERATING_SYSTEM
      // on the H200 without it, scripts/gpu/landlock_probe.cpp). Another process's entries stay read-only.
      {"/proc/self", read | kWriteFile | kTruncate}};
  for (const std::string &dir : plan.readableDirs)
    rules.push_back({dir, read});
  std::vector<std::string> readable;
  for (auto &[path, rights] : rules) {
    int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0)
      continue;
    struct stat info;
    uint64_t allowed = rights & handled;
    if (fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode))
      allowed &= kFileRights;
    PathBeneathAttr rule{allowed, fd};
    if (syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0) == 0)
      readable.push_back(canonical(path));
    close(fd);
  }
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    report.notes.push_back(std::string("Landlock refused to restrict the process: ") + std::strerror(errno));
    close(ruleset);
    return;
  }
  close(ruleset);
  report.landlockAbi = static_cast<int>(abi);
  report.signalScope = abi >= 6;
  for (const std::string &secret : plan.secretDirs) {
    std::string path = canonical(secret);
    for (const std::string &dir : readable)
      if (!path.empty() && !dir.empty() && isBeneath(path, dir)) {
        report.notes.push_back("the seed cache " + path + " lies under " + dir +
                               ", which the candidate can read: keep it elsewhere for a full containment");
        break;
      }
  }
}

static bool dropCapabilities(std::string &error) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) {
    error = std::string("cannot drop capabilities: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool kforge::containCandidateProcess(const ContainmentPlan &plan, ContainmentReport &report, std::string &error) {
  pid_t judge = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != judge) {
    error = "the judge is gone";
    return false;
  }
  setpgid(0, 0);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    error = std::string("cannot redirect stdin/stdout: ") + std::strerror(errno);
    return false;
  }
  close(null);
  closeInheritedDescriptors(plan.keepDescriptors);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    error = std::string("cannot set no_new_privs: ") + std::strerror(errno);
    return false;
  }
  applyLandlock(plan, report);
  if (!dropCapabilities(error))
    return false;
  if (!installSeccomp(error))
    return false;
  report.seccomp = true;
  return true;
}
