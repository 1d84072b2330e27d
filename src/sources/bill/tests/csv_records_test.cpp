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
      files.Plain("big.csv", "A\n\"" + std::string(kMaxCsvFieldBytes + 4096, 'x') + "\"\n"));
  ASSERT_TRUE(big.error);
  EXPECT_NE(big.error->message.find("big.csv:2: a field longer than"), std::string::npos)
      << big.error->message;
  std::string wide = "A\n";
  for (size_t i = 0; i <= kMaxCsvFields; ++i) wide += "1,";
  const auto many = ReadAll(files.Plain("wide.csv", wide + "\n"));
  ASSERT_TRUE(many.error);
  EXPECT_NE(many.error->message.find("wide.csv:2: more than"), std::string::npos)
      << many.error->message;
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
