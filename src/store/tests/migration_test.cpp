// Stores written by earlier versions (tests/fixtures/store/schema-vN.sql, dumps of what that
// version wrote) open and migrate without losing a row, and read-only readers take them as they
// are.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

#include "store/store.h"
#include "support/temp_dir.h"

namespace gpumeter::store {
namespace {

// Builds a store file from a fixture's SQL.
void Restore(const std::string& fixture, const std::string& path) {
  std::ifstream in(std::string(GPUMETER_TEST_SOURCE_DIR) + "/tests/fixtures/store/" + fixture);
  ASSERT_TRUE(in) << fixture;
  std::stringstream sql;
  sql << in.rdbuf();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

// One number from the file, read with SQLite alone (not through the store).
double Scalar(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sql;
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW) << sql;
  const double v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

constexpr int64_t kLatest = 7;  // the schema version this build writes

int64_t UserVersion(const std::string& path) {
  return static_cast<int64_t>(Scalar(path, "PRAGMA user_version"));
}

struct Totals {
  double memory = 0, compute = 0, energy = 0, requested = 0, unknown = 0, bound = 0, seconds = 0;
  double traffic = 0, traffic_unknown = 0, traffic_bound = 0;  // memory_busy_* seconds
  double container_traffic = 0;
  double energy_bound = 0;
  size_t owners = 0;
};

Totals Sum(const Store& s) {
  Totals t;
  auto span = s.Span();
  EXPECT_TRUE(span && *span);
  if (!span || !*span) return t;
  auto usage = s.Usage((*span)->first, (*span)->second + 60);
  EXPECT_TRUE(usage) << (usage ? "" : usage.error().message);
  if (!usage) return t;
  for (const auto& u : *usage) {
    t.seconds += u.seconds;
    for (const auto& o : u.owners) {
      t.memory += o.memory_byte_seconds, t.compute += o.compute_seconds;
      t.energy += o.energy_joules, t.requested += o.requested_share_seconds;
      t.unknown += o.compute_unknown_seconds;
      t.bound += o.compute_bound_seconds;
      t.traffic += o.memory_busy_seconds;
      if (o.owner.kind == domain::OwnerKind::kContainer)
        t.container_traffic += o.memory_busy_seconds;
      t.traffic_unknown += o.memory_busy_unknown_seconds;
      t.traffic_bound += o.memory_busy_bound_seconds;
      t.energy_bound += o.energy_bound_joules;
      ++t.owners;
    }
  }
  return t;
}

// What a read-only reader (report, rightsize) sums from the store at `path`.
Totals ReadOnlySum(const std::string& path) {
  auto ro = Store::OpenReadOnly(path);
  EXPECT_TRUE(ro) << ro.error().message;
  return ro ? Sum(**ro) : Totals{};
}

void ExpectSame(const Totals& a, const Totals& b) {
  EXPECT_DOUBLE_EQ(a.memory, b.memory);
  EXPECT_DOUBLE_EQ(a.compute, b.compute);
  EXPECT_DOUBLE_EQ(a.energy, b.energy);
  EXPECT_DOUBLE_EQ(a.requested, b.requested);
  EXPECT_DOUBLE_EQ(a.unknown, b.unknown);
  EXPECT_DOUBLE_EQ(a.bound, b.bound);
  EXPECT_DOUBLE_EQ(a.seconds, b.seconds);
  EXPECT_DOUBLE_EQ(a.traffic, b.traffic);
  EXPECT_DOUBLE_EQ(a.traffic_unknown, b.traffic_unknown);
  EXPECT_DOUBLE_EQ(a.traffic_bound, b.traffic_bound);
  EXPECT_DOUBLE_EQ(a.energy_bound, b.energy_bound);
  EXPECT_EQ(a.owners, b.owners);
}

TEST(StoreMigration, Version1OpensReadOnlyAsItIsAndMigratesWithoutLoss) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  Restore("schema-v1.sql", path);
  ASSERT_EQ(UserVersion(path), 1);

  // A reader (report, rightsize) of a newer version reads an older agent's store unchanged.
  const Totals before = ReadOnlySum(path);
  EXPECT_EQ(UserVersion(path), 1);
  // What the file's minute rows hold (hours are their rollups), summed by SQLite itself.
  EXPECT_NEAR(before.compute, Scalar(path, "SELECT SUM(compute_seconds) FROM usage_minutes"),
              1e-9 * before.compute);
  EXPECT_NEAR(before.memory, Scalar(path, "SELECT SUM(memory_byte_seconds) FROM usage_minutes"),
              1e-9 * before.memory);
  // Its (unit, owner) pairs, and an unattributed owner on each unit: it holds the memory traffic
  // version 1 did not record (unknown to the containers, never 0).
  EXPECT_EQ(static_cast<double>(before.owners),
            Scalar(path,
                   "SELECT COUNT(*) FROM (SELECT DISTINCT unit_id, owner_id FROM usage_minutes "
                   "UNION SELECT DISTINCT unit_id, (SELECT id FROM owners WHERE kind = "
                   "'unattributed') FROM unit_minutes)"));
  EXPECT_GT(before.compute, 0.0);
  EXPECT_EQ(before.unknown, 0.0);  // version 1 recorded none

  // The agent opens it for writing: migrated, nothing lost, and it records unknown compute.
  auto rw = Store::Open(path);
  ASSERT_TRUE(rw) << rw.error().message;
  EXPECT_EQ(UserVersion(path), kLatest);
  ExpectSame(Sum(**rw), before);

  auto span = (*rw)->Span();
  ASSERT_TRUE(span && *span);
  IntervalRecord rec;
  rec.end_unix_s = (*span)->second + 3 * 3600;  // a later hour: the fixture's last one rolls up
  UnitRecord u;
  u.unit = {"gpu-node-a100",           "MIG-x", "GPU-x", "NVIDIA A100-SXM4-80GB", "1g.10gb",
            domain::SharingMode::kMig, 1.0 / 7};
  u.seconds = 10;
  u.owners.push_back({{domain::OwnerKind::kContainer, "ml", "blind-0", "c"}, 0, 0, 0, 10, 10});
  rec.units.push_back(u);
  ASSERT_TRUE((*rw)->Write(rec));
  const Totals after = Sum(**rw);
  EXPECT_DOUBLE_EQ(after.unknown, 10.0);
  EXPECT_DOUBLE_EQ(after.compute, before.compute);
  EXPECT_DOUBLE_EQ(after.memory, before.memory);
  rw->reset();

  // Read-only again, now at the latest version: the unknown seconds come back.
  EXPECT_DOUBLE_EQ(ReadOnlySum(path).unknown, 10.0);
}

TEST(StoreMigration, Version2KeepsItsUnknownComputeAndMigratesToBounds) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  Restore("schema-v2.sql", path);
  ASSERT_EQ(UserVersion(path), 2);

  const Totals before = ReadOnlySum(path);
  EXPECT_EQ(UserVersion(path), 2);
  EXPECT_NEAR(before.unknown,
              Scalar(path, "SELECT SUM(compute_unknown_seconds) FROM usage_minutes"),
              1e-9 * before.unknown);
  EXPECT_GT(before.unknown, 0.0);  // the fixture's blind A100 recorded some
  EXPECT_GT(before.compute, 0.0);
  EXPECT_EQ(before.bound, 0.0);  // version 2 recorded no bounds

  auto rw = Store::Open(path);
  ASSERT_TRUE(rw) << rw.error().message;
  EXPECT_EQ(UserVersion(path), kLatest);
  ExpectSame(Sum(**rw), before);

  auto span = (*rw)->Span();
  ASSERT_TRUE(span && *span);
  IntervalRecord rec;
  rec.end_unix_s = (*span)->second + 3 * 3600;
  UnitRecord u;
  u.unit = {"gpu-node-a100",           "MIG-y", "GPU-x", "NVIDIA A100-SXM4-80GB", "3g.40gb",
            domain::SharingMode::kMig, 3.0 / 7};
  u.seconds = 10;
  u.owners.push_back(
      {{domain::OwnerKind::kContainer, "research", "nb-0", "c"}, 0, 4, 0, 10, 0, 3.5});
  rec.units.push_back(u);
  ASSERT_TRUE((*rw)->Write(rec));
  const Totals after = Sum(**rw);
  EXPECT_DOUBLE_EQ(after.bound, 3.5);
  EXPECT_DOUBLE_EQ(after.unknown, before.unknown);
  EXPECT_DOUBLE_EQ(after.compute, before.compute + 4);
  rw->reset();

  EXPECT_DOUBLE_EQ(ReadOnlySum(path).bound, 3.5);
}

TEST(StoreMigration, Version3KeepsItsBoundsAndGainsTheNodesTable) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  Restore("schema-v3.sql", path);
  ASSERT_EQ(UserVersion(path), 3);
  const Totals before = ReadOnlySum(path);
  EXPECT_NEAR(before.bound, Scalar(path, "SELECT SUM(compute_bound_seconds) FROM usage_minutes"),
              1e-9 * before.bound);
  EXPECT_GT(before.bound, 0.0);  // the fixture's shared notebooks were estimated
  {
    auto ro = Store::OpenReadOnly(path);
    ASSERT_TRUE(ro);
    auto nodes = (*ro)->Nodes();
    ASSERT_TRUE(nodes) << nodes.error().message;
    EXPECT_TRUE(nodes->empty());  // version 3 recorded none; read as none, not an error
  }
  EXPECT_EQ(UserVersion(path), 3);

  auto rw = Store::Open(path);
  ASSERT_TRUE(rw) << rw.error().message;
  EXPECT_EQ(UserVersion(path), kLatest);
  ExpectSame(Sum(**rw), before);
  auto span = (*rw)->Span();
  ASSERT_TRUE(span && *span);
  IntervalRecord rec;
  rec.end_unix_s = (*span)->second + 60;
  NodeRecord n;
  n.name = "gpu-node-h100";
  n.provider_id = "aws:///us-east-1a/i-0123456789abcdef0";
  n.instance_type = "p5.48xlarge";
  n.gpu_count = 8;
  rec.node = n;
  ASSERT_TRUE((*rw)->Write(rec));
  rw->reset();
  auto ro = Store::OpenReadOnly(path);
  ASSERT_TRUE(ro);
  auto nodes = (*ro)->Nodes();
  ASSERT_TRUE(nodes && nodes->size() == 1u);
  EXPECT_EQ(nodes->front().provider_id, n.provider_id);
  EXPECT_EQ(nodes->front().gpu_count, 8);
  ExpectSame(Sum(**ro), before);
}

TEST(StoreMigration, HoursRolledUpAfterTheMigrationKeepUnknownComputeAndBounds) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  auto s = Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  const int64_t hour = 1'796'500'800;  // 2026-12-05T20:00:00Z
  for (int m = 0; m < 3; ++m) {
    IntervalRecord rec;
    rec.end_unix_s = hour + 60 * m + 30;
    UnitRecord u;
    u.unit = {"n", "GPU-1", "GPU-1", "NVIDIA A100-SXM4-80GB", "", domain::SharingMode::kExclusive,
              1.0};
    u.seconds = 60;
    u.owners.push_back(
        {{domain::OwnerKind::kContainer, "ml", "p", "c"}, 0, 12, 0, 60, 24, 5, 7, 2, 1.5, 40});
    rec.units.push_back(u);
    ASSERT_TRUE((*s)->Write(rec));
  }
  IntervalRecord later;  // the next hour: the first one's minutes roll up
  later.end_unix_s = hour + 3600 + 5;
  ASSERT_TRUE((*s)->Write(later));
  auto hourly = (*s)->HourlyUsage(hour, hour + 3600);
  ASSERT_TRUE(hourly) << hourly.error().message;
  ASSERT_EQ(hourly->size(), 1u);
  const auto& owners = hourly->begin()->second.at(0).owners;
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_DOUBLE_EQ(owners[0].compute_seconds, 36.0);
  EXPECT_DOUBLE_EQ(owners[0].compute_unknown_seconds, 72.0);
  EXPECT_DOUBLE_EQ(owners[0].compute_bound_seconds, 15.0);
  EXPECT_DOUBLE_EQ(owners[0].memory_busy_seconds, 21.0);
  EXPECT_DOUBLE_EQ(owners[0].memory_busy_unknown_seconds, 6.0);
  EXPECT_DOUBLE_EQ(owners[0].memory_busy_bound_seconds, 4.5);
  EXPECT_DOUBLE_EQ(owners[0].energy_bound_joules, 120.0);
}

// Version 4 recorded no memory traffic: its rows read as unknown over their unit's time (never as
// 0 traffic), for every owner but idle and unattributed, before and after the migration.
TEST(StoreMigration, Version4ReadsItsMemoryTrafficAsUnknownAndKeepsItsNodes) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  Restore("schema-v4.sql", path);
  ASSERT_EQ(UserVersion(path), 4);
  const Totals before = ReadOnlySum(path);
  // Worked out with SQLite alone: each owner row's unit seconds in its minute.
  const double unit_time = Scalar(
      path,
      "SELECT SUM(u.seconds) FROM usage_minutes m JOIN unit_minutes u ON u.minute = m.minute AND "
      "u.unit_id = m.unit_id JOIN owners o ON o.id = m.owner_id WHERE o.kind NOT IN ('idle', "
      "'unattributed')");
  EXPECT_GT(unit_time, 0.0);
  EXPECT_NEAR(before.traffic_unknown, unit_time, 1e-9 * unit_time);
  // Unattributed holds each unit's time, as a unit with no signal is booked: a unit's traffic
  // adds up to its seconds, none of it a container's.
  EXPECT_NEAR(before.traffic, before.seconds, 1e-9 * before.seconds);
  EXPECT_EQ(before.container_traffic, 0.0);
  EXPECT_EQ(before.traffic_bound, 0.0);
  EXPECT_GT(before.bound, 0.0);  // what version 4 did record is kept

  auto rw = Store::Open(path);
  ASSERT_TRUE(rw) << rw.error().message;
  EXPECT_EQ(UserVersion(path), kLatest);
  ExpectSame(Sum(**rw), before);
  auto nodes = (*rw)->Nodes();
  ASSERT_TRUE(nodes && nodes->size() == 1u);
  EXPECT_EQ(nodes->front().provider_id, "aws:///us-east-1a/i-0c1d2e3f4a5b60719");
  EXPECT_EQ(nodes->front().capacity_type, "spot");

  auto span = (*rw)->Span();
  ASSERT_TRUE(span && *span);
  IntervalRecord rec;
  rec.end_unix_s = (*span)->second + 2 * 3600;
  UnitRecord u;
  u.unit = {"gpu-node-h100-mig",       "MIG-z", "GPU-z", "NVIDIA H100 80GB HBM3", "3g.40gb",
            domain::SharingMode::kMig, 3.0 / 7};
  u.seconds = 10;
  u.owners.push_back(
      {{domain::OwnerKind::kContainer, "ml", "t-0", "c"}, 0, 4, 0, 10, 0, 0, 2.5, 0, 0.25});
  rec.units.push_back(u);
  ASSERT_TRUE((*rw)->Write(rec));
  const Totals after = Sum(**rw);
  EXPECT_DOUBLE_EQ(after.container_traffic, 2.5);
  EXPECT_NEAR(after.traffic, before.traffic + 2.5, 1e-9 * after.traffic);
  EXPECT_DOUBLE_EQ(after.traffic_bound, 0.25);
  EXPECT_DOUBLE_EQ(after.traffic_unknown, before.traffic_unknown);
  rw->reset();
  EXPECT_DOUBLE_EQ(ReadOnlySum(path).container_traffic, 2.5);
}

// Version 5 recorded no energy bounds: its energy reads as exact (what it claimed), before and
// after the migration, and nothing else it recorded changes; a row written after it keeps its ±.
TEST(StoreMigration, Version5ReadsItsEnergyAsExactAndKeepsEverythingElse) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  Restore("schema-v5.sql", path);
  ASSERT_EQ(UserVersion(path), 5);
  const Totals before = ReadOnlySum(path);
  EXPECT_GT(before.energy, 0.0);
  EXPECT_GT(before.bound, 0.0);    // the notebooks' compute bounds it did record
  EXPECT_GT(before.traffic, 0.0);  // and memory traffic
  EXPECT_EQ(before.energy_bound, 0.0);
  // Worked out with SQLite alone, so the store's own reading is not checked against itself.
  EXPECT_NEAR(before.energy, Scalar(path, "SELECT SUM(energy_joules) FROM usage_minutes"),
              1e-9 * before.energy);

  auto rw = Store::Open(path);
  ASSERT_TRUE(rw) << rw.error().message;
  EXPECT_EQ(UserVersion(path), kLatest);
  ExpectSame(Sum(**rw), before);
  auto span = (*rw)->Span();
  ASSERT_TRUE(span && *span);
  IntervalRecord rec;
  rec.end_unix_s = (*span)->second + 2 * 3600;
  UnitRecord u;
  u.unit = {"gpu-node-a30", "MIG-y", "GPU-y", "NVIDIA A30", "1g.6gb", domain::SharingMode::kMig,
            1.0 / 4};
  u.seconds = 30;
  u.energy_joules = 900;
  u.owners.push_back({{domain::OwnerKind::kContainer, "batch", "etl-2", "run"},
                      0,
                      12,
                      700,
                      30,
                      0,
                      0,
                      0,
                      0,
                      0,
                      150});
  u.owners.push_back({{domain::OwnerKind::kIdle, "", "", ""}, 0, 18, 200, 0, 0, 0, 0, 0, 0, 150});
  rec.units.push_back(u);
  ASSERT_TRUE((*rw)->Write(rec));
  const Totals after = Sum(**rw);
  EXPECT_DOUBLE_EQ(after.energy_bound, 300);
  EXPECT_NEAR(after.energy, before.energy + 900, 1e-9 * after.energy);
  rw->reset();
  EXPECT_DOUBLE_EQ(ReadOnlySum(path).energy_bound, 300);
  EXPECT_DOUBLE_EQ(Scalar(path, "SELECT SUM(energy_bound_joules) FROM usage_minutes"), 300);
}

// Version 6 looked for no clock step: its rows read as unmarked after the migration, nothing it
// recorded changes, and a later prune keeps to a clock step recorded after it.
TEST(StoreMigration, Version6GainsClockStepsWithItsRowsUnmarked) {
  testing::TempDir dir("gpumeter-migration");
  const auto path = (dir.path() / "usage.db").string();
  Restore("schema-v6.sql", path);
  ASSERT_EQ(UserVersion(path), 6);
  const Totals before = ReadOnlySum(path);
  EXPECT_GT(before.energy_bound, 0.0);  // the DCGM-fed instances' energy bounds it did record
  EXPECT_GT(before.bound, 0.0);
  {
    auto ro = Store::OpenReadOnly(path);
    ASSERT_TRUE(ro) << ro.error().message;
    auto steps = (*ro)->ClockSteps();
    ASSERT_TRUE(steps) << steps.error().message;
    EXPECT_TRUE(steps->empty()) << "a version 6 reader reads no clock step";
  }

  auto rw = Store::Open(path);
  ASSERT_TRUE(rw) << rw.error().message;
  EXPECT_EQ(UserVersion(path), kLatest);
  ExpectSame(Sum(**rw), before);
  for (const char* table : {"unit_minutes", "usage_minutes", "unit_hours", "usage_hours"})
    EXPECT_EQ(
        Scalar(
            path,
            (std::string("SELECT COUNT(*) FROM ") + table + " WHERE clock_suspect <> 0").c_str()),
        0)
        << table;
  auto span = (*rw)->Span();
  ASSERT_TRUE(span && *span);
  const int64_t last = (*span)->second - 60;
  ASSERT_TRUE((*rw)->RecordClockStep({last, 500 * 86400, last + 500 * 86400}));
  ASSERT_TRUE((*rw)->Prune(last + 500 * 86400));
  ExpectSame(Sum(**rw), before);  // all of it within retention of its last interval
}

}  // namespace
}  // namespace gpumeter::store
