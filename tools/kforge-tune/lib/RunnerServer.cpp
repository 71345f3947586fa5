//===- RunnerServer.cpp - a long-lived kforge-run for a search ------------===//

#include "RunnerServer.h"

#include "Files.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kforge::tune;

RunnerServer::RunnerServer(std::string program, std::vector<std::string> args, std::string log)
    : program(std::move(program)), log(std::move(log)), args(std::move(args)) {}

RunnerServer::~RunnerServer() { stop(); }

bool RunnerServer::start(std::string &why) {
  // A write to a server that just died must be an error (EPIPE), not this process's death.
  std::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0)
    return why = std::string("pipe: ") + std::strerror(errno), false;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return why = std::string("pipe: ") + std::strerror(errno), false;
  }
  // posix_spawn, not fork: this process runs a thread pool for compiles.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char *> argv{const_cast<char *>(program.c_str())};
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  ChildEnvironment env;
  int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), env.envp());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]), close(out[0]);
    pid = -1;
    return why = "cannot start " + program + ": " + std::strerror(rc), false;
  }
  toServer = in[1];
  fromServer = out[0];
  pending.clear();
  ++started;
  return true;
}

void RunnerServer::stop() {
  if (toServer >= 0)
    close(toServer); // end of input: an idle server exits by itself
  if (fromServer >= 0)
    close(fromServer);
  toServer = fromServer = -1;
  if (pid > 0) {
    // A server busy with a candidate (or hung in one) is not waited for.
    for (int i = 0; i < 20 && waitpid(pid, nullptr, WNOHANG) == 0; ++i)
      usleep(10000);
    if (waitpid(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  pid = -1;
}

std::string RunnerServer::logTailSince(long offset) const {
  FILE *f = std::fopen(log.c_str(), "r");
  if (!f)
    return "";
  std::fseek(f, offset, SEEK_SET);
  std::string text;
  char chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    text.append(chunk, n);
  std::fclose(f);
  // The runtime names the failed CUDA call before it aborts: that is the reason worth reporting.
  size_t at = text.rfind("kforge runtime: ");
  if (at != std::string::npos)
    return text.substr(at, text.find('\n', at) - at);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  size_t lastLine = text.rfind('\n');
  return lastLine == std::string::npos ? text : text.substr(lastLine + 1);
}

std::optional<std::string> RunnerServer::request(const std::string &line, unsigned timeoutSeconds,
                                                 std::string &why) {
  if (pid <= 0 && !start(why))
    return std::nullopt;
  struct stat info;
  long logOffset = ::stat(log.c_str(), &info) == 0 ? static_cast<long>(info.st_size) : 0;
  std::string message = line + "\n";
  for (size_t sent = 0; sent < message.size();) {
    ssize_t n = write(toServer, message.data() + sent, message.size() - sent);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      why = "the runner is gone (" + std::string(std::strerror(errno)) + ")";
      stop();
      return std::nullopt;
    }
    sent += static_cast<size_t>(n);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  while (true) {
    size_t newline = pending.find('\n');
    if (newline != std::string::npos) {
      std::string reply = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      // A server whose GPU context a candidate poisoned says so in its reply ("runner_exit") and exits; the
      // next request must not be sent to it, or an innocent candidate would be recorded as its crash.
      if (reply.find("\"runner_exit\"") != std::string::npos)
        stop();
      return reply;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop();
      why = "timed out after " + std::to_string(timeoutSeconds) + " s (the runner was restarted)";
      return std::nullopt;
    }
    pollfd p{fromServer, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      why = std::string("poll: ") + std::strerror(errno);
      stop();
      return std::nullopt;
    }
    if (ready <= 0)
      continue;
    char chunk[65536];
    ssize_t n = read(fromServer, chunk, sizeof(chunk));
    if (n > 0) {
      pending.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    // End of file: the server died with this candidate.
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    stop();
    std::string what = WIFSIGNALED(status) ? std::string("killed by signal ") + strsignal(WTERMSIG(status))
                                           : "exited with status " + std::to_string(WEXITSTATUS(status));
    std::string detail = logTailSince(logOffset);
    why = "the runner " + what + (detail.empty() ? std::string() : ": " + detail);
    return std::nullopt;
  }
}
