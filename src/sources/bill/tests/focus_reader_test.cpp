#include "sources/bill/focus_reader.h"

#include <gtest/gtest.h>

#include "sources/bill/csv_records.h"
#include "sources/bill/tests/bill_test_files.h"

namespace gpumeter::bill {
namespace {

const char* const kHeader =
    "BillingAccountId,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,EffectiveCost,"
    "BilledCost,ListCost,BillingCurrency,ResourceId,ResourceType,ServiceName,ServiceCategory,"
    "CommitmentDiscountId,CommitmentDiscountStatus,PricingCategory,Tags,x_UsageType\n";

struct Result {
  std::vector<domain::Charge> charges;
  std::optional<Error> error;
  FocusFileSummary summary;
};

Result Read(const std::string& path, const std::string& currency = "") {
  Result out;
  auto r = ReadFocusFile(path, currency, [&](const domain::Charge& c) {
    out.charges.push_back(c);
    return Expected<void>{};
  });
  if (r)
    out.summary = *r;
  else
    out.error = r.error();
  return out;
}

std::string Line(const std::string& start, const std::string& end, const std::string& effective,
                 const std::string& currency = "USD", const std::string& category = "Usage") {
  return "1234," + start + "," + end + "," + category + ",," + effective + ",9.5,," + currency +
         ",i-0abc,Instance,Amazon Elastic Compute Cloud,Compute,,,Dynamic,"
         "\"{\"\"team\"\": \"\"ml\"\"}\",BoxUsage:p5.48xlarge\n";
}

TEST(FocusReader, ReadsTheColumnsItUsesFromAnyOrderWithCustomColumns) {
  testing::TempFiles files;
  const auto path = files.Gzip(
      "aws.csv.gz", std::string(kHeader) +
                        Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "27.52") +
                        Line("2026-11-03 11:00:00 UTC", "2026-11-03 12:00:00 UTC", "-1e-3"));
  const auto r = Read(path);
  ASSERT_FALSE(r.error) << r.error->message;
  ASSERT_EQ(r.charges.size(), 2u);
  const auto& c = r.charges[0];
  EXPECT_EQ(c.period_start, 1793700000);  // 2026-11-03T10:00:00Z
  EXPECT_EQ(c.period_end, 1793703600);
  EXPECT_EQ(c.category, "Usage");
  EXPECT_DOUBLE_EQ(c.effective_cost, 27.52);
  EXPECT_DOUBLE_EQ(c.billed_cost, 9.5);
  EXPECT_FALSE(c.list_cost);  // null, not 0
  EXPECT_EQ(c.resource_id, "i-0abc");
  EXPECT_EQ(c.service_category, "Compute");
  EXPECT_EQ(c.pricing_category, "Dynamic");
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(r.charges[1].period_start, 1793703600);
  EXPECT_DOUBLE_EQ(r.charges[1].effective_cost, -0.001);
  EXPECT_EQ(r.summary.lines, 2);
  EXPECT_EQ(r.summary.currency, "USD");
}

struct BadCase {
  std::string text, expected;
};

TEST(FocusReader, EveryMalformedLineNamesTheFileTheLineAndTheColumn) {
  const std::string ok = Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1");
  const std::vector<BadCase> cases = {
      {std::string(kHeader) + ok + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1,5"),
       "f.csv:3: 19 fields where the header has 18"},
      {std::string(kHeader) + ok + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "abc"),
       "f.csv:3: column EffectiveCost: 'abc' is not an amount"},
      {std::string(kHeader) + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", ""),
       "f.csv:2: column EffectiveCost: empty"},
      {std::string(kHeader) + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "nan"),
       "f.csv:2: column EffectiveCost: 'nan'"},
      {std::string(kHeader) + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "2e13"),
       "f.csv:2: column EffectiveCost: '2e13' is not an amount within ±1e12"},
      {std::string(kHeader) + Line("2026-02-30T10:00:00Z", "2026-11-03T11:00:00Z", "1"),
       "f.csv:2: column ChargePeriodStart: '2026-02-30T10:00:00Z' is not a UTC time"},
      {std::string(kHeader) + Line("2026-11-03T10:00:00+01:00", "2026-11-03T11:00:00Z", "1"),
       "f.csv:2: column ChargePeriodStart"},
      {std::string(kHeader) + Line("2026-11-03T11:00:00Z", "2026-11-03T11:00:00Z", "1"),
       "f.csv:2: column ChargePeriodEnd: '2026-11-03T11:00:00Z' is not after"},
      {std::string(kHeader) + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1", "usd"),
       "f.csv:2: column BillingCurrency: 'usd' is not an ISO 4217 code"},
      {std::string(kHeader) + ok + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1", "EUR"),
       "f.csv:3: column BillingCurrency: EUR where the lines before are in USD"},
      {std::string(kHeader) +
           Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1", "USD", "Refund"),
       "f.csv:2: column ChargeCategory: 'Refund' is not Usage"},
      {"ChargePeriodStart,ChargePeriodEnd,ChargeCategory,EffectiveCost,BilledCost,BillingCurrency,"
       "ResourceId,lineItem/UnblendedCost\n",
       "f.csv:1: column lineItem/UnblendedCost: not a FOCUS 1.0–1.3 column"},
      {"ChargePeriodStart,ChargePeriodEnd,ChargeCategory,EffectiveCost,BilledCost,BillingCurrency,"
       "ResourceId,BilledCost\n",
       "f.csv:1: column BilledCost: appears twice in the header (fields 5 and 8)"},
      {"ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,BillingCurrency,ResourceId\n",
       "f.csv:1: column EffectiveCost: missing from the header"},
      {"", "f.csv: empty (no FOCUS header line)"},
      {std::string(kHeader) + ok + "1234,2026-11-03T10:00:00Z,2026-11-03T11:",  // cut mid-line
       "f.csv:3: 3 fields where the header has 18: the line ends in column ChargePeriodEnd"},
  };
  for (const auto& c : cases) {
    testing::TempFiles files;
    const auto r = Read(files.Plain("f.csv", c.text));
    ASSERT_TRUE(r.error) << c.expected;
    EXPECT_NE(r.error->message.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in: " << r.error->message;
  }
}

// No byte of a message may be one a terminal acts on, nor one that is not UTF-8: control
// characters, and the bytes 0xf5-0xff (our own text is ASCII and "–", "±").
void ExpectEscaped(const std::string& message) {
  for (const char ch : message) {
    const auto b = static_cast<unsigned char>(ch);
    EXPECT_FALSE(b < 0x20 || b == 0x7f || b >= 0xf5) << "byte " << int{b} << " in: " << message;
  }
}

TEST(FocusReader, AHostileHeaderOrValueIsQuotedShortAndEscaped) {
  testing::TempFiles files;
  // A column named with an escape sequence (a terminal title and a screen clear), a NUL,
  // invalid UTF-8 and a megabyte more.
  const std::string hostile = std::string("x\x1b]0;pwned\x07\x1b[2J") + std::string(1, '\0') +
                              "\xff\xfe\xc3" + std::string(1 << 20, 'z');
  const auto header = Read(
      files.Plain("h.csv", "ChargePeriodStart,ChargePeriodEnd," + hostile + ",ChargeCategory\n"));
  ASSERT_TRUE(header.error);
  const std::string& m = header.error->message;
  EXPECT_NE(m.find("h.csv:1: column x\\x1b]0;pwned\\x07\\x1b[2J\\x00\\xff\\xfe\\xc3zzz"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("... (1048595 bytes): not a FOCUS 1.0–1.3 column"), std::string::npos) << m;
  EXPECT_LT(m.size(), 400u);  // of a 1 MiB column name
  ExpectEscaped(m);
  // A value of a data line, and a column of a header that is too big to be read at all.
  const auto value = Read(files.Plain(
      "v.csv", std::string(kHeader) + Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1",
                                           "USD", "\x1b[31mUsage\xc0\x80")));
  ASSERT_TRUE(value.error);
  EXPECT_NE(value.error->message.find(
                "v.csv:2: column ChargeCategory: '\\x1b[31mUsage\\xc0\\x80' is not Usage"),
            std::string::npos)
      << value.error->message;
  ExpectEscaped(value.error->message);
  const auto huge = Read(files.Plain(
      "huge.csv", "ChargePeriodStart,x_" + std::string(kMaxCsvRecordBytes, 'q') + "\n"));
  ASSERT_TRUE(huge.error);
  EXPECT_NE(huge.error->message.find("huge.csv:1: a record longer than"), std::string::npos)
      << huge.error->message;
  EXPECT_LT(huge.error->message.size(), 300u);
}

TEST(FocusReader, ACrOnlyFileNamesTheLineOfAnError) {
  testing::TempFiles files;
  std::string text = std::string(kHeader) +
                     Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1") +
                     Line("2026-11-03T11:00:00Z", "2026-11-03T12:00:00Z", "2") +
                     Line("2026-11-03T12:00:00Z", "2026-11-03T13:00:00Z", "oops");
  for (auto& ch : text)
    if (ch == '\n') ch = '\r';
  const auto r = Read(files.Plain("cr.csv", text));
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("cr.csv:4: column EffectiveCost: 'oops'"), std::string::npos)
      << r.error->message;
  ASSERT_EQ(r.charges.size(), 2u);
  EXPECT_EQ(r.charges[1].line, 3);
}

TEST(FocusReader, ASecondFileMustBeInTheFirstsCurrency) {
  testing::TempFiles files;
  const auto path =
      files.Plain("eur.csv", std::string(kHeader) +
                                 Line("2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z", "1", "EUR"));
  const auto r = Read(path, "USD");
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("eur.csv:2: column BillingCurrency: EUR where the lines before "
                                  "are in USD"),
            std::string::npos)
      << r.error->message;
}

}  // namespace
}  // namespace gpumeter::bill
