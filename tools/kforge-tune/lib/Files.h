//===- Files.h - kforge-tune's file and child-process helpers --*- C++ -*-===//

#ifndef KFORGE_TUNE_FILES_H
#define KFORGE_TUNE_FILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace kforge::tune {

std::string joinPath(llvm::StringRef a, llvm::StringRef b);
/// The file's text; empty if it cannot be read.
std::string readText(llvm::StringRef path);
/// Writes through a temporary file and a rename; on failure says why on stderr and returns false.
bool writeText(llvm::StringRef path, llvm::StringRef text);
bool writeJSON(llvm::StringRef path, const llvm::json::Value &value);
/// The file's JSON; nothing if it is missing or not JSON.
std::optional<llvm::json::Value> readJSON(llvm::StringRef path);
/// Runs `program` with `args`, stdout and stderr to `log` (empty: discarded). Returns the exit code (negative: it
/// did not finish; `message` says why).
int runProgram(llvm::StringRef program, llvm::ArrayRef<std::string> args, llvm::StringRef log, unsigned timeout,
               std::string &message);

} // namespace kforge::tune

#endif // KFORGE_TUNE_FILES_H
