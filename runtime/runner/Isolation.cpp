//===- Isolation.cpp - run work in a child process with limits -----------===//

#include "Isolation.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kforge;

static void writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

ChildOutcome kforge::runIsolated(const std::function<std::string()> &work, int timeoutSeconds, size_t memoryBytes) {
  ChildOutcome outcome;
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    outcome.status = "failed";
    outcome.reason = std::string("pipe: ") + strerror(errno);
    return outcome;
  }
  pid_t pid = fork();
  if (pid < 0) {
    outcome.status = "failed";
    outcome.reason = std::string("fork: ") + strerror(errno);
    return outcome;
  }
  if (pid == 0) {
    close(out[0]);
    close(err[0]);
    dup2(err[1], STDERR_FILENO);
    if (memoryBytes > 0) {
      struct rlimit limit = {memoryBytes, memoryBytes};
      setrlimit(RLIMIT_AS, &limit);
    }
    std::string result = work();
    writeAll(out[1], result);
    close(out[1]);
    _exit(0);
  }
  close(out[1]);
  close(err[1]);

  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  bool timedOut = false;
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  char buffer[4096];
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      (i == 0 ? outcome.output : outcome.errors).append(buffer, static_cast<size_t>(n));
    }
  }
  for (auto &fd : fds)
    if (fd.fd >= 0)
      close(fd.fd);
  int status = 0;
  waitpid(pid, &status, 0);
  if (outcome.errors.size() > 2000)
    outcome.errors = outcome.errors.substr(outcome.errors.size() - 2000);

  if (timedOut) {
    outcome.status = "timeout";
    outcome.reason = "timed out after " + std::to_string(timeoutSeconds) + " s (killed)";
  } else if (WIFSIGNALED(status)) {
    outcome.status = "crashed";
    outcome.reason =
        std::string("crashed: signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    outcome.status = "failed";
    outcome.reason = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else {
    outcome.status = "ok";
  }
  return outcome;
}
