//===- SourceFile.h - reading untrusted MLIR source safely -------*- C++ -*-===//
//
// Payloads and schedules come from users, importers, language models and run
// directories. Before the MLIR parser sees one: it must be a regular file (a FIFO
// would block, /dev/zero would be read until memory runs out), of bounded size, and
// its bracket nesting bounded (the parser recurses once per level: 60,000 nested
// regions overflow its stack). Header-only: kforge-compile and kforge-opt share it.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_SUPPORT_SOURCEFILE_H
#define KFORGE_SUPPORT_SOURCEFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <memory>

namespace kforge {

/// The deepest nesting of (), [], {} and <> (not counting the '>' of "->") outside strings and comments.
inline unsigned sourceNestingDepth(llvm::StringRef text) {
  unsigned depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // a string literal, with backslash escapes
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') { // a comment, to the end of the line
      i = std::min(text.find('\n', i), text.size());
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')' || c == ']' || c == '}' || (c == '>' && !(i > 0 && text[i - 1] == '-'))) {
      depth = depth ? depth - 1 : 0;
    }
  }
  return deepest;
}

/// `path` read for parsing, or why it may not be parsed. "-" is standard input (bounded the same way).
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readSourceFile(llvm::StringRef path, uint64_t maxBytes = uint64_t(64) << 20, unsigned maxDepth = 256) {
  auto refuse = [&](const llvm::Twine &why) {
    return llvm::createStringError(std::errc::invalid_argument, "%s", ("'" + path + "' " + why).str().c_str());
  };
  if (path != "-") {
    llvm::sys::fs::file_status status;
    if (std::error_code ec = llvm::sys::fs::status(path, status))
      return refuse("cannot be read: " + ec.message());
    if (!llvm::sys::fs::is_regular_file(status))
      return refuse("is not a regular file");
    if (status.getSize() > maxBytes)
      return refuse("is larger than " + llvm::Twine(maxBytes >> 20) + " MiB");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      path == "-" ? llvm::MemoryBuffer::getSTDIN() : llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return refuse("cannot be read: " + buffer.getError().message());
  if ((*buffer)->getBufferSize() > maxBytes)
    return refuse("is larger than " + llvm::Twine(maxBytes >> 20) + " MiB");
  if (unsigned depth = sourceNestingDepth((*buffer)->getBuffer()); depth > maxDepth)
    return refuse("nests brackets " + llvm::Twine(depth) + " deep, more than the " + llvm::Twine(maxDepth) +
                  " kforge parses");
  return std::move(*buffer);
}

} // namespace kforge

#endif // KFORGE_SUPPORT_SOURCEFILE_H
