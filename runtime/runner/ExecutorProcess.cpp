//===- ExecutorProcess.cpp - the judge's handle of an executor ------------===//

#include "Executor.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kforge;
using json = nlohmann::json;

/// A reply line longer than this is a broken protocol (the longest honest one, a timing report with its
/// samples, is a few kB).
static constexpr size_t kMaxReplyBytes = size_t(4) << 20;
static constexpr size_t kStderrTailBytes = 4000;

ArgumentLayout ArgumentLayout::of(const std::vector<size_t> &counts) {
  ArgumentLayout layout;
  layout.counts = counts;
  for (size_t count : counts) {
    layout.offsets.push_back(layout.totalFloats);
    // Each argument starts on a 64-byte boundary.
    layout.totalFloats += (count + 15) / 16 * 16;
  }
  return layout;
}

/// Moves `fd` to exactly `target` in a child before exec, clearing close-on-exec.
static bool placeDescriptor(int fd, int target) {
  if (fd == target)
    return fcntl(fd, F_SETFD, 0) == 0;
  return dup2(fd, target) == target;
}

static void writeAll(int fd, const std::string &data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

namespace {
/// The shared argument memory of the last executor that ended, kept for the next one of the same size: a
/// long-lived judge starts an executor per candidate, and a fresh multi-GB region costs seconds of page faults
/// each time. Handed on only after its executor (its whole process group) was killed and reaped, and an
/// executor can start no other process, so nothing else maps it any more; the judge rewrites every input and
/// poisons every output before each run, so nothing the last candidate left there is read.
struct SpareMemory {
  int fd = -1;
  void *map = nullptr;
  size_t bytes = 0;
  void release() {
    if (map)
      munmap(map, bytes);
    if (fd >= 0)
      close(fd);
    *this = SpareMemory();
  }
};
SpareMemory spare;
} // namespace

/// Shared memory of `bytes` for an executor: the spare region if it has that size, else a new memfd.
static bool sharedMemory(size_t bytes, int &fd, void *&map) {
  if (spare.map && spare.bytes == bytes) {
    fd = spare.fd, map = spare.map;
    spare = SpareMemory();
    return true;
  }
  spare.release();
  fd = memfd_create("kforge-arguments", MFD_CLOEXEC);
  map = MAP_FAILED;
  if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0)
    map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map != MAP_FAILED)
    return true;
  if (fd >= 0)
    close(fd);
  fd = -1;
  return false;
}

bool ExecutorProcess::start(const RunnerOptions &options, const ArgumentLayout &argumentLayout,
                            const ContainmentPlan &plan, bool cpuMemoryLimit, Deadline deadline, std::string &why) {
  stop();
  layout = argumentLayout;
  pending.clear();
  stderrTail.clear();
  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0)
    return why = "cannot find kforge-run's own executable (/proc/self/exe)", false;
  self[length] = '\0';

  int sockets[2], errors[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    return why = std::string("socketpair: ") + std::strerror(errno), false;
  if (pipe2(errors, O_CLOEXEC) != 0) {
    close(sockets[0]), close(sockets[1]);
    return why = std::string("pipe: ") + std::strerror(errno), false;
  }
  sharedBytes = std::max<size_t>(layout.totalFloats * sizeof(float), 64);
  int memory = -1;
  void *map = nullptr;
  if (!sharedMemory(sharedBytes, memory, map)) {
    why = std::string("cannot allocate the shared argument memory: ") + std::strerror(errno);
    close(sockets[0]), close(sockets[1]), close(errors[0]), close(errors[1]);
    return false;
  }
  shared = static_cast<float *>(map);
  memoryFd = memory;

  pid = fork();
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    close(memory), close(sockets[0]), close(sockets[1]), close(errors[0]), close(errors[1]);
    munmap(shared, sharedBytes);
    shared = nullptr;
    memoryFd = -1;
    pid = -1;
    return false;
  }
  if (pid == 0) {
    // Above the targets first, so that no placement overwrites a descriptor still to be placed.
    int channelHigh = fcntl(sockets[1], F_DUPFD_CLOEXEC, 10), memoryHigh = fcntl(memory, F_DUPFD_CLOEXEC, 10),
        errorsHigh = fcntl(errors[1], F_DUPFD_CLOEXEC, 10);
    int null = open("/dev/null", O_RDONLY);
    if (channelHigh < 0 || memoryHigh < 0 || errorsHigh < 0 || null < 0 || !placeDescriptor(errorsHigh, 2) ||
        !placeDescriptor(errorsHigh, 1) || !placeDescriptor(null, 0) || !placeDescriptor(channelHigh, 3) ||
        !placeDescriptor(memoryHigh, 4))
      _exit(126);
    char *argv[] = {const_cast<char *>("kforge-run"), const_cast<char *>("--executor"), nullptr};
    execv(self, argv); // every other descriptor is close-on-exec or closed by the executor itself
    _exit(127);
  }
  close(sockets[1]);
  close(errors[1]);
  channel = sockets[0];
  errorPipe = errors[0];
  fcntl(errorPipe, F_SETFL, O_NONBLOCK); // drained whenever poll says so, never waited on

  json init = {{"op", "init"},
               {"runtime", options.runtime},
               {"device", options.device},
               {"l2_flush", options.l2Flush},
               {"memory_limit_mb", cpuMemoryLimit ? options.memoryLimitMB : 0},
               {"shared_bytes", sharedBytes},
               {"readable", plan.readableDirs},
               {"secret", plan.secretDirs}};
  std::optional<json> reply = call(init, deadline, why);
  if (!reply)
    return why = "the executor did not start: " + why, false;
  if (reply->contains("error")) {
    why = "the executor did not start: " + (*reply)["error"].dump();
    stop();
    return false;
  }
  containmentReport = reply->value("containment", json::object());
  return true;
}

void ExecutorProcess::drainErrors() {
  char chunk[4096];
  while (errorPipe >= 0) {
    ssize_t n = read(errorPipe, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        close(errorPipe);
        errorPipe = -1;
      }
      return;
    }
    if (echo)
      writeAll(STDERR_FILENO, std::string(chunk, static_cast<size_t>(n)));
    stderrTail.append(chunk, static_cast<size_t>(n));
    if (stderrTail.size() > 2 * kStderrTailBytes)
      stderrTail.erase(0, stderrTail.size() - kStderrTailBytes);
    if (static_cast<size_t>(n) < sizeof(chunk))
      return;
  }
}

std::string ExecutorProcess::endedBecause() {
  int status = 0;
  pid_t waited = -1;
  for (int i = 0; i < 200 && (waited = waitpid(pid, &status, WNOHANG)) == 0; ++i)
    usleep(5000);
  if (waited == 0) { // the channel closed but the process lives on: end it
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  pid = -1;
  std::string reason;
  if (WIFSIGNALED(status))
    reason = std::string("crashed: signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  else
    reason = "exited with status " + std::to_string(WEXITSTATUS(status));
  return reason;
}

std::optional<json> ExecutorProcess::call(const json &command, Deadline deadline, std::string &why) {
  if (pid <= 0) {
    why = "the executor is not running";
    return std::nullopt;
  }
  // Every command carries a fresh sequence number the reply must echo: a line the candidate wrote into the
  // channel (ahead of the executor's reply, or left over from before) does not answer this command.
  nlohmann::json numbered = command;
  numbered["seq"] = ++sequence;
  std::string line = numbered.dump() + "\n";
  if (send(channel, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    drainErrors();
    why = endedBecause();
    stop();
    return std::nullopt;
  }
  while (true) {
    size_t newline = pending.find('\n');
    if (newline != std::string::npos) {
      json reply = json::parse(pending.substr(0, newline), nullptr, /*allow_exceptions=*/false);
      pending.erase(0, newline + 1);
      const char *breach = nullptr;
      if (!reply.is_object())
        breach = "a reply that is not a JSON object";
      else if (!reply.contains("seq") || !reply["seq"].is_number_unsigned() ||
               reply["seq"].get<uint64_t>() != sequence)
        breach = "a reply line that does not answer the command in flight";
      else if (!pending.empty())
        breach = "more than one reply line to a command";
      if (breach) {
        why = std::string("the candidate's process broke the executor protocol (") + breach + ")";
        stop();
        return std::nullopt;
      }
      return reply;
    }
    if (pending.size() > kMaxReplyBytes) {
      why = "the candidate's process broke the executor protocol (a reply over 4 MB)";
      stop();
      return std::nullopt;
    }
    // (Rounded up: a wait cut to whole milliseconds would give up to one before the deadline.)
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      drainErrors();
      stop();
      why = "timed out after " + std::to_string(timeoutSeconds) + " s (killed)";
      return std::nullopt;
    }
    pollfd fds[2] = {{channel, POLLIN, 0}, {errorPipe, POLLIN, 0}};
    int ready = poll(fds, errorPipe >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    if (ready < 0 && errno != EINTR) {
      why = std::string("poll: ") + std::strerror(errno);
      stop();
      return std::nullopt;
    }
    if (ready <= 0)
      continue;
    if (errorPipe >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      drainErrors();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char chunk[65536];
      ssize_t n = read(channel, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR)
        continue;
      if (n > 0) {
        pending.append(chunk, static_cast<size_t>(n));
        continue;
      }
      // End of the channel: the executor died (its stderr says the last words).
      for (int i = 0; i < 20 && errorPipe >= 0; ++i)
        drainErrors();
      why = endedBecause();
      stop();
      return std::nullopt;
    }
  }
}

void ExecutorProcess::stop(bool graceful) {
  if (channel >= 0)
    close(channel);
  channel = -1;
  for (int i = 0; graceful && pid > 0 && i < 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid)
      pid = -1;
    else
      usleep(2000);
  }
  if (pid > 0) {
    kill(-pid, SIGKILL); // its process group: nothing it started outlives it
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  pid = -1;
  if (errorPipe >= 0) {
    drainErrors();
    if (errorPipe >= 0)
      close(errorPipe);
  }
  errorPipe = -1;
  // The executor is gone (killed and reaped above): its memory becomes the spare for the next one.
  if (shared) {
    spare.release();
    spare.fd = memoryFd, spare.map = shared, spare.bytes = sharedBytes;
  }
  shared = nullptr;
  memoryFd = -1;
  pending.clear();
}
