#include "common/prom/prom_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

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

// What a PromStream hands over, fed `text` cut at `splits` (ascending offsets).
struct Streamed {
  Expected<void> result;
  std::vector<PromSample> samples;
  std::map<std::string, std::string> types;
};

Streamed Stream(std::string_view text, const std::vector<size_t>& splits,
                size_t max_line = kMaxLineBytes,
                std::function<bool(const std::string&)> check_repeats = nullptr) {
  Streamed out;
  PromStream stream({.sample = [&out](PromSample&& s) -> Expected<void> {
                       out.samples.push_back(std::move(s));
                       return {};
                     },
                     .type = [&out](std::string n, std::string t) { out.types[n] = t; },
                     .check_repeats = std::move(check_repeats)},
                    max_line);
  size_t at = 0;
  for (const size_t split : splits) {
    out.result = stream.Feed(text.substr(at, split - at));
    at = split;
  }
  if (out.result) out.result = stream.Feed(text.substr(at));
  if (out.result) out.result = stream.Finish();
  return out;
}

// Label values in UTF-8 (2-, 3- and 4-byte sequences), CRLF, comments, no final line end: split
// at every byte, and fed a byte at a time, the stream reads what the whole page reads.
TEST(PromStream, EveryChunkBoundaryReadsAsTheWholePage) {
  const std::string text =
      "# HELP m Ünïcode help\r\n# TYPE m gauge\r\n"
      "m{pod=\"caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x9a\x80\",ns=\"a\\\"b\"} 1.5 1700000000000\r\n"
      "\n  # comment\nn{x=\"\xe6\x97\xa5\xe6\x9c\xac\"} -2\nlast 3";
  const auto whole = ParsePromText(text);
  ASSERT_TRUE(whole) << whole.error().message;
  ASSERT_EQ(whole->samples.size(), 3u);
  EXPECT_EQ(whole->samples[0].labels.at("pod"), "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x9a\x80");
  std::vector<size_t> every;
  for (size_t k = 1; k < text.size(); ++k) {
    const auto s = Stream(text, {k});
    ASSERT_TRUE(s.result) << k << ": " << s.result.error().message;
    EXPECT_EQ(s.samples, whole->samples) << "split at " << k;
    EXPECT_EQ(s.types, whole->types) << "split at " << k;
    every.push_back(k);
  }
  const auto bytes = Stream(text, every);
  ASSERT_TRUE(bytes.result) << bytes.result.error().message;
  EXPECT_EQ(bytes.samples, whole->samples);
}

// A line over the cap is an error naming it and quoting its start, wherever the pieces split
// it; a line of exactly the cap is read; a page with no line end at all is refused as it comes.
TEST(PromStream, ALineOverTheCapIsAnErrorNamingItWhereverItIsSplit) {
  const std::string text = "a 1\nb 2\nlong{v=\"" + std::string(100, 'x') + "\"} 3\nc 4\n";
  for (size_t k = 1; k < text.size(); ++k) {
    const auto s = Stream(text, {k}, 64);
    ASSERT_FALSE(s.result) << k;
    EXPECT_EQ(s.result.error().message,
              "line 3: longer than 64 bytes (refused): long{v=\"" + std::string(52, 'x') + "...")
        << k;
    EXPECT_EQ(s.samples.size(), 2u) << k;
  }
  const std::string fits = "m{v=\"" + std::string(55, 'y') + "\"} 1";
  ASSERT_EQ(fits.size(), 64u);
  EXPECT_TRUE(Stream(fits + "\n", {10}, 64).result);
  PromStream endless({.sample = [](PromSample&&) -> Expected<void> { return {}; }}, 1024);
  Expected<void> fed;
  for (int i = 0; i < 100 && fed; ++i) fed = endless.Feed(std::string(100, '\x01'));
  ASSERT_FALSE(fed);
  EXPECT_NE(fed.error().message.find("line 1: longer than 1024 bytes"), std::string::npos);
  EXPECT_NE(fed.error().message.find("\\x01"), std::string::npos) << "quoted, not raw";
}

// Repeats are checked in the families the reader keeps only; elsewhere a repeat costs nothing.
TEST(PromStream, RepeatsAreCheckedInTheChosenFamiliesOnly) {
  const std::string text = "other 1\nother 1\nkept{a=\"1\"} 1\nkept{a=\"1\"} 2\n";
  const auto s = Stream(text, {}, kMaxLineBytes, [](const std::string& n) { return n == "kept"; });
  ASSERT_FALSE(s.result);
  EXPECT_EQ(s.result.error().message,
            "line 4: series kept repeats the one on line 3 with the same labels");
  EXPECT_EQ(s.samples.size(), 3u);
  EXPECT_TRUE(Stream("other 1\nother 1\n", {}, kMaxLineBytes, [](const std::string&) {
                return false;
              }).result);
}

// A handler's error ends the parse: later pieces hand nothing over and every call returns it.
// After # EOF the rest of the page is ignored, in any piece.
TEST(PromStream, AnErrorOrEofEndsTheParse) {
  size_t seen = 0;
  PromStream stream({.sample = [&seen](PromSample&& s) -> Expected<void> {
    ++seen;
    if (s.name == "stop") return MakeError(ErrorCode::kInvalidInput, "stopped");
    return {};
  }});
  EXPECT_TRUE(stream.Feed("a 1\nst"));
  EXPECT_FALSE(stream.Feed("op 2\nb 3\n"));
  const auto again = stream.Feed("c 4\n");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, "stopped");
  EXPECT_FALSE(stream.Finish());
  EXPECT_EQ(seen, 2u);
  const auto eof = Stream("a 1\n# EOF\nbroken{\n", {7});
  EXPECT_TRUE(eof.result);
  EXPECT_EQ(eof.samples.size(), 1u);
}

}  // namespace
}  // namespace gpumeter::prom
