//===- ParallelTest.cpp - the judge's bulk copies ---------------------------===//

#include "Parallel.h"
#include "Floats.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace kforge;

namespace {

// Sizes below, at and above the point where the copies go parallel, and ones no piece count divides.
const size_t kSizes[] = {0, 1, 1000, (size_t(1) << 22) - 1, size_t(1) << 22, (size_t(1) << 22) + 7, 9999991};

TEST(ParallelTest, PiecesCoverEveryElementOnce) {
  for (size_t n : kSizes) {
    std::vector<std::atomic<int>> seen(n);
    forPieces(n, [&](size_t begin, size_t end) {
      ASSERT_LE(begin, end);
      ASSERT_LE(end, n);
      for (size_t i = begin; i < end; ++i)
        ++seen[i];
    });
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(seen[i].load(), 1) << "n = " << n << ", element " << i;
  }
}

TEST(ParallelTest, CopyAndFillTouchExactlyTheirRange) {
  for (size_t n : kSizes) {
    std::vector<float> source(n), target(n + 2, -1.0f);
    for (size_t i = 0; i < n; ++i)
      source[i] = static_cast<float>(i % 1000003);
    copyFloats(target.data() + 1, source.data(), n);
    EXPECT_EQ(target.front(), -1.0f);
    EXPECT_EQ(target.back(), -1.0f);
    EXPECT_TRUE(std::equal(source.begin(), source.end(), target.begin() + 1)) << "n = " << n;
    fillFloats(target.data() + 1, n, NAN);
    EXPECT_EQ(target.front(), -1.0f);
    EXPECT_EQ(target.back(), -1.0f);
    for (size_t i = 1; i <= n; ++i)
      ASSERT_TRUE(std::isnan(target[i])) << "n = " << n << ", element " << i;
  }
}

} // namespace

// Buffers of 64 MB and more sit on 2 MB boundaries (where transparent huge pages can back them), and behave as
// any vector: resized without zero-filling, written, copied, grown, released. Smaller ones, and every one with
// KFORGE_HUGE_PAGES=0, are std::allocator's.
TEST(Floats, LargeBuffersOnHugePageBoundaries) {
  if (!hugePagesWanted())
    GTEST_SKIP() << "KFORGE_HUGE_PAGES=0 turns huge pages off";
  size_t n = kHugePageBufferBytes / sizeof(float) + 5;
  Floats large;
  large.resize(n);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (size_t(2) << 20), 0u);
  copyFloats(large.data(), std::vector<float>(n, 2.5f).data(), n);
  Floats copy = large;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % (size_t(2) << 20), 0u);
  EXPECT_EQ(copy[0], 2.5f);
  EXPECT_EQ(copy[n - 1], 2.5f);
  copy.resize(n + (size_t(1) << 20));
  EXPECT_EQ(copy[n - 1], 2.5f);
  Floats small(1000);
  small[999] = 1.0f;
  EXPECT_EQ(small[999], 1.0f);
}
