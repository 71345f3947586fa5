//===- SeedCacheTest.cpp - the seed cache's size rule ----------------------===//

#include "SeedCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <string>
#include <unistd.h>

using namespace kforge;

namespace {

/// Regular entries under `dir` and its subdirectories (the cache writes DIR/KEY/seedN.kind.i.f32).
int filesUnder(const std::string &dir) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return 0;
  int count = 0;
  while (dirent *entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    if (entry->d_type == DT_DIR)
      count += filesUnder(dir + "/" + name);
    else
      ++count;
  }
  closedir(d);
  return count;
}

class SeedCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    char temporary[] = "/tmp/kforge-seed-cache-test.XXXXXX";
    ASSERT_NE(mkdtemp(temporary), nullptr);
    dir = temporary;
    setenv("KFORGE_CACHE_KEY_FILE", (dir + "/cache.key").c_str(), 1);
  }
  void TearDown() override { std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string dir;
};

TEST_F(SeedCacheTest, SmallSeedsAreKeptInFiles) {
  SeedCache cache(dir + "/cache", "small", /*inMemory=*/false, /*seedBytes=*/64);
  if (!cache.disabledBecause().empty())
    GTEST_SKIP() << cache.disabledBecause(); // no libcrypto on this machine
  std::vector<Floats> values{{1.0f, 2.0f}, {3.0f}};
  cache.store(0, "inputs", {0, 1}, values);
  EXPECT_EQ(filesUnder(dir + "/cache"), 2);
  std::vector<Floats> loaded(2);
  ASSERT_TRUE(cache.load(0, "inputs", {0, 1}, {2, 1}, loaded));
  EXPECT_EQ(loaded, values);
}

TEST_F(SeedCacheTest, ASeedOverTheBoundGetsNoFilesAndSaysWhy) {
  SeedCache cache(dir + "/cache", "large", /*inMemory=*/false, /*seedBytes=*/kMaxSeedFileBytes + 1);
  EXPECT_NE(cache.disabledBecause().find("a seed takes 1.07 GB"), std::string::npos) << cache.disabledBecause();
  std::vector<Floats> values{{1.0f, 2.0f}};
  cache.store(0, "outputs", {0}, values);
  EXPECT_EQ(filesUnder(dir + "/cache"), 0);
  std::vector<Floats> loaded(1);
  EXPECT_FALSE(cache.load(0, "outputs", {0}, {2}, loaded));
}

TEST_F(SeedCacheTest, ALargeSeedIsStillKeptInMemory) {
  SeedCache cache(dir + "/cache", "large-in-memory", /*inMemory=*/true, /*seedBytes=*/kMaxSeedFileBytes + 1);
  std::vector<Floats> values{{4.0f, 5.0f}};
  cache.store(1, "outputs", {0}, values);
  std::vector<Floats> loaded(1);
  ASSERT_TRUE(cache.load(1, "outputs", {0}, {2}, loaded));
  EXPECT_EQ(loaded, values);
  EXPECT_EQ(filesUnder(dir + "/cache"), 0);
}

} // namespace

TEST_F(SeedCacheTest, AMemoryHitIsViewedInPlaceAndAMissLeavesThePointersAlone) {
  SeedCache cache("", "view", /*inMemory=*/true, /*seedBytes=*/64);
  std::vector<Floats> values{{1.0f, 2.0f}, {}, {5.0f, 6.0f, 7.0f}};
  cache.store(3, "outputs", {0, 2}, values);
  std::vector<const float *> data(3, nullptr);
  ASSERT_TRUE(cache.view(3, "outputs", {0, 2}, {2, 0, 3}, data));
  ASSERT_NE(data[0], nullptr);
  ASSERT_NE(data[2], nullptr);
  EXPECT_EQ(data[1], nullptr);
  EXPECT_EQ(data[0][1], 2.0f);
  EXPECT_EQ(data[2][2], 7.0f);
  // The same view again points at the same memory: nothing was copied.
  std::vector<const float *> again(3, nullptr);
  ASSERT_TRUE(cache.view(3, "outputs", {0, 2}, {2, 0, 3}, again));
  EXPECT_EQ(again[0], data[0]);
  // Another seed, another kind, or a size that does not match: a miss.
  std::vector<const float *> missed(3, nullptr);
  EXPECT_FALSE(cache.view(4, "outputs", {0, 2}, {2, 0, 3}, missed));
  EXPECT_FALSE(cache.view(3, "inputs", {0, 2}, {2, 0, 3}, missed));
  EXPECT_FALSE(cache.view(3, "outputs", {0, 2}, {2, 0, 4}, missed));
  EXPECT_EQ(missed, std::vector<const float *>(3, nullptr));
  // A cache that keeps nothing in memory has no views.
  SeedCache files(dir + "/cache", "view", /*inMemory=*/false, /*seedBytes=*/64);
  EXPECT_FALSE(files.view(3, "outputs", {0, 2}, {2, 0, 3}, missed));
}

TEST_F(SeedCacheTest, AdoptTakesTheVectorsOverWithoutCopying) {
  SeedCache cache("", "adopt", /*inMemory=*/true, /*seedBytes=*/64);
  std::vector<Floats> values{{1.0f, 2.0f}, {}, {5.0f, 6.0f, 7.0f}};
  const float *first = values[0].data(), *third = values[2].data();
  ASSERT_TRUE(cache.adopt(2, "inputs", {0, 2}, values));
  // The cache owns the very buffers now: the vectors are left empty, and a view points at the old elements.
  EXPECT_TRUE(values[0].empty());
  EXPECT_TRUE(values[2].empty());
  std::vector<const float *> data(3, nullptr);
  ASSERT_TRUE(cache.view(2, "inputs", {0, 2}, {2, 0, 3}, data));
  EXPECT_EQ(data[0], first);
  EXPECT_EQ(data[2], third);
  EXPECT_EQ(data[2][1], 6.0f);
  // A cache that keeps nothing in memory adopts nothing and leaves the values alone.
  SeedCache none("", "adopt", /*inMemory=*/false, /*seedBytes=*/64);
  std::vector<Floats> kept{{3.0f}};
  EXPECT_FALSE(none.adopt(2, "inputs", {0}, kept));
  EXPECT_EQ(kept[0], Floats{3.0f});
}

TEST_F(SeedCacheTest, AReferenceSummaryLivesAndDiesWithItsInMemoryOutput) {
  SeedCache cache("", "summary", /*inMemory=*/true, /*seedBytes=*/64);
  std::vector<Floats> values{{1.0f, -3.0f}};
  ReferenceSummary summary = summarize(values[0].data(), 2);
  // Not kept while the output is not held in memory.
  cache.keepSummary(0, 0, 2, summary);
  EXPECT_FALSE(cache.summary(0, 0, 2));
  cache.store(0, "outputs", {0}, values);
  cache.keepSummary(0, 0, 2, summary);
  std::optional<ReferenceSummary> kept = cache.summary(0, 0, 2);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->maxAbs, 3.0);
  EXPECT_EQ(kept->min, -3.0);
  EXPECT_FALSE(cache.summary(0, 0, 3)); // another size: another output
  EXPECT_FALSE(cache.summary(1, 0, 2)); // another seed
  // Storing the output again drops its summary: it may be of other values.
  cache.store(0, "outputs", {0}, values);
  EXPECT_FALSE(cache.summary(0, 0, 2));
  // A cache that keeps nothing in memory keeps no summaries.
  SeedCache none("", "summary", /*inMemory=*/false, /*seedBytes=*/64);
  none.keepSummary(0, 0, 2, summary);
  EXPECT_FALSE(none.summary(0, 0, 2));
}
