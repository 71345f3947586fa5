//===- Database.h - kforge-tune's append-only tuning database ---*- C++ -*-===//
//
// One JSON object per line (db.jsonl in the run directory), one line per finished trial. A record is
// written with a single write and flushed to disk before the tuner goes on, so killing the tuner loses at
// most the trial in flight; a last line cut short by the kill is dropped when the database is opened again.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_DATABASE_H
#define KFORGE_TUNE_DATABASE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace kforge::tune {

class Database {
public:
  /// Opens `path`, creating an empty database if there is none. Fails on a record that is not JSON (other
  /// than an unfinished last line) rather than guessing.
  static llvm::Expected<Database> open(llvm::StringRef path);

  const std::vector<llvm::json::Object> &records() const { return loaded; }
  /// Lines dropped when opening (an unfinished last record).
  int droppedLines() const { return dropped; }

  /// Appends `record` and syncs it to disk.
  llvm::Error append(const llvm::json::Object &record);

private:
  std::string path;
  std::vector<llvm::json::Object> loaded;
  int dropped = 0;
};

} // namespace kforge::tune

#endif // KFORGE_TUNE_DATABASE_H
