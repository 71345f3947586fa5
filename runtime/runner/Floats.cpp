//===- Floats.cpp - large judge buffers on huge pages ----------------------===//

#include "Floats.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

using namespace kforge;

static constexpr size_t kHugePage = size_t(2) << 20;

bool kforge::hugePagesWanted() {
  static const bool wanted = [] {
    const char *value = std::getenv("KFORGE_HUGE_PAGES");
    return !value || std::strcmp(value, "0") != 0;
  }();
  return wanted;
}

void *kforge::allocateHugeBuffer(size_t bytes) {
  size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void *pointer = std::aligned_alloc(kHugePage, rounded);
  if (!pointer) { // as std::allocator's failure, without exceptions
    std::fprintf(stderr, "kforge-run: out of memory (a buffer of %zu bytes)\n", bytes);
    std::abort();
  }
  // Advice only: without transparent huge pages (or with them off) the buffer keeps 4 KB pages.
  madvise(pointer, rounded, MADV_HUGEPAGE);
  return pointer;
}

void kforge::freeHugeBuffer(void *pointer) { std::free(pointer); }
