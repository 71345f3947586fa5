//===- FilesTest.cpp - bounded reads, whole writes, JSON depth ------------===//

#include "Files.h"
#include "JsonLimits.h"

#include "kforge/Tune/Actions.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sys/stat.h>

using namespace kforge::tune;

namespace {
class FilesTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kforge-files-test", dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) { return joinPath(dir, name); }

  llvm::SmallString<128> dir;
};
} // namespace

TEST(JsonDepth, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_TRUE(jsonDepthWithin("[[{\"a\": [1]}]]", 4));
  EXPECT_FALSE(jsonDepthWithin("[[{\"a\": [1]}]]", 3));
  EXPECT_TRUE(jsonDepthWithin("[\"[[[[\", {\"k\": \"{{{{\"}]", 2));
  // An escaped quote does not end the string.
  EXPECT_TRUE(jsonDepthWithin("[\"\\\"[[[[\"]", 1));
  EXPECT_TRUE(jsonDepthWithin("[][][][]", 1));
  EXPECT_FALSE(jsonDepthWithin(std::string(60000, '['), kMaxJSONDepth));
}

TEST(JsonDepth, ParseJSONRefusesDeepDocumentsAndParsesTheRest) {
  llvm::Expected<llvm::json::Value> deep = parseJSON(std::string(60000, '[') + std::string(60000, ']'));
  ASSERT_FALSE(bool(deep));
  EXPECT_EQ(llvm::toString(deep.takeError()), "JSON nested deeper than 64 levels");
  llvm::Expected<llvm::json::Value> shallow = parseJSON("{\"a\": [1, 2]}");
  ASSERT_TRUE(bool(shallow));
  EXPECT_EQ(shallow->getAsObject()->getArray("a")->size(), 2u);
}

TEST_F(FilesTest, ReadFileRefusesWhatIsNotARegularFile) {
  for (llvm::StringRef device : {"/dev/zero", "/dev/null"}) {
    llvm::Expected<std::string> text = readFile(device, 1024);
    ASSERT_FALSE(bool(text));
    EXPECT_EQ(llvm::toString(text.takeError()), "cannot read " + device.str() + ": not a regular file");
  }
  // A FIFO would block the open until a writer comes: refused before it is opened.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  llvm::Expected<std::string> fifo = readFile(path("fifo"), 1024);
  ASSERT_FALSE(bool(fifo));
  EXPECT_NE(llvm::toString(fifo.takeError()).find("not a regular file"), std::string::npos);
  llvm::Expected<std::string> directory = readFile(dir, 1024);
  ASSERT_FALSE(bool(directory));
  llvm::consumeError(directory.takeError());
}

TEST_F(FilesTest, ReadFileBoundsTheSize) {
  ASSERT_TRUE(writeText(path("big"), std::string(4096, 'x')));
  llvm::Expected<std::string> big = readFile(path("big"), 4095);
  ASSERT_FALSE(bool(big));
  EXPECT_NE(llvm::toString(big.takeError()).find("4096 bytes, more than the limit of 4095"), std::string::npos);
  llvm::Expected<std::string> fits = readFile(path("big"), 4096);
  ASSERT_TRUE(bool(fits));
  EXPECT_EQ(fits->size(), 4096u);
  EXPECT_EQ(readText(path("big"), 10), "");
}

TEST_F(FilesTest, WriteTextReplacesTheFileWhole) {
  ASSERT_TRUE(writeText(path("f"), "old"));
  ASSERT_TRUE(writeText(path("f"), "new contents"));
  EXPECT_EQ(readText(path("f")), "new contents");
  // Nothing is left beside it.
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1);
  // A directory that does not exist: an error, and no file.
  EXPECT_FALSE(writeText(path("missing/f"), "text"));
  EXPECT_FALSE(llvm::sys::fs::exists(path("missing/f")));
}

TEST(ScheduleLimits, ALongScheduleIsRefusedBeforeItIsChecked) {
  llvm::json::Array actions;
  for (int i = 0; i < 100000; ++i)
    actions.push_back(llvm::json::Object{{"kind", "vectorize"}, {"params", llvm::json::Object{}}});
  llvm::json::Value value(std::move(actions));
  auto start = std::chrono::steady_clock::now();
  Schedule schedule;
  std::vector<Problem> problems = parseSchedule(value, schedule);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].code, "too-large");
  EXPECT_NE(problems[0].message.find("at most 64 actions"), std::string::npos) << problems[0].message;
  // In memory too (a policy's schedule has not been through parseSchedule).
  Schedule tooLong(65, Action{});
  tooLong[0].kind = "vectorize";
  std::vector<Problem> memory = validateSchedule(tooLong, PayloadFacts(), "cpu");
  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(memory[0].code, "too-large");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}
