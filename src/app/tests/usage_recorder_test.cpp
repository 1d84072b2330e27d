// From the pipeline's state to store records: units described (model, MIG fraction, mode), the
// interval's end from the sample, pod labels carried, and a lost GPU still described by its last
// good description; and the recorder writes each interval once.
#include "app/usage_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>

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

TEST(UsageRecorder, DescribesUnitsAndKeepsALostGpusModel) {
  const auto rec = ToIntervalRecord(State(1, false));
  EXPECT_EQ(rec.end_unix_s, 1'796'083'230);
  ASSERT_EQ(rec.units.size(), 2u);
  EXPECT_EQ(rec.units[0].unit,
            (store::UnitKey{"node-a", "MIG-1", "GPU-0", "NVIDIA H200", "3g.71gb", "mig", 3.0 / 7}));
  EXPECT_DOUBLE_EQ(rec.units[0].energy_joules, 300);
  EXPECT_EQ(rec.pod_labels.at({"ns", "pod-a"}).at("team"), "blue");

  testing::TempDir dir("gpumeter-recorder");
  auto st = store::Store::Open((dir.path() / "usage.db").string());
  ASSERT_TRUE(st);
  UsageRecorder recorder(**st);
  recorder.Record(State(1, false));
  recorder.Record(State(1, false));  // the same interval again: not written twice
  recorder.Record(State(2, true));   // GPU-1 lost: its sample has no name
  EXPECT_EQ(recorder.written(), 2u);
  auto usage = (*st)->Usage(1'796'083'200, 1'796'083'260);
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

}  // namespace
}  // namespace gpumeter::app
