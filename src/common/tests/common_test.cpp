// The small utilities every reader of outside input leans on: quoting untrusted text, durations,
// and bounded file reads that a FIFO, a device or a huge file cannot stall or exhaust.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/bounded_file.h"
#include "common/duration.h"
#include "common/duration_format.h"
#include "common/excerpt.h"
#include "common/secret_file.h"
#include "common/text_cell.h"

namespace gpumeter {
namespace {

TEST(Excerpt, PrintableKeptOtherBytesEscapedLongTextCut) {
  EXPECT_EQ(Excerpt("plain text"), "plain text");
  EXPECT_EQ(Excerpt(std::string("a\nb\0c\xff", 6)), "a\\x0ab\\x00c\\xff");
  EXPECT_EQ(Excerpt(std::string(300, 'x'), 10), "xxxxxxxxxx... (300 bytes)");
  // The start of a longer text (a reply not kept whole): the mark counts the whole.
  EXPECT_EQ(Excerpt("abc", 10, 5000), "abc... (5000 bytes)");
  EXPECT_EQ(Excerpt(std::string(300, 'x'), 10, 5000), "xxxxxxxxxx... (5000 bytes)");
  EXPECT_EQ(Excerpt("abc", 10, 3), "abc");
}

TEST(TextCell, ControlAndBidiCharactersAreEscapedOtherUtf8Kept) {
  EXPECT_EQ(TerminalCell("ml/train-0/worker"), "ml/train-0/worker");
  EXPECT_EQ(TerminalCell("a\nb\x1b[2J"), "a\\x0ab\\x1b[2J");
  // U+202E RIGHT-TO-LEFT OVERRIDE would show "exe.txt" as "txt.exe"-like text.
  EXPECT_EQ(TerminalCell("pod\xe2\x80\xaetxt"), "pod\\u{202e}txt");
  EXPECT_EQ(TerminalCell("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u{2066}x\\u{2069}");
  EXPECT_EQ(TerminalCell("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5");  // é, 日
  EXPECT_EQ(TerminalCell("\xc2\x9b"), "\\u{009b}");                                 // C1 CSI
  EXPECT_EQ(TerminalCell("\xff\xc3"), "\\xff\\xc3");                                // not UTF-8
  EXPECT_EQ(TerminalCell("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");                       // overlong
}

TEST(TextCell, FormulaCellsAreNeutralisedNumbersAreNot) {
  EXPECT_EQ(SpreadsheetCell("=cmd|' -C calc'!A0"), "'=cmd|' -C calc'!A0");
  EXPECT_EQ(SpreadsheetCell("@ads"), "'@ads");
  EXPECT_EQ(SpreadsheetCell("+sum(A1:A9)"), "'+sum(A1:A9)");
  EXPECT_EQ(SpreadsheetCell("-2+3+cmd|' /C calc'!A0"), "'-2+3+cmd|' /C calc'!A0");
  EXPECT_EQ(SpreadsheetCell("\tx"), "'\tx");
  EXPECT_EQ(SpreadsheetCell("\rx"), "'\rx");
  EXPECT_EQ(SpreadsheetCell("-0.25"), "-0.25");
  EXPECT_EQ(SpreadsheetCell("+3e2"), "+3e2");
  EXPECT_EQ(SpreadsheetCell("search"), "search");
  EXPECT_EQ(SpreadsheetCell(""), "");
}

TEST(SecretFile, AGroupOrWorldReadableFileIsWarnedAbout) {
  const auto path =
      std::filesystem::temp_directory_path() / ("gpumeter-secret-" + std::to_string(::getpid()));
  std::ofstream(path) << "t0ken\n";
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  const auto w = SecretFileWarning("--bearer-token-file", path.string());
  EXPECT_NE(
      w.find("--bearer-token-file " + path.string() + ": mode 0644, readable by group or others"),
      std::string::npos)
      << w;
  EXPECT_EQ(w.find("t0ken"), std::string::npos);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(SecretFileWarning("--bearer-token-file", path.string()), "");
  std::filesystem::remove(path);
}

TEST(Duration, FlagSecondsBareOrWithAUnitAndBadOnesNamed) {
  EXPECT_DOUBLE_EQ(ParseSeconds("0.5").value().count(), 0.5);
  EXPECT_DOUBLE_EQ(ParseSeconds("90").value().count(), 90);
  EXPECT_DOUBLE_EQ(ParseSeconds("1.5s").value().count(), 1.5);
  EXPECT_DOUBLE_EQ(ParseSeconds("250ms").value().count(), 0.25);
  EXPECT_DOUBLE_EQ(ParseSeconds("5m").value().count(), 300);
  EXPECT_DOUBLE_EQ(ParseSeconds("24h").value().count(), 86400);
  EXPECT_DOUBLE_EQ(ParseSeconds("2w").value().count(), 14 * 86400);
  EXPECT_DOUBLE_EQ(ParseSeconds("0").value().count(), 0);
  EXPECT_EQ(ParseSeconds("-1s").error().message, "'-1s': a duration cannot be negative");
  EXPECT_EQ(ParseSeconds("1e400").error().message.find("'1e400'"), 0u);
  EXPECT_EQ(ParseSeconds("1e307w").error().message, "'1e307w': not a finite duration");
  EXPECT_EQ(ParseSeconds("nan").error().message, "'nan': not a finite duration");
  EXPECT_EQ(ParseSeconds("infs").error().message, "'infs': not a finite duration");
  for (const char* bad : {"", "s", "ms", "m5", "5 m", "5x", "5mms", "1.5.2", "1e400"})
    EXPECT_NE(ParseSeconds(bad).error().message.find("expected seconds or a number and a unit"),
              std::string::npos)
        << bad;
  EXPECT_EQ(FormatSeconds(Seconds(0.5)), "0.5");
  EXPECT_EQ(FormatSeconds(Seconds(3600)), "3600");
  EXPECT_EQ(ToMilliseconds(Seconds(0.05)).count(), 50);
  // Written back in the largest unit that divides it, and read back the same.
  const std::pair<double, const char*> forms[] = {
      {86400, "1d"},     {14 * 86400, "14d"}, {5400, "90m"},   {48 * 3600, "2d"},
      {90061, "90061s"}, {1.5, "1.5s"},       {0.25, "0.25s"}, {0, "0s"}};
  for (const auto& [seconds, text] : forms) {
    EXPECT_EQ(FormatDuration(Seconds(seconds)), text);
    EXPECT_DOUBLE_EQ(ParseSeconds(FormatDuration(Seconds(seconds)))->count(), seconds) << text;
  }
  EXPECT_EQ(WholeSeconds(Seconds(59.6)), 60);
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

// Handed over in pieces as it is read, never whole; the cap is ReadBoundedFile's, counted before
// a piece is handed over.
TEST(BoundedFile, ChunksAddUpToTheFileWithinTheCap) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gpumeter-bounded-chunks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "line " + std::to_string(i) + "\n";
  std::ofstream(dir / "page") << text;
  std::string got;
  size_t pieces = 0;
  const auto read =
      ReadBoundedFileChunks((dir / "page").string(), text.size(), [&](std::string_view chunk) {
        got += chunk;
        ++pieces;
      });
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(got, text);
  EXPECT_GT(pieces, 1u);
  size_t handed = 0;
  const auto big = ReadBoundedFileChunks((dir / "page").string(), 10000,
                                         [&](std::string_view chunk) { handed += chunk.size(); });
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("larger than 10000 bytes (refused)"), std::string::npos);
  EXPECT_LE(handed, 10000u);
  std::filesystem::remove_all(dir);
}

TEST(SecretFile, TrimmedOneLineNotEmptyErrorsNameFlagAndPathNotTheSecret) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpumeter-secret-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  EXPECT_EQ(ReadSecretFile("--t", write("nl", "s3cret\n")).value(), "s3cret");
  EXPECT_EQ(ReadSecretFile("--t", write("crlf", "  s3cret \r\n")).value(), "s3cret");
  const struct {
    std::string path, want;
  } bad[] = {
      {write("empty", " \n\t"), ": empty"},
      {write("two", "s3cret\nother\n"), ": more than one line"},
      {write("nul", std::string("s3c\0ret", 7)), ": more than one line"},
      {write("big", std::string(kMaxSecretFileBytes + 1, 'x')), ": larger than 65536 bytes"},
      {dir.string(), ": not a regular file"},
      {(dir / "absent").string(), ": cannot read (No such file or directory)"},
  };
  for (const auto& b : bad) {
    const auto r = ReadSecretFile("--token-file", b.path);
    ASSERT_FALSE(r) << b.path;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
    EXPECT_EQ(r.error().message.rfind("--token-file " + b.path + b.want, 0), 0u)
        << r.error().message;
    EXPECT_EQ(r.error().message.find("s3c"), std::string::npos) << r.error().message;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumeter
