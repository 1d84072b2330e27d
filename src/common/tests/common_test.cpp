// The small utilities every reader of outside input leans on: quoting untrusted text, durations,
// and bounded file reads that a FIFO, a device or a huge file cannot stall or exhaust.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/bounded_file.h"
#include "common/duration.h"
#include "common/excerpt.h"

namespace gpumeter {
namespace {

TEST(Excerpt, PrintableKeptOtherBytesEscapedLongTextCut) {
  EXPECT_EQ(Excerpt("plain text"), "plain text");
  EXPECT_EQ(Excerpt(std::string("a\nb\0c\xff", 6)), "a\\x0ab\\x00c\\xff");
  EXPECT_EQ(Excerpt(std::string(300, 'x'), 10), "xxxxxxxxxx... (300 bytes)");
}

TEST(Duration, UnitsZeroAndOverflowAreClear) {
  EXPECT_EQ(ParseDurationSeconds("90m").value(), 5400);
  EXPECT_EQ(ParseDurationSeconds("2w").value(), 14 * 86400);
  EXPECT_EQ(ParseDurationSeconds("0m").error().message, "'0m': a duration must be longer than 0");
  EXPECT_EQ(ParseDurationSeconds("99999999999999w").error().message,
            "'99999999999999w': longer than 100 years");
  EXPECT_EQ(ParseDurationSeconds("999999999999999999999s").error().message,
            "'999999999999999999999s': longer than 100 years");
  EXPECT_NE(ParseDurationSeconds("soon").error().message.find("expected a number and a unit"),
            std::string::npos);
}

TEST(BoundedFile, RegularFilesOnlyAndCapped) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpumeter-bounded-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "small") << "hello";
  EXPECT_EQ(ReadBoundedFile((dir / "small").string(), 5).value(), "hello");
  const auto big = ReadBoundedFile((dir / "small").string(), 4);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(big.error().message.find("larger than 4 bytes"), std::string::npos);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const auto fifo = ReadBoundedFile((dir / "fifo").string(), 1024);  // must not block
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);
  const auto zero = ReadBoundedFile("/dev/zero", 1024);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("not a regular file"), std::string::npos);
  const auto missing = ReadBoundedFile((dir / "none").string(), 1024);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumeter
