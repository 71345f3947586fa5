//===- Database.cpp - kforge-tune's append-only tuning database -----------===//

#include "Database.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace kforge::tune;

llvm::Expected<Database> Database::open(llvm::StringRef path) {
  Database db;
  db.path = path.str();
  if (!llvm::sys::fs::exists(path)) {
    int fd;
    if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_CreateNew))
      return llvm::createStringError(ec, "cannot create the database %s: %s", db.path.c_str(), ec.message().c_str());
    ::close(fd);
    return db;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                                                                          /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read the database %s: %s", db.path.c_str(),
                                   buffer.getError().message().c_str());
  llvm::StringRef text = (*buffer)->getBuffer();
  size_t complete = text.rfind('\n') == llvm::StringRef::npos ? 0 : text.rfind('\n') + 1;
  int lineNumber = 0;
  for (llvm::StringRef rest = text.take_front(complete); !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    ++lineNumber;
    if (line.trim().empty())
      continue;
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(line);
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
  if (complete < text.size()) {
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

llvm::Error Database::append(const DatabaseRecord &record) {
  return append(*toJSON(record).getAsObject());
}

llvm::Error Database::append(const llvm::json::Object &record) {
  DatabaseRecord entry;
  llvm::json::Path::Root root;
  if (!fromJSON(llvm::json::Value(llvm::json::Object(record)), entry, root))
    return llvm::createStringError(std::errc::invalid_argument, "not a tuning record: %s",
                                   llvm::toString(root.getError()).c_str());
  std::string line;
  llvm::raw_string_ostream os(line);
  os << llvm::json::Value(llvm::json::Object(record));
  line += "\n";
  int fd;
  if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenAlways,
                                                           llvm::sys::fs::OF_Append))
    return llvm::createStringError(ec, "cannot open the database %s: %s", path.c_str(), ec.message().c_str());
  const char *data = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      int error = errno;
      ::close(fd);
      return llvm::createStringError(std::errc::io_error, "cannot append to the database %s: %s", path.c_str(),
                                     std::strerror(error));
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  ::fsync(fd);
  ::close(fd);
  loaded.push_back(record);
  typed.push_back(std::move(entry));
  return llvm::Error::success();
}
