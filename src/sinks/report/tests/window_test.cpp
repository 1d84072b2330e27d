#include "sinks/report/window.h"

#include <gtest/gtest.h>

namespace gpumeter::report {
namespace {

TEST(Window, Times) {
  EXPECT_EQ(*ParseTime("2026-12-01T00:00:00Z"), 1'796'083'200);
  EXPECT_EQ(*ParseTime("2026-12-01T01:00:00+01:00"), 1'796'083'200);
  EXPECT_EQ(*ParseTime("2026-12-01T00:00:00.250Z"), 1'796'083'200);
  EXPECT_EQ(*ParseTime("1796083200"), 1'796'083'200);
  for (const char* bad :
       {"2026-12-01", "2026-12-01T00:00:00", "yesterday", "2026-12-01T00:00:00Zjunk"})
    EXPECT_FALSE(ParseTime(bad)) << bad;
}

}  // namespace
}  // namespace gpumeter::report
