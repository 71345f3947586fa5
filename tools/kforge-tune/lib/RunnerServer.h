//===- RunnerServer.h - a long-lived kforge-run for a search ---*- C++ -*-===//
//
// kforge-run started once per candidate spent most of a trial starting CUDA and reading cached inputs and
// reference outputs (docs/perf/search-h200.md, "Throughput"). A search instead keeps one `kforge-run
// --serve` alive and sends it one request line per candidate. The server runs candidates in its own process
// (no child per candidate), so this side owns what the child process gave: a time limit per request, and a
// fresh server after a crash, a hang or a GPU error that poisoned its context.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_RUNNERSERVER_H
#define KFORGE_TUNE_RUNNERSERVER_H

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kforge::tune {

class RunnerServer {
public:
  /// `program` and `args` start the server (args include --serve); its stderr is appended to `log`.
  RunnerServer(std::string program, std::vector<std::string> args, std::string log);
  ~RunnerServer();
  RunnerServer(const RunnerServer &) = delete;
  RunnerServer &operator=(const RunnerServer &) = delete;

  /// Sends one request line (JSON) and waits up to `timeoutSeconds` for its reply line. A reply with a
  /// "runner_exit" key ends that server (it exits after answering). No reply (the
  /// server died, hung or could not start): nothing, `why` says what happened (with the runtime's last
  /// error from the log when there is one), and the next request starts a fresh server.
  std::optional<std::string> request(const std::string &line, unsigned timeoutSeconds, std::string &why);

  /// Ends the current server (the next request starts a fresh one): after a reply that is not to be trusted.
  void restart() { stop(); }

  /// How many servers were started so far (a restart after each crash).
  int starts() const { return started; }

private:
  bool start(std::string &why);
  void stop();
  std::string logTailSince(long offset) const;

  std::string program, log;
  std::vector<std::string> args;
  pid_t pid = -1;
  int toServer = -1, fromServer = -1;
  std::string pending; ///< Bytes read past the last reply line.
  int started = 0;
};

} // namespace kforge::tune

#endif // KFORGE_TUNE_RUNNERSERVER_H
