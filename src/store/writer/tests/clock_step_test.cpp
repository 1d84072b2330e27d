// The recorder under a stepped wall clock, driven by a clock pair: the samples' times (the wall
// clock) and an injected monotonic clock. A step of 500 days prunes nothing, is counted and
// logged once, and marks what is written; after an hour of the two clocks moving together
// pruning resumes, keeping what is within retention of the newest interval before the step;
// steps of an hour are handled as before.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <sstream>

#include "store/writer/clock_step_guard.h"
#include "store/writer/usage_recorder.h"
#include "support/temp_dir.h"

namespace gpumeter::app {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kDay = 86400;
constexpr int64_t kT0 = 1'796'083'230;  // 2026-12-01T00:00:30Z

// Interval `n` of a node with one GPU and one container, ending at `wall_s`.
node::NodeState StateAt(uint64_t n, int64_t wall_s) {
  node::NodeState s;
  s.node = "node-a";
  s.intervals = n;
  auto pass = std::make_shared<gpu::SampleResult>();
  pass->ok = true;
  pass->snapshot.timestamp_us = static_cast<uint64_t>(wall_s) * 1'000'000;
  s.last_good = pass;
  node::UnitInfo gpu;
  gpu.uuid = gpu.gpu_uuid = "GPU-1", gpu.model = "NVIDIA H100 80GB HBM3";
  s.units.push_back(gpu);
  attribution::UnitLedger l;
  l.uuid = "GPU-1";
  l.mode = domain::SharingMode::kExclusive;
  l.seconds = 1;
  attribution::Row r;
  r.owner = {domain::OwnerKind::kContainer, "ns", "pod-a", "c"};
  r.compute_seconds = 1, r.requested_share_seconds = 1;
  l.rows.push_back(r);
  s.last_interval.push_back(l);
  return s;
}

// A row as an earlier run left it, written to the store directly.
store::IntervalRecord OldRow(int64_t end) {
  auto rec = ToIntervalRecord(StateAt(1, end));
  return rec;
}

// One integer from the file, read with SQLite alone.
int64_t Scalar(const std::string& path, const std::string& sql) {
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

// The default logger's lines while it lives.
class LogCapture {
 public:
  LogCapture() : saved_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(saved_); }
  size_t Count(const std::string& what) const {
    const std::string text = out_.str();
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> saved_;
};

// A store with 1 day of minutes and 10 of hours, written by a recorder on an injected monotonic
// clock. Before the recorder's second interval (within the hour, so before its next prune),
// rows as an earlier run left them: 20 days, 5 days and 12 hours before the first interval.
class ClockStep : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreKeeper::Options o;
    o.path = path_;
    o.store.minute_retention_days = 1;
    o.store.hour_retention_days = 10;
    keeper_ = std::make_unique<StoreKeeper>(o);
    ASSERT_TRUE(keeper_->Ensure(now_));
    recorder_ = std::make_unique<UsageRecorder>(*keeper_, 3600, [this] { return now_; });
    Next(0);
    for (const int64_t ago : {20 * kDay, 5 * kDay, kDay / 2})
      ASSERT_TRUE(keeper_->Current()->Write(OldRow(kT0 - ago)));
  }
  // The next interval, `wall_step` after the previous one on the wall clock and 10 minutes after
  // it on the monotonic clock.
  void Next(int64_t wall_step, std::chrono::seconds monotonic_step = 600s) {
    wall_ += wall_step;
    now_ += monotonic_step;
    recorder_->Record(StateAt(++n_, wall_));
  }
  int64_t Rows(const std::string& table, int64_t end) const {
    const bool minutes = table.find("minutes") != std::string::npos;
    return Scalar(path_, "SELECT COUNT(*) FROM " + table + " WHERE " +
                             (minutes ? "minute = " + std::to_string(end / 60)
                                      : "hour = " + std::to_string(end / 3600)));
  }
  int64_t Marked() const {
    return Scalar(path_, "SELECT COUNT(*) FROM unit_minutes WHERE clock_suspect = 1");
  }

  gpumeter::testing::TempDir dir_{"gpumeter-clock-step"};
  std::string path_ = (dir_.path() / "usage.db").string();
  StoreKeeper::Clock::time_point now_ = StoreKeeper::Clock::now();
  int64_t wall_ = kT0;
  uint64_t n_ = 0;
  std::unique_ptr<StoreKeeper> keeper_;
  std::unique_ptr<UsageRecorder> recorder_;
};

TEST_F(ClockStep, FiveHundredDaysAheadPruneNothingAreCountedOnceAndMarkTheRows) {
  for (int i = 0; i < 5; ++i) Next(600);  // 50 minutes on both clocks: no prune due yet
  const int64_t newest_before = wall_;
  LogCapture log;
  Next(500 * kDay + 600);  // a prune would be due, and would take every row
  for (int i = 0; i < 3; ++i) Next(600);
  EXPECT_EQ(recorder_->Health().clock_steps, 1u);
  EXPECT_EQ(log.Count("the wall clock stepped by 43200000 s"), 1u) << "once per step";
  EXPECT_TRUE(recorder_->clock_suspect());
  EXPECT_EQ(Marked(), 4) << "the stepped interval and the three after it";
  EXPECT_EQ(Rows("unit_minutes", newest_before), 1);
  EXPECT_EQ(Scalar(path_, "SELECT clock_suspect FROM unit_minutes WHERE minute = " +
                              std::to_string(newest_before / 60)),
            0);
  for (const int64_t ago : {20 * kDay, 5 * kDay, kDay / 2})
    EXPECT_EQ(Rows("unit_hours", kT0 - ago), 1) << ago << " s before: nothing pruned";
  EXPECT_EQ(Rows("unit_minutes", kT0 - 20 * kDay), 1);
  // The store knows the step's window already, should the agent restart now.
  auto steps = keeper_->Current()->ClockSteps();
  ASSERT_TRUE(steps && steps->size() == 1u);
  EXPECT_EQ(steps->front().newest_before_unix_s, newest_before);
  EXPECT_EQ(steps->front().step_s, 500 * kDay);
}

TEST_F(ClockStep, AnHourOfBothClocksTogetherResumesPruningWithinRetentionOfTheNewestRowBefore) {
  for (int i = 0; i < 5; ++i) Next(600);
  const int64_t newest_before = wall_;
  Next(500 * kDay + 600);
  for (int i = 0; i < 5; ++i) Next(600);  // 50 minutes together: still suspect
  EXPECT_TRUE(recorder_->clock_suspect());
  EXPECT_EQ(Rows("unit_hours", kT0 - 20 * kDay), 1);
  Next(600);  // an hour together: pruning resumes with this interval
  EXPECT_FALSE(recorder_->clock_suspect());
  EXPECT_EQ(Marked(), 6) << "the step's hour; the interval that settled it is not marked";
  // Past retention of the newest interval before the step: gone. Within it: kept, hours for
  // 10 days and minutes for 1 (in whole hours), although the clock says 500 days later.
  EXPECT_EQ(Rows("unit_hours", kT0 - 20 * kDay), 0);
  EXPECT_EQ(Rows("unit_minutes", kT0 - 20 * kDay), 0);
  EXPECT_EQ(Rows("unit_hours", kT0 - 5 * kDay), 1);
  EXPECT_EQ(Rows("unit_minutes", kT0 - 5 * kDay), 0);
  EXPECT_EQ(Rows("unit_minutes", kT0 - kDay / 2), 1);
  for (int64_t end = kT0; end <= newest_before; end += 600)
    EXPECT_EQ(Rows("unit_minutes", end), 1) << end;
  Next(600);
  EXPECT_EQ(Marked(), 6) << "no longer marked";
  EXPECT_EQ(recorder_->Health().clock_steps, 1u);
}

// An hour ahead, then an hour back: no step, nothing marked, and pruning as before (due an hour
// after the last one on the wall clock).
TEST_F(ClockStep, AnHourEitherWayIsHandledAsBefore) {
  LogCapture log;
  Next(3600 + 600);  // an hour ahead: a prune is due, as it was before clock steps were watched
  EXPECT_EQ(Rows("unit_hours", kT0 - 20 * kDay), 0) << "pruned at once, as before";
  EXPECT_EQ(Rows("unit_hours", kT0 - 5 * kDay), 1);
  Next(-3600 + 600);  // an hour back
  Next(600);
  EXPECT_EQ(recorder_->Health().clock_steps, 0u);
  EXPECT_FALSE(recorder_->clock_suspect());
  EXPECT_EQ(Marked(), 0);
  EXPECT_EQ(log.Count("the wall clock stepped"), 0u);
  EXPECT_EQ(recorder_->Health().written, 4u);
}

// The guard alone: the threshold either way, a clock that drifts a little each interval does not
// settle, and a second step before settling keeps the first step's newest interval.
TEST(ClockStepGuard, StepsSettlingAndDrift) {
  ClockStepGuard g;
  auto mono = ClockStepGuard::Clock::time_point{} + 1000s;
  int64_t wall = kT0;
  EXPECT_FALSE(g.Observe(wall, mono).step);
  mono += 10s, wall += 10 + kDay;  // a day exactly: not a step
  EXPECT_FALSE(g.Observe(wall, mono).step);
  mono += 10s, wall += 10 - kDay - 1;  // a day and a second back: a step
  const auto back = g.Observe(wall, mono);
  EXPECT_TRUE(back.step && back.suspect);
  EXPECT_EQ(back.step_s, -kDay - 1);
  EXPECT_EQ(g.newest_before_step(), kT0 + 10 + kDay);
  // 30 s fast per 10 minutes: within tolerance each interval, 60 s apart after 20 minutes.
  for (int i = 0; i < 12; ++i) {
    mono += 600s, wall += 630;
    EXPECT_TRUE(g.Observe(wall, mono).suspect) << i;
  }
  mono += 600s, wall += 40 * kDay;  // a second step before settling
  EXPECT_TRUE(g.Observe(wall, mono).step);
  EXPECT_EQ(g.newest_before_step(), kT0 + 10 + kDay) << "the first step's window";
  ClockStepGuard::Verdict v;
  for (int i = 0; i < 6; ++i) {
    mono += 600s, wall += 600;
    v = g.Observe(wall, mono);
  }
  EXPECT_TRUE(v.settled);
  EXPECT_FALSE(v.suspect);
  EXPECT_FALSE(g.suspect());
}

}  // namespace
}  // namespace gpumeter::app
