// Which layer of the executor's containment (runtime/runner/Containment.cpp) stops cuInit on a GPU machine?
// Each mode runs in a fresh child: it applies the named layers exactly as the executor does (this file includes
// Containment.cpp, so the probe runs the same code), then dlopens libcuda.so.1 and calls cuInit(0).
//   c++ -O1 -std=c++17 -I runtime/runner scripts/gpu/containment_probe.cpp -ldl -o containment_probe
//   ./containment_probe            # one line per mode: the layers applied and cuInit's result
#include "Containment.cpp"

#include <dlfcn.h>
#include <sys/wait.h>

static int probe(const std::string &layers) {
  ContainmentReport report;
  std::string error;
  ContainmentPlan plan;
  if (layers.find("nnp") != std::string::npos && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return 100;
  if (layers.find("landlock") != std::string::npos)
    applyLandlock(plan, report);
  if (layers.find("caps") != std::string::npos && !dropCapabilities(error))
    return 101;
  if (layers.find("seccomp") != std::string::npos && !installSeccomp(error))
    return 102;
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!cuda) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 103;
  }
  auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(cuda, "cuInit"));
  int rc = init ? init(0) : -1;
  std::printf("%-28s landlock_abi=%d notes=%zu cuInit=%d\n", layers.c_str(), report.landlockAbi,
              report.notes.size(), rc);
  for (const std::string &note : report.notes)
    std::printf("    note: %s\n", note.c_str());
  std::fflush(stdout);
  return rc == 0 ? 0 : 1;
}

int main() {
  for (std::string layers : {"none", "nnp", "nnp+caps", "nnp+landlock", "nnp+seccomp", "nnp+landlock+caps",
                             "nnp+caps+seccomp", "nnp+landlock+seccomp", "nnp+landlock+caps+seccomp"}) {
    pid_t child = fork();
    if (child == 0)
      _exit(probe(layers));
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status))
      std::printf("%-28s killed by signal %d\n", layers.c_str(), WTERMSIG(status));
  }
  return 0;
}
