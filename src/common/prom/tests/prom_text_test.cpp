#include "common/prom/prom_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpumeter::prom {
namespace {

TEST(PromText, ParsesWhatExportersWrite) {
  const auto page = ParsePromText(
      "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\r\n"
      "# TYPE DCGM_FI_DEV_FB_USED gauge\r\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB "
      "HBM3\",Hostname=\"n1\",pod=\"p\\\"1\\\\x\\n\"} 1234\r\n"
      "\n"
      "up 1 1733000000000\n"
      "x_total{a=\"\",} NaN\n"
      "y -Inf\n"
      "  # a comment\n"
      "# EOF\n"
      "ignored after eof {\n");
  ASSERT_TRUE(page) << page.error().message;
  ASSERT_EQ(page->samples.size(), 4u);
  EXPECT_EQ(page->types.at("DCGM_FI_DEV_FB_USED"), "gauge");
  const auto& s = page->samples[0];
  EXPECT_EQ(s.name, "DCGM_FI_DEV_FB_USED");
  EXPECT_EQ(s.labels.at("pod"), "p\"1\\x\n");
  EXPECT_EQ(s.labels.at("modelName"), "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(s.value, 1234);
  EXPECT_EQ(s.line, 3u);
  EXPECT_DOUBLE_EQ(page->samples[1].value, 1);
  EXPECT_TRUE(std::isnan(page->samples[2].value));
  EXPECT_EQ(page->samples[2].labels.at("a"), "");
  EXPECT_TRUE(std::isinf(page->samples[3].value));
}

TEST(PromText, MalformedLinesNameTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"ok 1\nbad{a=\"1\" 2\n", "line 2: expected ',' or '}' after label a"},
      {"m{a=1} 2\n", "line 1: expected '\"' to open a label value"},
      {"m{a=\"1} 2\n", "line 1: label value not closed"},
      {"m{a=\"\\q\"} 2\n", "line 1: unknown escape \\q"},
      {"m{a=\"1\",a=\"2\"} 2\n", "line 1: label a repeated"},
      {"m{1a=\"1\"} 2\n", "line 1: expected a label name"},
      {"m two\n", "line 1: 'two' is not a number"},
      {"m\n", "line 1: expected a space before the value of m"},
      {"m 1 2 3\n", "line 1: unexpected text after the sample of m"},
      {"{a=\"1\"} 2\n", "line 1: expected a metric name"},
      {"# TYPE\n", "line 1: malformed # TYPE line"},
      {"m{a=\"1\",b=\"2\"} 1\nm{a=\"2\"} 1\nm{b=\"2\",a=\"1\"} 3\n",
       "line 3: series m repeats the one on line 1 with the same labels"},
  };
  for (const auto& [text, want] : cases) {
    const auto p = ParsePromText(text);
    ASSERT_FALSE(p) << text;
    EXPECT_NE(p.error().message.find(want), std::string::npos)
        << text << " → " << p.error().message;
  }
}

}  // namespace
}  // namespace gpumeter::prom
