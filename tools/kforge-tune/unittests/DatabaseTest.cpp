//===- DatabaseTest.cpp - the tuning database survives kills ---------------===//

#include "Database.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <limits>

using namespace kforge::tune;

namespace {
class DatabaseTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kforge-db-test", dir));
    path = (dir + "/db.jsonl").str();
  }
  void TearDown() override {
    llvm::sys::fs::remove(path);
    llvm::sys::fs::remove(dir);
  }
  void writeRaw(llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
  }
  std::string readRaw() { return (*llvm::MemoryBuffer::getFile(path))->getBuffer().str(); }

  llvm::SmallString<128> dir;
  std::string path;
};
} // namespace

TEST_F(DatabaseTest, CreatesAndReopens) {
  {
    llvm::Expected<Database> db = Database::open(path);
    ASSERT_TRUE(bool(db));
    EXPECT_TRUE(db->records().empty());
    ASSERT_FALSE(bool(db->append(llvm::json::Object{{"id", 0}, {"kind", "baseline"}})));
    ASSERT_FALSE(bool(db->append(llvm::json::Object{{"id", 1}, {"kind", "candidate"}})));
    EXPECT_EQ(db->records().size(), 2u);
  }
  llvm::Expected<Database> again = Database::open(path);
  ASSERT_TRUE(bool(again));
  ASSERT_EQ(again->records().size(), 2u);
  EXPECT_EQ(again->records()[1].getInteger("id"), 1);
  EXPECT_EQ(again->droppedLines(), 0);
}

TEST_F(DatabaseTest, DropsAnUnfinishedLastRecordAndKeepsTheRest) {
  writeRaw("{\"id\":0}\n{\"id\":1}\n{\"id\":2,\"kind\":\"cand");
  llvm::Expected<Database> db = Database::open(path);
  ASSERT_TRUE(bool(db));
  EXPECT_EQ(db->records().size(), 2u);
  EXPECT_EQ(db->droppedLines(), 1);
  // The file is repaired, so the next record starts on a line of its own.
  EXPECT_EQ(readRaw(), "{\"id\":0}\n{\"id\":1}\n");
  ASSERT_FALSE(bool(db->append(llvm::json::Object{{"id", 2}})));
  EXPECT_EQ(readRaw(), "{\"id\":0}\n{\"id\":1}\n{\"id\":2}\n");
}

TEST_F(DatabaseTest, RefusesACorruptRecordInTheMiddle) {
  writeRaw("{\"id\":0}\nnot json\n{\"id\":2}\n");
  llvm::Expected<Database> db = Database::open(path);
  ASSERT_FALSE(bool(db));
  std::string message = llvm::toString(db.takeError());
  EXPECT_NE(message.find(":2: not a JSON record"), std::string::npos) << message;
}

TEST_F(DatabaseTest, RefusesANonFiniteNumberAndWritesNothing) {
  llvm::Expected<Database> db = Database::open(path);
  ASSERT_TRUE(bool(db));
  ASSERT_FALSE(bool(db->append(llvm::json::Object{{"id", 0}, {"kind", "baseline"}})));
  // llvm::json writes NaN as a bare `nan`, which no reader (this one included) parses back.
  llvm::Error error = db->append(
      llvm::json::Object{{"id", 1}, {"kind", "candidate"}, {"score", std::numeric_limits<double>::quiet_NaN()}});
  ASSERT_TRUE(bool(error));
  std::string message = llvm::toString(std::move(error));
  EXPECT_NE(message.find("record.score is not a finite number"), std::string::npos) << message;
  EXPECT_EQ(db->records().size(), 1u);
  EXPECT_EQ(readRaw(), "{\"id\":0,\"kind\":\"baseline\"}\n");
}

TEST_F(DatabaseTest, RefusesARecordNestedTooDeepWithoutParsingIt) {
  // 60,000 levels overflow the recursive parser's stack; the depth is checked first.
  writeRaw("{\"id\":0}\n" + std::string(60000, '[') + "\n");
  llvm::Expected<Database> db = Database::open(path);
  ASSERT_FALSE(bool(db));
  std::string message = llvm::toString(db.takeError());
  EXPECT_NE(message.find(":2: not a JSON record: JSON nested deeper than"), std::string::npos) << message;
}

TEST_F(DatabaseTest, RefusesADatabaseThatIsNotARegularFile) {
  llvm::Expected<Database> db = Database::open("/dev/zero");
  ASSERT_FALSE(bool(db));
  std::string message = llvm::toString(db.takeError());
  EXPECT_NE(message.find("cannot read /dev/zero: not a regular file"), std::string::npos) << message;
}
