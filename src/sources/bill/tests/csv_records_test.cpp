#include "sources/bill/csv_records.h"

#include <gtest/gtest.h>

#include "sources/bill/tests/bill_test_files.h"

namespace gpumeter::bill {
namespace {

struct Read {
  std::vector<std::pair<int64_t, std::vector<std::string>>> records;
  std::optional<Error> error;
};

Read ReadAll(const std::string& path) {
  Read out;
  auto r = ReadCsvRecords(path, [&](int64_t line, const std::vector<std::string>& f) {
    out.records.emplace_back(line, f);
    return Expected<void>{};
  });
  if (!r) out.error = r.error();
  return out;
}

using Fields = std::vector<std::string>;

TEST(CsvRecords, QuotedFieldsLineBreaksAndTheLinesRecordsStartOn) {
  testing::TempFiles files;
  const auto path = files.Plain("a.csv",
                                "\xEF\xBB\xBF"
                                "A,B,C\r\n"
                                "1,\"two, with comma\",\"say \"\"hi\"\"\"\r\n"
                                "  \t\r\n"
                                "x,\"multi\nline\",z\n"
                                "last,,end");  // no final line break
  const auto r = ReadAll(path);
  ASSERT_FALSE(r.error) << r.error->message;
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0].second, (Fields{"A", "B", "C"}));  // the BOM is not part of "A"
  EXPECT_EQ(r.records[0].first, 1);
  EXPECT_EQ(r.records[1].second, (Fields{"1", "two, with comma", "say \"hi\""}));
  EXPECT_EQ(r.records[1].first, 2);
  EXPECT_EQ(r.records[2].second, (Fields{"x", "multi\nline", "z"}));
  EXPECT_EQ(r.records[2].first, 4);
  EXPECT_EQ(r.records[3].second, (Fields{"last", "", "end"}));
  EXPECT_EQ(r.records[3].first, 6);  // the quoted line break counted
}

TEST(CsvRecords, GzipIsReadLikeThePlainFileAndACutStreamIsAnError) {
  testing::TempFiles files;
  std::string text = "A,B\n";
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + ",\"v" + std::to_string(i) + "\"\n";
  const auto plain = ReadAll(files.Plain("p.csv", text));
  const auto gz = ReadAll(files.Gzip("p.csv.gz", text));
  ASSERT_FALSE(plain.error);
  ASSERT_FALSE(gz.error) << gz.error->message;
  EXPECT_EQ(gz.records, plain.records);
  EXPECT_EQ(gz.records.back().first, 20001);
  const auto cut = ReadAll(files.Gzip("cut.csv.gz", text, 40));
  ASSERT_TRUE(cut.error);
  EXPECT_NE(cut.error->message.find("cut.csv.gz:"), std::string::npos) << cut.error->message;
  EXPECT_LT(cut.records.size(), plain.records.size());
}

TEST(CsvRecords, MalformedQuotingNamesTheFileAndLine) {
  testing::TempFiles files;
  const auto stray = ReadAll(files.Plain("s.csv", "A,B\n1,2\n3,ab\"c\n"));
  ASSERT_TRUE(stray.error);
  EXPECT_NE(stray.error->message.find("s.csv:3: malformed CSV"), std::string::npos)
      << stray.error->message;
  const auto after = ReadAll(files.Plain("t.csv", "A,B\n\"x\"y,2\n"));
  ASSERT_TRUE(after.error);
  EXPECT_NE(after.error->message.find("t.csv:2:"), std::string::npos) << after.error->message;
  const auto open = ReadAll(files.Plain("o.csv", "A,B\n1,2\n3,\"never closed\n4,5\n"));
  ASSERT_TRUE(open.error);
  EXPECT_NE(open.error->message.find("o.csv:3: the file ends inside a quoted field"),
            std::string::npos)
      << open.error->message;
  EXPECT_EQ(open.records.size(), 2u);  // what came before was delivered
}

TEST(CsvRecords, AFieldOrARecordPastItsCapIsRefusedNotAllocated) {
  testing::TempFiles files;
  const auto big = ReadAll(
      files.Plain("big.csv", "A\n\"" + std::string(kMaxCsvRecordBytes + 4096, 'x') + "\"\n"));
  ASSERT_TRUE(big.error);
  EXPECT_NE(big.error->message.find("big.csv:2: a record longer than 8388608 bytes"),
            std::string::npos)
      << big.error->message;
  // Nine fields of 1 MiB, each within the cap, the record not: refused at the field that passes
  // it, gzip or not, with a message of a line, not of the record.
  std::string fields;
  for (int i = 0; i < 9; ++i) fields += (i ? "," : "") + std::string(size_t{1} << 20, 'y');
  const std::string text = "A,B\n1,2\n" + fields + "\n3,4\n";
  for (const auto& path : {files.Plain("wide.csv", text), files.Gzip("wide.csv.gz", text)}) {
    const auto r = ReadAll(path);
    ASSERT_TRUE(r.error) << path;
    EXPECT_NE(r.error->message.find(":3: a record longer than 8388608 bytes"), std::string::npos)
        << r.error->message;
    EXPECT_LT(r.error->message.size(), 200 + path.size());
    EXPECT_EQ(r.records.size(), 2u);  // the records before it, not the one after
  }
  std::string wide = "A\n";
  for (size_t i = 0; i <= kMaxCsvFields; ++i) wide += "1,";
  const auto many = ReadAll(files.Plain("many.csv", wide + "\n"));
  ASSERT_TRUE(many.error);
  EXPECT_NE(many.error->message.find("many.csv:2: more than"), std::string::npos)
      << many.error->message;
}

TEST(CsvRecords, ALoneCrEndsALineAsLfAndCrlfDo) {
  testing::TempFiles files;
  // CR only (classic Mac tools), with a blank line and a quoted line break.
  const auto cr = ReadAll(files.Plain("cr.csv", "A,B\r1,2\r\r3,\"x\ry\"\r4,5\r"));
  ASSERT_FALSE(cr.error) << cr.error->message;
  ASSERT_EQ(cr.records.size(), 4u);
  EXPECT_EQ(cr.records[1].first, 2);
  EXPECT_EQ(cr.records[2].first, 4);
  EXPECT_EQ(cr.records[2].second, (Fields{"3", "x\ry"}));
  EXPECT_EQ(cr.records[3].first, 6);  // the quoted CR counted
  const auto bad = ReadAll(files.Plain("crbad.csv", "A,B\r1,2\r3,ab\"c\r"));
  ASSERT_TRUE(bad.error);
  EXPECT_NE(bad.error->message.find("crbad.csv:3: malformed CSV"), std::string::npos)
      << bad.error->message;
  // CRLF, with a CR and its LF split between two reads of the file (the reader's 256 KiB): one
  // line end, not two. The header's 5 bytes put a line's CR at byte 262143.
  std::string text = "ABC\r\n";
  for (int i = 0; i < 100000; ++i) text += "x\r\n";
  ASSERT_EQ(text[262143], '\r');
  for (const auto& path : {files.Plain("crlf.csv", text), files.Gzip("crlf.csv.gz", text)}) {
    const auto r = ReadAll(path);
    ASSERT_FALSE(r.error) << r.error->message;
    ASSERT_EQ(r.records.size(), 100001u);
    for (size_t i = 0; i < r.records.size(); ++i)
      ASSERT_EQ(r.records[i].first, static_cast<int64_t>(i + 1)) << path;
  }
}

TEST(CsvRecords, NotARegularFileOrMissingIsAnErrorNamingIt) {
  testing::TempFiles files;
  const auto dir = ReadAll(files.Dir());
  ASSERT_TRUE(dir.error);
  EXPECT_NE(dir.error->message.find("not a regular file"), std::string::npos);
  const auto missing = ReadAll(files.Dir() + "/nope.csv");
  ASSERT_TRUE(missing.error);
  EXPECT_EQ(missing.error->code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error->message.find("nope.csv"), std::string::npos);
}

TEST(CsvRecords, AnErrorFromTheCallerStopsTheRead) {
  testing::TempFiles files;
  int calls = 0;
  auto r = ReadCsvRecords(files.Plain("c.csv", "A\n1\n2\n3\n"),
                          [&](int64_t line, const std::vector<std::string>&) -> Expected<void> {
                            ++calls;
                            if (line == 2) return MakeError(ErrorCode::kInvalidInput, "stop here");
                            return {};
                          });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "stop here");
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace gpumeter::bill
