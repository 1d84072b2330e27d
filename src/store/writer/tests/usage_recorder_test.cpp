// From the pipeline's state to store records: units described (model, MIG fraction, mode), the
// interval's end from the sample, pod labels carried, and a lost GPU still described by its last
// good description; and the recorder writes each interval once.
#include "store/writer/usage_recorder.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>

#include "support/temp_dir.h"

namespace gpumeter::app {
namespace {

using domain::Owner;
using domain::OwnerKind;

node::NodeState State(uint64_t intervals, bool gpu1_lost) {
  node::NodeState s;
  s.node = "node-a";
  s.intervals = intervals;
  auto pass = std::make_shared<gpu::SampleResult>();
  pass->ok = true;
  pass->snapshot.timestamp_us = 1'796'083'230'000'000;  // 2026-12-01T00:00:30Z
  s.last_good = pass;
  node::UnitInfo mig;
  mig.uuid = "MIG-1", mig.gpu_uuid = "GPU-0", mig.model = "NVIDIA H200",
  mig.mig_profile = "3g.71gb";
  mig.mode = domain::SharingMode::kMig, mig.gpu_fraction = 3.0 / 7;
  s.units.push_back(mig);
  node::UnitInfo gpu;
  gpu.uuid = gpu.gpu_uuid = "GPU-1", gpu.model = gpu1_lost ? "" : "NVIDIA H100 80GB HBM3";
  s.units.push_back(gpu);
  for (const char* uuid : {"MIG-1", "GPU-1"}) {
    attribution::UnitLedger l;
    l.uuid = uuid;
    l.mode = uuid[0] == 'M' ? domain::SharingMode::kMig : domain::SharingMode::kExclusive;
    l.seconds = 1;
    l.memory_capacity_byte_seconds = 1e9;
    if (!gpu1_lost || uuid[0] == 'M') l.energy_joules = 300;
    attribution::Row r;
    r.owner = {OwnerKind::kContainer, "ns", "pod-a", "c"};
    r.memory_byte_seconds = 1e9, r.compute_seconds = 1, r.requested_share_seconds = 1;
    l.rows.push_back(r);
    s.last_interval.push_back(l);
  }
  s.pod_labels[{"ns", "pod-a"}] = {{"team", "blue"}};
  return s;
}

// A keeper of the store at `path`, opened.
std::unique_ptr<StoreKeeper> Keeper(const std::string& path) {
  StoreKeeper::Options o;
  o.path = path;
  auto k = std::make_unique<StoreKeeper>(o);
  const auto e = k->Ensure(StoreKeeper::Clock::now());
  EXPECT_TRUE(e && *e == StoreKeeper::Event::kOpen) << path;
  return k;
}

node::NodeState At(uint64_t n) {
  auto s = State(n, false);
  auto pass = std::make_shared<gpu::SampleResult>(*s.last_good);
  pass->snapshot.timestamp_us = 1'796'083'230'000'000 + n * 1'000'000;
  s.last_good = pass;
  return s;
}

TEST(UsageRecorder, DescribesUnitsAndKeepsALostGpusModel) {
  const auto rec = ToIntervalRecord(State(1, false));
  EXPECT_EQ(rec.end_unix_s, 1'796'083'230);
  ASSERT_EQ(rec.units.size(), 2u);
  EXPECT_EQ(rec.units[0].unit, (store::UnitKey{"node-a", "MIG-1", "GPU-0", "NVIDIA H200", "3g.71gb",
                                               domain::SharingMode::kMig, 3.0 / 7}));
  EXPECT_DOUBLE_EQ(rec.units[0].energy_joules, 300);
  EXPECT_EQ(rec.pod_labels.at({"ns", "pod-a"}).at("team"), "blue");

  testing::TempDir dir("gpumeter-recorder");
  auto keeper = Keeper((dir.path() / "usage.db").string());
  auto st = keeper->Current();
  ASSERT_TRUE(st);
  UsageRecorder recorder(*keeper);
  recorder.Record(State(1, false));
  recorder.Record(State(1, false));  // the same interval again: not written twice
  recorder.Record(State(2, true));   // GPU-1 lost: its sample has no name
  EXPECT_EQ(recorder.written(), 2u);
  auto usage = st->Usage(1'796'083'200, 1'796'083'260);
  ASSERT_TRUE(usage) << usage.error().message;
  for (const auto& u : *usage) {
    EXPECT_FALSE(u.unit.model.empty())
        << u.unit.uuid << ": a lost GPU keeps its model (and its price)";
    EXPECT_DOUBLE_EQ(u.seconds, 2.0) << u.unit.uuid;
  }
  const auto gpu1 = std::find_if(usage->begin(), usage->end(),
                                 [](const auto& u) { return u.unit.uuid == "GPU-1"; });
  ASSERT_NE(gpu1, usage->end());
  EXPECT_DOUBLE_EQ(gpu1->energy_unknown_seconds, 1.0);
}

// Another process holds the store's write lock for a while, then lets go: every interval of the
// outage is written once the store accepts again, in order, and the wait is exported.
TEST(UsageRecorder, IntervalsTheStoreRefusesAreKeptAndWrittenLater) {
  testing::TempDir dir("gpumeter-recorder");
  const auto path = (dir.path() / "usage.db").string();
  auto keeper = Keeper(path);
  auto st = keeper->Current();
  ASSERT_TRUE(st);
  UsageRecorder recorder(*keeper, /*max_pending_s=*/3600);
  auto at = At;
  recorder.Record(at(1));
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (uint64_t n = 2; n <= 8; ++n) recorder.Record(at(n));
  auto h = recorder.Health();
  EXPECT_EQ(h.written, 1u);
  EXPECT_EQ(h.pending, 7u);
  EXPECT_EQ(h.write_failures, 7u) << "one attempt per interval, stopping at the first refusal";
  EXPECT_DOUBLE_EQ(h.oldest_pending_seconds, 6.0);
  EXPECT_NE(h.last_error.find("locked"), std::string::npos) << h.last_error;
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  recorder.Record(at(9));
  h = recorder.Health();
  EXPECT_EQ(h.written, 9u);
  EXPECT_EQ(h.pending, 0u);
  EXPECT_DOUBLE_EQ(h.oldest_pending_seconds, 0.0);
  auto usage = st->Usage(1'796'083'200, 1'796'083'300);
  ASSERT_TRUE(usage) << usage.error().message;
  for (const auto& u : *usage)
    EXPECT_DOUBLE_EQ(u.seconds, 9.0) << u.unit.uuid << ": no interval lost";
}

TEST(UsageRecorder, PendingUsageIsBoundedAndWhatIsDroppedIsCounted) {
  testing::TempDir dir("gpumeter-recorder");
  const auto path = (dir.path() / "usage.db").string();
  auto keeper = Keeper(path);
  UsageRecorder recorder(*keeper, /*max_pending_s=*/3);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (uint64_t n = 1; n <= 10; ++n) {
    auto s = State(n, false);
    auto pass = std::make_shared<gpu::SampleResult>(*s.last_good);
    pass->snapshot.timestamp_us += n * 1'000'000;
    s.last_good = pass;
    recorder.Record(s);
  }
  const auto h = recorder.Health();
  EXPECT_EQ(h.pending, 4u) << "the intervals ending within 3 s of the newest";
  EXPECT_EQ(h.dropped, 6u);
  EXPECT_DOUBLE_EQ(h.oldest_pending_seconds, 3.0);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
}

double SecondsIn(const std::string& path, const std::string& uuid) {
  auto st = store::Store::OpenReadOnly(path);
  EXPECT_TRUE(st) << path;
  if (!st) return -1;
  auto usage = (*st)->Usage(1'796'083'200, 1'796'083'400);
  EXPECT_TRUE(usage) << usage.error().message;
  double s = 0;
  for (const auto& u : *usage)
    if (u.unit.uuid == uuid) s += u.seconds;
  return s;
}

// rm of the store (and -wal, -shm) while the agent writes: noticed at the next check (5 s),
// logged, the file opened again at its path, and the intervals since the last check written
// again, so the new file holds every interval (once, all usage was gone after SIGTERM).
TEST(UsageRecorder, ADeletedStoreIsOpenedAgainAndLosesNothing) {
  testing::TempDir dir("gpumeter-recorder");
  const auto path = (dir.path() / "usage.db").string();
  auto now = StoreKeeper::Clock::now();
  StoreKeeper::Options o;
  o.path = path;
  StoreKeeper keeper(o);
  ASSERT_TRUE(keeper.Ensure(now));
  UsageRecorder recorder(keeper, 3600, [&now] { return now; });
  for (uint64_t n = 1; n <= 4; ++n, now += std::chrono::seconds(1)) recorder.Record(At(n));
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  for (uint64_t n = 5; n <= 12; ++n, now += std::chrono::seconds(1)) recorder.Record(At(n));
  EXPECT_TRUE(std::filesystem::exists(path)) << "opened again at its path";
  EXPECT_TRUE(keeper.Status().up);
  EXPECT_GE(keeper.Status().failures, 1u) << "the deletion counts as a failure of the source";
  // Intervals 1-5 went to the deleted file; they were written in the last check period, so they
  // are written again: the new file holds all 12.
  EXPECT_DOUBLE_EQ(SecondsIn(path, "GPU-1"), 12.0);
  EXPECT_EQ(recorder.Health().pending, 0u);
}

// A store that cannot be opened at start (its directory does not exist yet) is retried with
// backoff; usage waits in memory and is written once it opens (a failed open was once final).
TEST(UsageRecorder, AStoreThatCannotBeOpenedAtStartIsRetried) {
  testing::TempDir dir("gpumeter-recorder");
  const auto path = (dir.path() / "later" / "usage.db").string();
  auto now = StoreKeeper::Clock::now();
  StoreKeeper::Options o;
  o.path = path;
  StoreKeeper keeper(o);
  auto first = keeper.Ensure(now);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(*first, StoreKeeper::Event::kNotOpen);
  const auto down = keeper.Status();
  EXPECT_EQ(down.name, "store");
  EXPECT_FALSE(down.up);
  EXPECT_NE(down.last_error.find("usage.db"), std::string::npos) << down.last_error;
  UsageRecorder recorder(keeper, 3600, [&now] { return now; });
  for (uint64_t n = 1; n <= 3; ++n, now += std::chrono::milliseconds(300)) recorder.Record(At(n));
  EXPECT_EQ(recorder.Health().pending, 3u);
  EXPECT_EQ(recorder.Health().status.name, "store");
  EXPECT_FALSE(recorder.Health().status.up);
  std::filesystem::create_directory(dir.path() / "later");
  now += std::chrono::seconds(2);  // past the first backoff (1 s)
  recorder.Record(At(4));
  EXPECT_TRUE(keeper.Status().up);
  EXPECT_EQ(recorder.Health().pending, 0u);
  EXPECT_DOUBLE_EQ(SecondsIn(path, "GPU-1"), 4.0);
}

// SIGTERM while another process holds the store's lock: the stop waits a bounded time, then what
// could not be written is logged and counted as dropped, not lost in silence.
TEST(UsageRecorder, AFlushAtStopIsBoundedAndCountsWhatItCouldNotWrite) {
  testing::TempDir dir("gpumeter-recorder");
  const auto path = (dir.path() / "usage.db").string();
  auto keeper = Keeper(path);
  UsageRecorder recorder(*keeper);
  recorder.Record(At(1));
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (uint64_t n = 2; n <= 6; ++n) recorder.Record(At(n));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(recorder.Flush(std::chrono::milliseconds(600)), 5u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_EQ(recorder.Health().dropped, 5u);
  EXPECT_EQ(recorder.Health().lost_at_stop, 5u);
  EXPECT_EQ(recorder.Health().pending, 0u);
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  // Without the lock, a flush writes what is pending.
  recorder.Record(At(7));
  EXPECT_EQ(recorder.Flush(std::chrono::milliseconds(600)), 0u);
  EXPECT_DOUBLE_EQ(SecondsIn(path, "GPU-1"), 2.0);
}

}  // namespace
}  // namespace gpumeter::app
