// The agent's allocator settings (runtime.cpp, measured in bench/soak.sh): accepted by the C
// library, and a buffer the size of a scrape's exposition (~100 KB) is its own mapping, so freeing
// it gives it back to the kernel instead of leaving it as free space at the top of an arena that
// malloc_trim does not release; and ReturnFreeHeap hands back the pages of freed chunks below the
// top at once.
#include "app/agent/runtime.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace gpumeter::app {
namespace {

TEST(TuneAllocator, ScrapeSizedBuffersGoBackToTheKernel) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces malloc: glibc's mallopt settings do not apply";
#endif
  ASSERT_TRUE(TuneAllocator());
#ifdef __GLIBC__
  const auto before = mallinfo2();
  void* p = std::malloc(100 * 1024);
  ASSERT_NE(p, nullptr);
  asm volatile("" : : "g"(p) : "memory");  // keeps the compiler from eliding the pair
  const auto during = mallinfo2();
  EXPECT_EQ(during.hblks, before.hblks + 1);
  EXPECT_GE(during.hblkhd, before.hblkhd + 100 * 1024);
  std::free(p);
  EXPECT_EQ(mallinfo2().hblks, before.hblks);
  EXPECT_EQ(mallinfo2().hblkhd, before.hblkhd);
#endif
}

// This process's resident anonymous memory, kB (/proc/self/status).
long RssAnonKb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
  return -1;
}

TEST(ReturnFreeHeap, PagesOfFreedChunksBelowTheTopGoBackAtOnce) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces malloc: malloc_trim does not see its memory";
#endif
#ifdef __GLIBC__
  // 4 MB of 1 KB chunks, touched, then a chunk above them, so that freeing them leaves free
  // space below the top, which free() alone never returns (as a rightsizing run's reads do).
  std::vector<void*> chunks;
  for (int i = 0; i < 4096; ++i) {
    chunks.push_back(std::malloc(1024));
    ASSERT_NE(chunks.back(), nullptr);
    std::memset(chunks.back(), 1, 1024);
  }
  void* pin = std::malloc(64);
  ASSERT_NE(pin, nullptr);
  asm volatile("" : : "g"(pin) : "memory");
  const long allocated = RssAnonKb();
  for (void* c : chunks) std::free(c);
  const long before = RssAnonKb();
  ASSERT_GT(before, 0);
  ReturnFreeHeap();
  const long after = RssAnonKb();
  EXPECT_LE(after, before - 1536) << "RssAnon " << allocated << " kB allocated, " << before
                                  << " freed, " << after << " after";
  std::free(pin);
#endif
}

}  // namespace
}  // namespace gpumeter::app
