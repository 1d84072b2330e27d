// Retention under a stepped wall clock: a recorded clock step keeps the rows within retention of
// its newest earlier interval (in the file, so across a reopen), and rows written while a step
// is suspected are marked, in their minutes and in the hours rolled up from them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/store.h"
#include "support/temp_dir.h"

namespace gpumeter::store {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kT0 = 1'767'225'600 + 90;  // 2026-01-01T00:01:30Z

IntervalRecord At(int64_t end, bool suspect = false) {
  IntervalRecord r;
  r.end_unix_s = end;
  UnitRecord u;
  u.unit = {
      "node-a", "GPU-1", "GPU-1", "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kExclusive,
      1.0};
  u.seconds = 1;
  u.owners.push_back({{domain::OwnerKind::kContainer, "ns", "a", "c"}, 0, 1, 0, 1});
  r.units.push_back(u);
  r.clock_suspect = suspect;
  return r;
}

// One integer from the file, read with SQLite alone.
int64_t Count(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

// The days d (interval at kT0 + d days) whose rows `table` still holds.
std::vector<int64_t> DaysIn(const std::string& path, const std::string& table, int64_t days) {
  const bool minutes = table.find("minutes") != std::string::npos;
  std::vector<int64_t> out;
  for (int64_t d = 0; d < days; ++d) {
    const int64_t key = minutes ? (kT0 + d * kDay) / 60 : (kT0 + d * kDay) / 3600;
    if (Count(path, "SELECT COUNT(*) FROM " + table + " WHERE " + (minutes ? "minute" : "hour") +
                        " = " + std::to_string(key)) > 0)
      out.push_back(d);
  }
  return out;
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t d = from; d < to; ++d) v.push_back(d);
  return v;
}

// An interval a day for 20 days, then the clock steps 500 days ahead: pruning at the stepped
// time keeps what is within retention of day 19 (minutes 1 day, hours 10), in the file.
TEST(StoreRetention, AClockStepKeepsTheRowsWithinRetentionOfTheNewestRowBeforeIt) {
  testing::TempDir dir("gpumeter-retention");
  StoreOptions o;
  o.minute_retention_days = 1;
  o.hour_retention_days = 10;
  const auto path = (dir.path() / "usage.db").string();
  const int64_t last = kT0 + 19 * kDay, stepped = last + 500 * kDay;
  {
    auto s = Store::Open(path, o);
    ASSERT_TRUE(s) << s.error().message;
    for (int64_t d = 0; d < 20; ++d) ASSERT_TRUE((*s)->Write(At(kT0 + d * kDay)));
    ASSERT_TRUE((*s)->RecordClockStep({last, 500 * kDay, stepped}));
    ASSERT_TRUE((*s)->RecordClockStep({last, -3, stepped + 60}));  // the same window: ignored
    ASSERT_TRUE((*s)->Write(At(stepped, true)));
  }
  auto s = Store::Open(path, o);  // a restarted agent keeps to the step
  ASSERT_TRUE(s) << s.error().message;
  auto steps = (*s)->ClockSteps();
  ASSERT_TRUE(steps) << steps.error().message;
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ(steps->front().newest_before_unix_s, last);
  EXPECT_EQ(steps->front().step_s, 500 * kDay);
  EXPECT_EQ(steps->front().seen_unix_s, stepped);

  ASSERT_TRUE((*s)->Prune(stepped));
  // Hours: the 10 days up to day 19's hour; minutes: the day up to it (day 18's minute is 24 h
  // before day 19's, its hour the window's first).
  EXPECT_EQ(DaysIn(path, "unit_hours", 20), Range(9, 20));
  EXPECT_EQ(DaysIn(path, "usage_hours", 20), Range(9, 20));
  EXPECT_EQ(DaysIn(path, "unit_minutes", 20), Range(18, 20));
  EXPECT_EQ(DaysIn(path, "usage_minutes", 20), Range(18, 20));
  EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM unit_minutes WHERE minute = " +
                            std::to_string(stepped / 60)),
            1)
      << "the stepped interval itself is within retention of the stepped clock";

  // Without the step recorded, the same prune would have left only the stepped interval.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM clock_steps", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ASSERT_TRUE((*s)->Prune(stepped));
  EXPECT_TRUE(DaysIn(path, "unit_hours", 20).empty());
  EXPECT_TRUE(DaysIn(path, "unit_minutes", 20).empty());
}

// Rows written while a step is suspected are marked; a minute or hour with one marked row is
// marked, and its rollup too.
TEST(StoreRetention, RowsWrittenUnderASuspectedStepAreMarkedAndTheirHoursToo) {
  testing::TempDir dir("gpumeter-retention");
  const auto path = (dir.path() / "usage.db").string();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE((*s)->Write(At(kT0)));
  ASSERT_TRUE((*s)->Write(At(kT0 + 600, true)));
  ASSERT_TRUE((*s)->Write(At(kT0 + 610)));   // same minute as a marked row: stays marked
  ASSERT_TRUE((*s)->Write(At(kT0 + 3600)));  // the next hour: the first one rolls up
  for (const char* table : {"unit_minutes", "usage_minutes"}) {
    EXPECT_EQ(Count(path, std::string("SELECT COUNT(*) FROM ") + table + " WHERE clock_suspect"), 1)
        << table;
    EXPECT_EQ(Count(path, std::string("SELECT clock_suspect FROM ") + table +
                              " WHERE minute = " + std::to_string((kT0 + 600) / 60)),
              1)
        << table;
  }
  for (const char* table : {"unit_hours", "usage_hours"})
    EXPECT_EQ(Count(path, std::string("SELECT clock_suspect FROM ") + table +
                              " WHERE hour = " + std::to_string(kT0 / 3600)),
              1)
        << table;
  EXPECT_EQ(Count(path, "SELECT clock_suspect FROM unit_minutes WHERE minute = " +
                            std::to_string(kT0 / 60)),
            0);
}

}  // namespace
}  // namespace gpumeter::store
