#include "sinks/report/window.h"

#include <gtest/gtest.h>

namespace gpumeter::report {
namespace {

TEST(Window, Durations) {
  EXPECT_EQ(*ParseDuration("7d"), 7 * 86400);
  EXPECT_EQ(*ParseDuration("24h"), 86400);
  EXPECT_EQ(*ParseDuration("90m"), 5400);
  EXPECT_EQ(*ParseDuration("2w"), 14 * 86400);
  EXPECT_EQ(*ParseDuration("45s"), 45);
  for (const char* bad : {"", "7", "d", "7x", "-1d", "0h", "1.5d", "7 d", "last week"}) {
    const auto d = ParseDuration(bad);
    ASSERT_FALSE(d) << bad;
    EXPECT_NE(d.error().message.find(std::string("'") + bad + "'"), std::string::npos)
        << d.error().message;
  }
}

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
