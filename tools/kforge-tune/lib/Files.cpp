//===- Files.cpp - kforge-tune's file and child-process helpers -----------===//

#include "Files.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace kforge::tune;
using llvm::StringRef;

std::string kforge::tune::joinPath(StringRef a, StringRef b) {
  llvm::SmallString<256> path(a);
  llvm::sys::path::append(path, b);
  return std::string(path);
}

std::string kforge::tune::readText(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

bool kforge::tune::writeText(StringRef path, StringRef text) {
  if (llvm::Error error = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
        os << text;
        return llvm::Error::success();
      })) {
    llvm::errs() << "kforge-tune: error: cannot write " << path << ": " << llvm::toString(std::move(error)) << "\n";
    return false;
  }
  return true;
}

bool kforge::tune::writeJSON(StringRef path, const llvm::json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value) << "\n";
  return writeText(path, text);
}

std::optional<llvm::json::Value> kforge::tune::readJSON(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  llvm::Expected<llvm::json::Value> value = llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  return std::move(*value);
}

int kforge::tune::runProgram(StringRef program, llvm::ArrayRef<std::string> args, StringRef log, unsigned timeout,
                             std::string &message) {
  std::vector<StringRef> argv{program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {StringRef(""), log, log};
  return llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, timeout, 0, &message);
}
