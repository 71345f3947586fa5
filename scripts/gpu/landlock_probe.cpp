// Which Landlock restriction of the executor's containment stops cuInit? Variants of Containment.cpp's ruleset,
// each in a fresh child, then cuInit(0) through dlopen'ed libcuda.so.1.
//   c++ -O1 -std=c++17 -I runtime/runner scripts/gpu/landlock_probe.cpp -ldl -o landlock_probe
#include "Containment.cpp"

#include <dlfcn.h>
#include <sys/wait.h>

struct Variant {
  const char *name;
  bool fs, net, scopeUnix, scopeSignal, ioctl;
  std::vector<std::pair<std::string, uint64_t>> extra;
};

static int run(const Variant &v) {
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  uint64_t handled = v.fs ? fsRightsOf(static_cast<int>(abi)) : 0;
  if (!v.ioctl)
    handled &= ~kIoctlDev;
  RulesetAttr attr{handled, v.net ? (kNetBindTcp | kNetConnectTcp) : 0,
                   (v.scopeUnix ? kScopeAbstractUnix : 0) | (v.scopeSignal ? kScopeSignal : 0)};
  int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof(RulesetAttr), 0));
  if (ruleset < 0) {
    std::printf("%-34s ruleset refused: %s\n", v.name, std::strerror(errno));
    return 1;
  }
  uint64_t read = kExecute | kReadFile | kReadDir;
  uint64_t device = read | kWriteFile | kTruncate | kIoctlDev | kMakeReg | kRemoveFile;
  std::vector<std::pair<std::string, uint64_t>> rules = {
      {"/usr", read},  {"/lib", read},  {"/lib32", read}, {"/lib64", read}, {"/libx32", read},
      {"/bin", read},  {"/sbin", read}, {"/etc", read},   {"/opt", read},   {"/run", read},
      {"/proc", read}, {"/sys", read},  {"/var/lib", read}, {"/dev", device}};
  rules.insert(rules.end(), v.extra.begin(), v.extra.end());
  if (v.fs)
    for (auto &[path, rights] : rules) {
      int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0)
        continue;
      struct stat info;
      uint64_t allowed = rights & handled;
      if (fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode))
        allowed &= kFileRights;
      PathBeneathAttr rule{allowed, fd};
      syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
      close(fd);
    }
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    std::printf("%-34s restrict refused: %s\n", v.name, std::strerror(errno));
    return 1;
  }
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  auto init = cuda ? reinterpret_cast<int (*)(unsigned)>(dlsym(cuda, "cuInit")) : nullptr;
  int rc = init ? init(0) : -1;
  std::printf("%-34s cuInit=%d%s\n", v.name, rc, cuda ? "" : " (dlopen failed)");
  std::fflush(stdout);
  return 0;
}

int main() {
  uint64_t all = ~0ull;
  std::vector<Variant> variants = {
      {"fs (as the executor)", true, false, false, false, true, {}},
      {"fs + / everything", true, false, false, false, true, {{"/", all}}},
      {"fs + /proc/self write", true, false, false, false, true, {{"/proc/self", kExecute | kReadFile | kReadDir | kWriteFile | kTruncate}}},
      {"fs + /proc everything", true, false, false, false, true, {{"/proc", all}}},
      {"fs + /sys everything", true, false, false, false, true, {{"/sys", all}}},
      {"fs + /dev everything", true, false, false, false, true, {{"/dev", all}}},
      {"fs + /run everything", true, false, false, false, true, {{"/run", all}}},
      {"fs + /var everything", true, false, false, false, true, {{"/var", all}}},
      {"fs + /root everything", true, false, false, false, true, {{"/root", all}}},
      {"fs + /etc everything", true, false, false, false, true, {{"/etc", all}}},
      {"fs + /usr everything", true, false, false, false, true, {{"/usr", all}}},
      {"fs + /tmp everything", true, false, false, false, true, {{"/tmp", all}}},
  };
  for (const Variant &v : variants) {
    pid_t child = fork();
    if (child == 0)
      _exit(run(v));
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status))
      std::printf("%-34s killed by signal %d\n", v.name, WTERMSIG(status));
  }
  return 0;
}
