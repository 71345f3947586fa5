//===- Files.h - kforge-tune's file and child-process helpers --*- C++ -*-===//

#ifndef KFORGE_TUNE_FILES_H
#define KFORGE_TUNE_FILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::tune {

/// What the tuner reads at most: a tuning database, other JSON (run.json, a compile's report), a schedule given
/// on the command line, a payload. A larger file is refused, not read: a mistaken path (/dev/zero, a FIFO, a
/// multi-gigabyte file) must not hang or exhaust the tuner.
constexpr uint64_t kMaxDatabaseBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxJSONBytes = uint64_t(16) << 20;
constexpr uint64_t kMaxScheduleBytes = uint64_t(1) << 20;
constexpr uint64_t kMaxPayloadBytes = uint64_t(64) << 20;
/// The deepest JSON the tuner parses: llvm::json::parse recurses once per level, and 60,000 levels overflow
/// the stack; nothing the tuner reads nests beyond a handful.
constexpr unsigned kMaxJSONDepth = 64;

std::string joinPath(llvm::StringRef a, llvm::StringRef b);

/// Reads a regular file of at most `maxBytes` bytes. A FIFO, device or directory is refused before it is
/// opened; a larger file (or one that grows past the limit while read) is refused without reading the rest.
llvm::Expected<std::string> readFile(llvm::StringRef path, uint64_t maxBytes);
/// Parses `text`, refusing JSON nested deeper than kMaxJSONDepth before the recursive parser sees it.
llvm::Expected<llvm::json::Value> parseJSON(llvm::StringRef text);
/// readFile, then parseJSON.
llvm::Expected<llvm::json::Value> readJSONFile(llvm::StringRef path, uint64_t maxBytes = kMaxJSONBytes);

/// The file's text (at most `maxBytes`); empty if it cannot be read.
std::string readText(llvm::StringRef path, uint64_t maxBytes = kMaxPayloadBytes);
/// The file's JSON (readJSONFile); nothing if it is missing, too large, too deep or not JSON.
std::optional<llvm::json::Value> readJSON(llvm::StringRef path);

/// `text` written completely to a temporary file next to `path` (flushed, every write checked); keep(path)
/// renames it into place, discard() removes it. Says why not in the error (a full disk, a read-only directory).
llvm::Expected<llvm::sys::fs::TempFile> stageText(llvm::StringRef path, llvm::StringRef text);
/// Writes through a temporary file and a rename, so `path` holds either its old contents or all of `text`; on
/// failure says why on stderr and returns false.
bool writeText(llvm::StringRef path, llvm::StringRef text);
bool writeJSON(llvm::StringRef path, const llvm::json::Value &value);
/// The text writeJSON writes.
std::string jsonText(const llvm::json::Value &value);
/// Flushes stdout; false (said on stderr, and the stream's error cleared so that exit does not abort) when it
/// could not be written, e.g. to a full disk.
bool flushStdout();

/// Keeps the environment variable `name` (one that holds a secret, such as the LLM API key) from every child
/// process started with a ChildEnvironment. OPENAI_API_KEY and ANTHROPIC_API_KEY are always kept back.
/// Thread-safe; call it at start-up, before children run.
void hideFromChildren(llvm::StringRef name);

/// The environment a child process gets: this process's, without the variables hideFromChildren names. Made
/// afresh for each child (the environment may have changed); the strings live as long as the object.
class ChildEnvironment {
public:
  ChildEnvironment();
  /// For llvm::sys::ExecuteAndWait's `Env`.
  llvm::ArrayRef<llvm::StringRef> refs() const { return refList; }
  /// For posix_spawn / execve: null-terminated.
  char *const *envp() { return pointers.data(); }

private:
  std::vector<std::string> variables;
  std::vector<llvm::StringRef> refList;
  std::vector<char *> pointers;
};

/// Runs `program` with `args` and a ChildEnvironment, stdout and stderr to `log` (empty: discarded). Returns the
/// exit code (negative: it did not finish; `message` says why).
int runProgram(llvm::StringRef program, llvm::ArrayRef<std::string> args, llvm::StringRef log, unsigned timeout,
               std::string &message);

} // namespace kforge::tune

#endif // KFORGE_TUNE_FILES_H
