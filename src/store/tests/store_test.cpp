#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <thread>

#include "store/identity.h"
#include "support/temp_dir.h"

namespace gpumeter::store {
namespace {

using domain::Owner;
using domain::OwnerKind;

Owner C(const std::string& pod) { return {OwnerKind::kContainer, "ns", pod, "c"}; }

UnitKey Gpu(const std::string& uuid) {
  return {"node-a", uuid, uuid, "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kTimeSlicing,
          1.0};
}

IntervalRecord Interval(int64_t end, double seconds, double a_compute) {
  IntervalRecord r;
  r.end_unix_s = end;
  UnitRecord u;
  u.unit = Gpu("GPU-1");
  u.seconds = seconds;
  u.memory_capacity_byte_seconds = 80e9 * seconds;
  u.energy_joules = 300 * seconds;
  u.owners = {{C("a"), 10e9 * seconds, a_compute * seconds, 100 * seconds, 0.5 * seconds},
              {{OwnerKind::kIdle, {}, {}, {}},
               70e9 * seconds,
               (1 - a_compute) * seconds,
               200 * seconds,
               0}};
  r.units.push_back(u);
  r.pod_labels[{"ns", "a"}] = {{"team", "search"}};
  return r;
}

double Owned(const std::vector<UnitRecord>& units, const Owner& o, double OwnerAmounts::*field) {
  double s = 0;
  for (const auto& u : units)
    for (const auto& x : u.owners)
      if (x.owner == o) s += x.*field;
  return s;
}

TEST(Store, IntervalsAddUpPerMinuteAndRollUpPerHour) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  // 3 hours and a bit of 1-second intervals (every 7th second, to keep the test fast), starting
  // mid-hour, with a's compute varying.
  const int64_t t0 = 1'767'225'600 + 1800;  // 2026-01-01T00:30:00Z
  std::mt19937_64 rng(3);
  double total_seconds = 0, total_a = 0;
  std::vector<std::pair<int64_t, double>> written;
  for (int64_t t = t0; t < t0 + 3 * 3600 + 900; t += 7) {
    const double c = 0.1 * static_cast<double>(rng() % 10);
    ASSERT_TRUE((*s)->Write(Interval(t, 1.0, c)));
    written.emplace_back(t, c);
  }
  // Any window: whole hours from rollups plus minute edges equal the brute-force sum.
  for (const auto& [from, to] :
       {std::pair{t0, t0 + 4 * 3600}, std::pair{t0 + 125, t0 + 2 * 3600 + 601},
        std::pair{t0 + 3600 - 1800, t0 + 3600 + 1800}, std::pair{t0 + 60, t0 + 120}}) {
    double want_s = 0, want_a = 0;
    const int64_t m0 = (from + 59) / 60 * 60, m1 = to / 60 * 60;  // whole minutes of the window
    for (const auto& [t, c] : written)
      if (t / 60 * 60 >= m0 && t / 60 * 60 < m1) want_s += 1, want_a += c;
    auto usage = (*s)->Usage(from, to);
    ASSERT_TRUE(usage) << usage.error().message;
    double got_s = 0;
    for (const auto& u : *usage) got_s += u.seconds;
    EXPECT_NEAR(got_s, want_s, 1e-6) << from - t0 << ".." << to - t0;
    EXPECT_NEAR(Owned(*usage, C("a"), &OwnerAmounts::compute_seconds), want_a, 1e-6)
        << from - t0 << ".." << to - t0;
    EXPECT_NEAR(Owned(*usage, C("a"), &OwnerAmounts::requested_share_seconds), 0.5 * want_s, 1e-6);
    total_seconds = want_s, total_a = want_a;
  }
  (void)total_seconds, (void)total_a;
  // Hourly buckets over everything add up to the whole.
  auto hourly = (*s)->HourlyUsage(t0 - 3600, t0 + 5 * 3600);
  ASSERT_TRUE(hourly) << hourly.error().message;
  double hourly_s = 0;
  for (const auto& [h, units] : *hourly) {
    EXPECT_EQ(h % 3600, 0);
    for (const auto& u : units) hourly_s += u.seconds;
  }
  EXPECT_DOUBLE_EQ(hourly_s, static_cast<double>(written.size()));
  auto span = (*s)->Span();
  ASSERT_TRUE(span && *span);
  EXPECT_EQ((*span)->first, t0 / 60 * 60);
  auto labels = (*s)->PodLabels();
  ASSERT_TRUE(labels);
  EXPECT_EQ(labels->at({"ns", "a"}).at("team"), "search");
}

// Every pod's usage is in the store: its files are the agent user's alone, whatever the umask,
// and an older store written 0644 is narrowed when opened.
TEST(Store, ItsFilesAreReadableByItsOwnerOnly) {
  testing::TempDir dir("gpumeter-store");
  const auto mode = [](const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 0777;
  };
  const mode_t old_umask = ::umask(022);
  const auto path = (dir.path() / "usage.db").string();
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_TRUE((*s)->Write(Interval(1'767'225'600, 1.0, 0.5)));
    for (const auto& p : {path, path + "-wal", path + "-shm"}) EXPECT_EQ(mode(p), 0600u) << p;
  }
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(mode(path), 0600u);
  }
  ::umask(old_umask);
}

TEST(Store, MinuteUsageReadsMinutesWhereverTheyAreKept) {
  testing::TempDir dir("gpumeter-store");
  auto s = Store::Open((dir.path() / "usage.db").string());
  ASSERT_TRUE(s) << s.error().message;
  // Three hours of one-minute intervals: the first two hours are rolled up by the writes of the
  // third, and their minute rows are kept too (retention is 14 days).
  const int64_t t0 = 1'767'225'600;  // 2026-01-01T00:00:00Z
  for (int64_t m = 0; m < 180; ++m)
    ASSERT_TRUE((*s)->Write(Interval(t0 + m * 60 + 30, 60, m % 2 ? 0.5 : 0.1)));
  auto rows = (*s)->MinuteUsage(t0, t0 + 3 * 3600);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 180u) << "one bucket per minute, also in the rolled-up hours";
  for (const auto& [t, units] : *rows) {
    ASSERT_EQ(units.size(), 1u);
    EXPECT_DOUBLE_EQ(units[0].seconds, 60) << t;
    EXPECT_DOUBLE_EQ(Owned(units, C("a"), &OwnerAmounts::compute_seconds),
                     ((t - t0) / 60) % 2 ? 30.0 : 6.0)
        << t;
  }
  // Sums per hour still come from the rollups: the same totals.
  auto hourly = (*s)->HourlyUsage(t0, t0 + 3 * 3600);
  ASSERT_TRUE(hourly);
  ASSERT_EQ(hourly->size(), 3u);
  EXPECT_DOUBLE_EQ(Owned(hourly->begin()->second, C("a"), &OwnerAmounts::compute_seconds),
                   30 * 30.0 + 30 * 6.0);
}

TEST(Store, ReopensWithItsDataAndRefusesWhatItCannotRead) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_TRUE((*s)->Write(Interval(1'767'225'600, 2.0, 0.5)));
  }
  auto r = Store::OpenReadOnly(path);
  ASSERT_TRUE(r) << r.error().message;
  auto usage = (*r)->Usage(1'767'225'600 - 3600, 1'767'225'600 + 3600);
  ASSERT_TRUE(usage);
  ASSERT_EQ(usage->size(), 1u);
  EXPECT_DOUBLE_EQ((*usage)[0].seconds, 2.0);
  EXPECT_EQ((*usage)[0].unit, Gpu("GPU-1"));

  // A file that is not a database.
  const auto junk = (dir.path() / "junk.db").string();
  std::ofstream(junk) << std::string(4096, 'x');
  for (int read_only = 0; read_only < 2; ++read_only) {
    auto opened = read_only ? Store::OpenReadOnly(junk) : Store::Open(junk);
    ASSERT_FALSE(opened);
    EXPECT_NE(opened.error().message.find(junk), std::string::npos) << opened.error().message;
    EXPECT_NE(opened.error().message.find("not a gpumeter store"), std::string::npos)
        << opened.error().message;
  }
  // A newer schema (a newer gpumeter's store carries the application_id too).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / "new.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(
                db,
                ("PRAGMA user_version=99; PRAGMA application_id=" + std::to_string(kApplicationId))
                    .c_str(),
                nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto newer = Store::Open((dir.path() / "new.db").string());
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("newer gpumeter"), std::string::npos)
      << newer.error().message;
  // Missing file, for reading; unwritable place, for writing.
  EXPECT_EQ(Store::OpenReadOnly((dir.path() / "none.db").string()).error().code,
            ErrorCode::kNotFound);
  auto nowhere = Store::Open((dir.path() / "no-dir" / "x.db").string());
  ASSERT_FALSE(nowhere);
  EXPECT_NE(nowhere.error().message.find("no-dir"), std::string::npos);
}

// A unit's mode decides the rules its readers apply, so a stored name no recorder writes is
// refused with the store and the unit named; a unit recorded with no mode reads back unknown.
TEST(Store, AModeNoRecorderWritesIsRefusedAndNoModeReadsUnknown) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  const int64_t t = 1'767'225'600;
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    auto r = Interval(t, 2.0, 0.5);
    r.units[0].unit.mode = std::nullopt;
    ASSERT_TRUE((*s)->Write(r));
  }
  {
    auto r = Store::OpenReadOnly(path);
    ASSERT_TRUE(r) << r.error().message;
    auto usage = (*r)->Usage(t - 3600, t + 3600);
    ASSERT_TRUE(usage) << usage.error().message;
    ASSERT_EQ(usage->size(), 1u);
    EXPECT_FALSE((*usage)[0].unit.mode.has_value());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE units SET mode='Time-Slicing'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto r = Store::OpenReadOnly(path);
  ASSERT_TRUE(r) << r.error().message;
  auto usage = (*r)->Usage(t - 3600, t + 3600);
  ASSERT_FALSE(usage);
  EXPECT_NE(usage.error().message.find("store " + path +
                                       ": unit id 1 has sharing mode "
                                       "\"Time-Slicing\", not exclusive"),
            std::string::npos)
      << usage.error().message;
}

TEST(Store, LockedDatabaseIsAnErrorAndLosesNothing) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE((*s)->Write(Interval(1'767'225'600, 1.0, 0.5)));
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);  // holds the write lock
  auto w = (*s)->Write(Interval(1'767'225'660, 1.0, 0.5));
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("another process"), std::string::npos) << w.error().message;
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  ASSERT_TRUE((*s)->Write(Interval(1'767'225'720, 1.0, 0.5)))
      << "writes resume once the lock is gone";
  auto usage = (*s)->Usage(1'767'225'600, 1'767'225'600 + 3600);
  ASSERT_TRUE(usage);
  EXPECT_DOUBLE_EQ((*usage)[0].seconds, 2.0);  // the first and the third interval
}

// A clock stepped back: an interval for an hour already rolled up is counted once, whether the
// window reads that hour from the hourly rows or from its minutes.
TEST(Store, LateIntervalsForARolledUpHourCountOnce) {
  testing::TempDir dir("gpumeter-store");
  auto s = Store::Open((dir.path() / "usage.db").string());
  ASSERT_TRUE(s) << s.error().message;
  const int64_t t = 1'767'225'600;  // an hour boundary
  ASSERT_TRUE((*s)->Write(Interval(t + 100, 1.0, 0.5)));
  ASSERT_TRUE((*s)->Write(Interval(t + 3600 + 100, 1.0, 0.5)));  // rolls the first hour up
  ASSERT_TRUE((*s)->Write(Interval(t + 200, 2.0, 0.5)));         // late, into the rolled-up hour
  for (const auto& [from, to] :
       {std::pair{t, t + 3600}, std::pair{t + 60, t + 3600}, std::pair{t - 3600, t + 7200}}) {
    auto u = (*s)->Usage(from, to);
    ASSERT_TRUE(u) << u.error().message;
    double seconds = 0;
    for (const auto& r : *u) seconds += r.seconds;
    EXPECT_DOUBLE_EQ(seconds, to - from >= 7200 ? 4.0 : 3.0) << from - t << ".." << to - t;
  }
}

// Two writers on one file (a second agent, a demo): each reads the rollup mark under the write
// lock, so no hour is rolled up twice.
TEST(Store, TwoWritersNeverRollAnHourUpTwice) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  auto a = Store::Open(path), b = Store::Open(path);
  ASSERT_TRUE(a && b);
  const int64_t t = 1'767'225'600;
  ASSERT_TRUE((*a)->Write(Interval(t + 10, 1.0, 0.5)));
  ASSERT_TRUE((*b)->Write(Interval(t + 20, 1.0, 0.5)));
  ASSERT_TRUE((*a)->Write(Interval(t + 3600 + 10, 1.0, 0.5)));  // a rolls the first hour up
  ASSERT_TRUE((*b)->Write(Interval(t + 3600 + 20, 1.0, 0.5)));  // b must not roll it up again
  ASSERT_TRUE((*a)->Write(Interval(t + 7200 + 10, 1.0, 0.5)));
  auto u = (*a)->Usage(t, t + 7200);  // two whole hours, from the rollups
  ASSERT_TRUE(u) << u.error().message;
  double seconds = 0;
  for (const auto& r : *u) seconds += r.seconds;
  EXPECT_DOUBLE_EQ(seconds, 4.0);
}

TEST(Store, PruneDropsOldMinutesButKeepsHours) {
  testing::TempDir dir("gpumeter-store");
  StoreOptions o;
  o.minute_retention_days = 1;
  o.hour_retention_days = 30;
  auto s = Store::Open((dir.path() / "usage.db").string(), o);
  ASSERT_TRUE(s) << s.error().message;
  const int64_t day = 86400, t = 1'767'225'600;
  ASSERT_TRUE((*s)->Write(Interval(t + 90, 1.0, 0.5)));            // 00:01:30, 10 days before "now"
  ASSERT_TRUE((*s)->Write(Interval(t + 9 * day + 90, 1.0, 0.5)));  // 1 day before "now"
  ASSERT_TRUE((*s)->Prune(t + 10 * day));
  // The old interval's minute is gone; its hour (whole hours of the window) is still there.
  auto minutes_only = (*s)->Usage(t + 60, t + 120);
  ASSERT_TRUE(minutes_only);
  EXPECT_TRUE(minutes_only->empty());
  auto whole_day = (*s)->Usage(t, t + day);
  ASSERT_TRUE(whole_day);
  ASSERT_EQ(whole_day->size(), 1u);
  EXPECT_DOUBLE_EQ((*whole_day)[0].seconds, 1.0);
}

// std::string of a file's bytes, to show it was left exactly as it was.
std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int64_t Pragma(const std::string& path, const char* name) {
  sqlite3* db = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK)
    sqlite3_exec(
        db, (std::string("PRAGMA ") + name).c_str(),
        [](void* out, int, char** values, char**) {
          *static_cast<int64_t*>(out) = std::stoll(values[0]);
          return 0;
        },
        &v, nullptr);
  sqlite3_close(db);
  return v;
}

TEST(Store, AnotherProgramsDatabaseIsRefusedAndLeftAsItWas) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "other.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto before = Bytes(path);
  for (int read_only = 0; read_only < 2; ++read_only) {
    auto s = read_only ? Store::OpenReadOnly(path) : Store::Open(path);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidInput);
    EXPECT_NE(s.error().message.find(path + ": not a gpumeter store (application_id 0, "
                                            "user_version 0, tables: invoices)"),
              std::string::npos)
        << s.error().message;
  }
  EXPECT_EQ(Bytes(path), before) << "not switched to WAL, no version, no tables";
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  // Another program's id, even with gpumeter's tables, is not ours.
  const auto tagged = (dir.path() / "tagged.db").string();
  { ASSERT_TRUE(Store::Open(tagged)); }
  ASSERT_EQ(sqlite3_open(tagged.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA application_id=42", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto refused = Store::Open(tagged);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("application_id 42"), std::string::npos);
}

TEST(Store, NewStoresCarryTheIdAndEarlierOnesAreRecognisedByTheirSchema) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_TRUE((*s)->Write(Interval(1'767'225'600, 2.0, 0.5)));
  }
  EXPECT_EQ(Pragma(path, "application_id"), kApplicationId);
  // As an earlier gpumeter left it: no application_id, and the tables of its time (version 3,
  // before the nodes table, the memory-traffic and energy-bound columns and the clock-step
  // marks; the id was stamped from then on).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string v3 =
      "PRAGMA application_id=0; DROP TABLE nodes; DROP TABLE clock_steps; PRAGMA user_version=3;";
  for (const char* table : {"unit_minutes", "unit_hours"})
    v3 += std::string("ALTER TABLE ") + table + " DROP COLUMN clock_suspect;";
  for (const char* table : {"usage_minutes", "usage_hours"})
    for (const char* column : {"memory_busy_seconds", "memory_busy_unknown_seconds",
                               "memory_busy_bound_seconds", "energy_bound_joules", "clock_suspect"})
      v3 += std::string("ALTER TABLE ") + table + " DROP COLUMN " + column + ";";
  ASSERT_EQ(sqlite3_exec(db, v3.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto r = Store::OpenReadOnly(path);
  ASSERT_TRUE(r) << r.error().message;
  r->reset();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(Pragma(path, "application_id"), kApplicationId) << "stamped on upgrade";
  auto usage = (*s)->Usage(1'767'225'600 - 3600, 1'767'225'600 + 3600);
  ASSERT_TRUE(usage) << usage.error().message;
  ASSERT_EQ(usage->size(), 1u) << "its data kept";
}

TEST(Store, HistoryReadsGoOnBesideTheWriterOnAnotherThread) {
  // The agent's rightsizing reads its store through usage::UsageHistorySource on a thread of
  // its own while the sampling thread writes: whole intervals only, and no error.
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  const usage::UsageHistorySource& history = **s;
  EXPECT_EQ(history.HistoryName(), "store " + path);
  const auto none = history.HistorySpan();
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(*none);
  const int64_t t0 = 1'767'225'600;  // 2026-01-01T00:00:00Z
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::string failure;
  std::thread reader([&] {
    while (!done && failure.empty()) {
      const auto span = history.HistorySpan();
      const auto labels = history.HistoryPodLabels();
      if (!span || !labels) {
        failure = !span ? span.error().message : labels.error().message;
        break;
      }
      if (!*span) continue;
      const auto rows = history.HistoryMinutes((*span)->first, (*span)->second);
      if (!rows) {
        failure = rows.error().message;
        break;
      }
      for (const auto& [t, units] : *rows)
        if (units.size() != 1 || units[0].seconds != 60) failure = "a part of an interval";
      ++reads;
    }
  });
  // The writer is fast enough to finish before the reader's thread is scheduled, so it waits for
  // a read at a few points: reads then happen between writes, not only before or after them.
  const auto await_a_read = [&] {
    const int seen = reads;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (reads == seen && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  for (int64_t m = 0; m < 120; ++m) {  // two hours: the writes of the second roll up the first
    if (!(*s)->Write(Interval(t0 + m * 60 + 30, 60, 0.5))) ADD_FAILURE() << "write " << m;
    if (m % 30 == 0) await_a_read();
  }
  done = true;
  reader.join();
  EXPECT_EQ(failure, "");
  EXPECT_GT(reads.load(), 0);
  const auto rows = history.HistoryMinutes(t0, t0 + 2 * 3600);
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(rows->size(), 120u) << "every interval the writer committed";
  const auto labels = history.HistoryPodLabels();
  ASSERT_TRUE(labels) << labels.error().message;
  EXPECT_EQ(labels->at({"ns", "a"}).at("team"), "search");
}

TEST(Store, NodesAreKeptPerCloudIdentityWithTheSpanEachWasSeenIn) {
  testing::TempDir dir("gpumeter-store");
  const auto path = (dir.path() / "usage.db").string();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  NodeRecord gke;
  gke.name = "gke-pool-a-1";
  gke.provider_id = "gce://proj/us-central1-a/gke-pool-a-1";
  gke.instance_id = "4520988123456789012";
  gke.instance_type = "a3-highgpu-8g";
  gke.capacity_type = "spot";
  const int64_t t0 = 1'796'500'800;
  for (const int64_t t : {t0 + 30, t0 + 90, t0 + 3000}) {
    IntervalRecord rec;
    rec.end_unix_s = t;
    rec.node = gke;
    ASSERT_TRUE((*s)->Write(rec));
  }
  // Recreated under the same name (GKE's auto-repair): the same provider ID, another numeric id,
  // another row; the first keeps its span.
  NodeRecord replaced = gke;
  replaced.instance_id = "4520988123456789999";
  replaced.gpu_count = 8;
  IntervalRecord later;
  later.end_unix_s = t0 + 4000;
  later.node = replaced;
  ASSERT_TRUE((*s)->Write(later));
  IntervalRecord unknown;  // an interval without node facts changes nothing
  unknown.end_unix_s = t0 + 5000;
  ASSERT_TRUE((*s)->Write(unknown));
  auto nodes = (*s)->Nodes();
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  const auto& a = (*nodes)[0];
  EXPECT_EQ(a.provider_id, gke.provider_id);
  EXPECT_EQ(a.instance_id, gke.instance_id);
  EXPECT_EQ(a.capacity_type, "spot");
  EXPECT_FALSE(a.gpu_count);  // not known, not 0
  EXPECT_EQ(a.first_seen_unix_s, t0 + 30);
  EXPECT_EQ(a.last_seen_unix_s, t0 + 3000);
  EXPECT_EQ((*nodes)[1].instance_id, replaced.instance_id);
  EXPECT_EQ((*nodes)[1].gpu_count, 8);
  EXPECT_EQ((*nodes)[1].first_seen_unix_s, t0 + 4000);
}

TEST(Store, PageCachesAreReleasedOnRequestAndAfterHistories) {
  // The owner's and the history reader's page caches fill up to cache_kib as the file grows;
  // ReleaseMemory and HistoryDone hand them back (SQLite's own count of what it holds).
  testing::TempDir dir("gpumeter-store");
  auto s = Store::Open((dir.path() / "usage.db").string());
  ASSERT_TRUE(s) << s.error().message;
  const int64_t t0 = 1'767'225'600;
  for (int64_t m = 0; m < 600; ++m) {
    auto r = Interval(t0 + m * 60 + 30, 60, 0.5);
    for (int u = 2; u < 10; ++u) {  // more units: a file of a few hundred pages
      r.units.push_back(r.units[0]);
      r.units.back().unit = Gpu("GPU-" + std::to_string(u));
    }
    ASSERT_TRUE((*s)->Write(r)) << m;
  }
  const auto filled = sqlite3_memory_used();
  ASSERT_TRUE((*s)->ReleaseMemory());
  const auto released = sqlite3_memory_used();
  EXPECT_LT(released, filled - 100 * 1024) << "the owner's cache held over 100 KiB";
  const usage::UsageHistorySource& history = **s;
  const auto rows = history.HistoryMinutes(t0, t0 + 600 * 60);
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(rows->size(), 600u);
  const auto read = sqlite3_memory_used();
  EXPECT_GT(read, released + 100 * 1024) << "the reader's cache holds the file's pages";
  history.HistoryDone();
  EXPECT_LT(sqlite3_memory_used(), read - 100 * 1024);
}

}  // namespace
}  // namespace gpumeter::store
