//===- Database.h - kforge-tune's append-only tuning database ---*- C++ -*-===//
//
// One JSON object per line (db.jsonl in the run directory), one line per finished trial. A record is
// written with a single write and flushed to disk before the tuner goes on, so killing the tuner loses at
// most the trial in flight; a last line cut short by the kill is dropped when the database is opened again.
// Each record is kept twice: as stored (what best.json exports verbatim) and typed (Record.h).
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_DATABASE_H
#define KFORGE_TUNE_DATABASE_H

#include "Record.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace kforge::tune {

class Database {
public:
  /// Opens `path`, creating an empty database if there is none. Fails on a record that is not JSON (other
  /// than an unfinished last line) or not a tuning record (a key of the wrong type) rather than guessing.
  /// `readOnly` (a reader beside the one writer, e.g. `--propose` while kforge.distributed appends): a missing
  /// file is an empty database and an unfinished last line is skipped, never cut off (it may be a record
  /// being written).
  static llvm::Expected<Database> open(llvm::StringRef path, bool readOnly = false);

  /// The records as stored, one JSON object per line.
  const std::vector<llvm::json::Object> &records() const { return loaded; }
  /// The same records, typed: entries()[i] is records()[i].
  const std::vector<DatabaseRecord> &entries() const { return typed; }
  /// Lines dropped when opening (an unfinished last record).
  int droppedLines() const { return dropped; }

  /// Appends `record` and syncs it to disk.
  llvm::Error append(const llvm::json::Object &record);
  llvm::Error append(const DatabaseRecord &record);

private:
  std::string path;
  std::vector<llvm::json::Object> loaded;
  std::vector<DatabaseRecord> typed;
  int dropped = 0;
};

} // namespace kforge::tune

#endif // KFORGE_TUNE_DATABASE_H
