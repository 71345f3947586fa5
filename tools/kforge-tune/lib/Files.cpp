//===- Files.cpp - kforge-tune's file and child-process helpers -----------===//

#include "Files.h"

#include "JsonLimits.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

extern char **environ;

using namespace kforge::tune;
using llvm::StringRef;

std::string kforge::tune::joinPath(StringRef a, StringRef b) {
  llvm::SmallString<256> path(a);
  llvm::sys::path::append(path, b);
  return std::string(path);
}

llvm::Expected<std::string> kforge::tune::readFile(StringRef path, uint64_t maxBytes) {
  namespace fs = llvm::sys::fs;
  auto failure = [&](std::error_code ec, const llvm::Twine &why) {
    return llvm::createStringError(ec, "cannot read " + path + ": " + why);
  };
  // Checked before opening: opening a FIFO would block until a writer comes.
  fs::file_status status;
  if (std::error_code ec = fs::status(path, status))
    return failure(ec, ec.message());
  if (!fs::is_regular_file(status))
    return failure(std::make_error_code(std::errc::invalid_argument), "not a regular file");
  if (status.getSize() > maxBytes)
    return failure(std::make_error_code(std::errc::file_too_large),
                   llvm::formatv("{0} bytes, more than the limit of {1}", status.getSize(), maxBytes));
  llvm::Expected<fs::file_t> file = fs::openNativeFileForRead(path);
  if (!file) {
    std::error_code ec = llvm::errorToErrorCode(file.takeError());
    return failure(ec, ec.message());
  }
  // The path may have been replaced between the check and the open, and a regular file may grow: the
  // descriptor is checked too, and no more than the limit is read.
  std::string text;
  std::error_code ec;
  if ((ec = fs::status(*file, status)) || !fs::is_regular_file(status))
    ec = ec ? ec : std::make_error_code(std::errc::invalid_argument);
  while (!ec) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(1 << 16, maxBytes + 1 - text.size()));
    size_t size = text.size();
    text.resize(size + chunk);
    llvm::Expected<size_t> read = fs::readNativeFile(*file, llvm::MutableArrayRef<char>(text.data() + size, chunk));
    if (!read) {
      ec = llvm::errorToErrorCode(read.takeError());
      break;
    }
    text.resize(size + *read);
    if (*read == 0)
      break;
    if (text.size() > maxBytes)
      ec = std::make_error_code(std::errc::file_too_large);
  }
  fs::closeFile(*file);
  if (ec == std::errc::file_too_large)
    return failure(ec, llvm::formatv("more than the limit of {0} bytes", maxBytes));
  if (ec)
    return failure(ec, ec == std::errc::invalid_argument ? "not a regular file" : ec.message());
  return text;
}

llvm::Expected<llvm::json::Value> kforge::tune::parseJSON(StringRef text) {
  if (!jsonDepthWithin(text, kMaxJSONDepth))
    return llvm::createStringError(std::errc::invalid_argument, "JSON nested deeper than %u levels", kMaxJSONDepth);
  return llvm::json::parse(text);
}

llvm::Expected<llvm::json::Value> kforge::tune::readJSONFile(StringRef path, uint64_t maxBytes) {
  llvm::Expected<std::string> text = readFile(path, maxBytes);
  if (!text)
    return text.takeError();
  llvm::Expected<llvm::json::Value> value = parseJSON(*text);
  if (!value)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   path + " is not JSON: " + llvm::toString(value.takeError()));
  return value;
}

std::string kforge::tune::readText(StringRef path, uint64_t maxBytes) {
  llvm::Expected<std::string> text = readFile(path, maxBytes);
  if (!text) {
    llvm::consumeError(text.takeError());
    return std::string();
  }
  return std::move(*text);
}

std::optional<llvm::json::Value> kforge::tune::readJSON(StringRef path) {
  llvm::Expected<llvm::json::Value> value = readJSONFile(path);
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  return std::move(*value);
}

llvm::Expected<llvm::sys::fs::TempFile> kforge::tune::stageText(StringRef path, StringRef text) {
  llvm::Expected<llvm::sys::fs::TempFile> temp = llvm::sys::fs::TempFile::create(path + ".tmp-%%%%%%");
  if (!temp) {
    std::error_code ec = llvm::errorToErrorCode(temp.takeError());
    return llvm::createStringError(ec, "cannot write " + path + ": " + ec.message());
  }
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << text;
    os.flush();
    // A stream destroyed with an unchecked error aborts the process ("IO failure on output stream").
    ec = os.error();
    os.clear_error();
  }
  if (ec) {
    llvm::consumeError(temp->discard());
    return llvm::createStringError(ec, "cannot write " + path + ": " + ec.message());
  }
  return std::move(*temp);
}

bool kforge::tune::writeText(StringRef path, StringRef text) {
  llvm::Expected<llvm::sys::fs::TempFile> temp = stageText(path, text);
  llvm::Error error = temp ? temp->keep(path) : temp.takeError(); // keep removes the temporary when it fails
  if (error) {
    llvm::errs() << "kforge-tune: error: " << llvm::toString(std::move(error)) << "\n";
    return false;
  }
  return true;
}

std::string kforge::tune::jsonText(const llvm::json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value) << "\n";
  return text;
}

bool kforge::tune::writeJSON(StringRef path, const llvm::json::Value &value) {
  return writeText(path, jsonText(value));
}

bool kforge::tune::flushStdout() {
  llvm::raw_fd_ostream &out = llvm::outs();
  out.flush();
  if (!out.has_error())
    return true;
  std::error_code ec = out.error();
  out.clear_error();
  llvm::errs() << "kforge-tune: error: cannot write the standard output: " << ec.message() << "\n";
  return false;
}

/// The variables no child may see, guarded by hiddenMutex.
static std::mutex hiddenMutex;
static std::vector<std::string> &hiddenVariables() {
  static std::vector<std::string> names = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
  return names;
}

void kforge::tune::hideFromChildren(StringRef name) {
  if (name.empty())
    return;
  std::lock_guard<std::mutex> lock(hiddenMutex);
  std::vector<std::string> &names = hiddenVariables();
  if (llvm::find(names, name) == names.end())
    names.push_back(name.str());
}

ChildEnvironment::ChildEnvironment() {
  {
    std::lock_guard<std::mutex> lock(hiddenMutex);
    const std::vector<std::string> &hidden = hiddenVariables();
    for (char **entry = environ; entry && *entry; ++entry) {
      StringRef name = StringRef(*entry).split('=').first;
      if (llvm::find(hidden, name) == hidden.end())
        variables.emplace_back(*entry);
    }
  }
  for (std::string &v : variables) {
    refList.push_back(v);
    pointers.push_back(v.data());
  }
  pointers.push_back(nullptr);
}

int kforge::tune::runProgram(StringRef program, llvm::ArrayRef<std::string> args, StringRef log, unsigned timeout,
                             std::string &message) {
  std::vector<StringRef> argv{program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {StringRef(""), log, log};
  ChildEnvironment env;
  return llvm::sys::ExecuteAndWait(program, argv, env.refs(), redirects, timeout, 0, &message);
}
