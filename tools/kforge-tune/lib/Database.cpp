//===- Database.cpp - kforge-tune's append-only tuning database -----------===//

#include "Database.h"

#include "Files.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

using namespace kforge::tune;

llvm::Expected<Database> Database::open(llvm::StringRef path, bool readOnly) {
  Database db;
  db.path = path.str();
  if (readOnly && !llvm::sys::fs::exists(path))
    return db;
  if (!llvm::sys::fs::exists(path)) {
    int fd;
    if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_CreateNew))
      return llvm::createStringError(ec, "cannot create the database %s: %s", db.path.c_str(), ec.message().c_str());
    ::close(fd);
    return db;
  }
  llvm::Expected<std::string> contents = readFile(path, kMaxDatabaseBytes);
  if (!contents)
    return contents.takeError();
  llvm::StringRef text = *contents;
  size_t complete = text.rfind('\n') == llvm::StringRef::npos ? 0 : text.rfind('\n') + 1;
  int lineNumber = 0;
  for (llvm::StringRef rest = text.take_front(complete); !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    ++lineNumber;
    if (line.trim().empty())
      continue;
    llvm::Expected<llvm::json::Value> value = parseJSON(line);
    if (!value)
      return llvm::createStringError(std::errc::invalid_argument, "%s:%d: not a JSON record: %s", db.path.c_str(),
                                     lineNumber, llvm::toString(value.takeError()).c_str());
    if (!value->getAsObject())
      return llvm::createStringError(std::errc::invalid_argument, "%s:%d: a record must be a JSON object",
                                     db.path.c_str(), lineNumber);
    DatabaseRecord record;
    llvm::json::Path::Root root;
    if (!fromJSON(*value, record, root))
      return llvm::createStringError(std::errc::invalid_argument, "%s:%d: not a tuning record: %s", db.path.c_str(),
                                     lineNumber, llvm::toString(root.getError()).c_str());
    db.loaded.push_back(std::move(*value->getAsObject()));
    db.typed.push_back(std::move(record));
  }
  if (complete < text.size() && !readOnly) {
    // The tuner was killed while writing this record: it never finished, so it is not data.
    db.dropped = 1;
    int fd;
    if (std::error_code ec = llvm::sys::fs::openFileForReadWrite(path, fd, llvm::sys::fs::CD_OpenExisting,
                                                                 llvm::sys::fs::OF_None))
      return llvm::createStringError(ec, "cannot repair the database %s: %s", db.path.c_str(), ec.message().c_str());
    int rc = ::ftruncate(fd, static_cast<off_t>(complete));
    ::close(fd);
    if (rc != 0)
      return llvm::createStringError(std::errc::io_error, "cannot repair the database %s: %s", db.path.c_str(),
                                     std::strerror(errno));
  }
  return db;
}

/// The first number in `value` that is NaN or infinite (JSON has neither: llvm::json writes them as bare
/// `nan` / `inf`, which no parser reads back), or nothing.
static std::optional<std::string> nonFiniteNumber(const llvm::json::Value &value, const std::string &where) {
  if (std::optional<double> number = value.getAsNumber(); number && !std::isfinite(*number))
    return where;
  if (const llvm::json::Object *object = value.getAsObject())
    for (const auto &entry : *object)
      if (std::optional<std::string> found = nonFiniteNumber(entry.second, where + "." + entry.first.str()))
        return found;
  if (const llvm::json::Array *array = value.getAsArray())
    for (const auto &[index, element] : llvm::enumerate(*array))
      if (std::optional<std::string> found = nonFiniteNumber(element, where + "[" + std::to_string(index) + "]"))
        return found;
  return std::nullopt;
}

llvm::Error Database::append(const DatabaseRecord &record) {
  return append(*toJSON(record).getAsObject());
}

llvm::Error Database::append(const llvm::json::Object &record) {
  llvm::json::Value value = llvm::json::Object(record);
  DatabaseRecord entry;
  llvm::json::Path::Root root;
  if (!fromJSON(value, entry, root))
    return llvm::createStringError(std::errc::invalid_argument, "not a tuning record: %s",
                                   llvm::toString(root.getError()).c_str());
  if (std::optional<std::string> where = nonFiniteNumber(value, "record"))
    return llvm::createStringError(std::errc::invalid_argument, "not a tuning record: %s is not a finite number",
                                   where->c_str());
  std::string line;
  llvm::raw_string_ostream os(line);
  os << value;
  line += "\n";
  int fd;
  if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenAlways,
                                                           llvm::sys::fs::OF_Append))
    return llvm::createStringError(ec, "cannot open the database %s: %s", path.c_str(), ec.message().c_str());
  // A record is all there or not at all: a write cut short (a full disk) is cut off again, so that the next
  // append does not continue a broken line and the database stays readable.
  off_t end = ::lseek(fd, 0, SEEK_END);
  const char *data = line.data();
  size_t left = line.size();
  int error = 0;
  while (left > 0 && !error) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      error = written < 0 ? errno : ENOSPC;
      break;
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  if (!error && ::fsync(fd) != 0 && errno != EINVAL)
    error = errno;
  if (error && end >= 0)
    (void)::ftruncate(fd, end);
  if (::close(fd) != 0 && !error && errno != EINTR)
    error = errno;
  if (error)
    return llvm::createStringError(std::errc::io_error, "cannot append to the database %s: %s", path.c_str(),
                                   std::strerror(error));
  loaded.push_back(record);
  typed.push_back(std::move(entry));
  return llvm::Error::success();
}
