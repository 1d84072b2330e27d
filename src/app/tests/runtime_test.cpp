// The agent's allocator settings (issue 17, runtime.cpp): accepted by the C library, and a buffer
// the size of a scrape's exposition (~100 KB) is its own mapping, so freeing it gives it back to
// the kernel instead of leaving it as free space at the top of an arena that malloc_trim does not
// release.
#include "app/runtime.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>

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

}  // namespace
}  // namespace gpumeter::app
