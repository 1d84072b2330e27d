// The aligner: the exporter's 30 s means, seen late, tell the exact mean of any past interval
// once the collections covering it are seen, and "pending" before; stale or missing series are
// unknown and never filled in.
#include "sources/dcgm/dcgm_aligner.h"

#include <gtest/gtest.h>

namespace gpumeter::dcgm {
namespace {

const DcgmKey kKey{"GPU-a", 3};

// Truth: busy 0.8 on [0, 60), 0.2 on [60, 120). The exporter collects every 30 s and the agent
// sees each collection when it is made; its first read (at 0) starts the history.
DcgmAligner Collected(int until) {
  DcgmAligner a;
  for (int tc = 0; tc <= until; tc += 30) {
    DcgmSeries s{tc == 0 ? 0.0 : (tc <= 60 ? 0.8 : 0.2), static_cast<double>(tc), false};
    a.Record(kKey, &s, tc);
  }
  return a;
}

TEST(DcgmAligner, AnIntervalGetsTheMeanOfTheCollectionsThatCoverIt) {
  const auto a = Collected(90);
  EXPECT_DOUBLE_EQ(*a.Mean(kKey, 10, 20).mean, 0.8);
  EXPECT_DOUBLE_EQ(*a.Mean(kKey, 55, 65).mean, 0.5);  // half in each collection
  EXPECT_DOUBLE_EQ(*a.Mean(kKey, 0, 90).mean, (0.8 * 60 + 0.2 * 30) / 90);
  EXPECT_FALSE(a.Mean(kKey, 0, 90).pending);
}

TEST(DcgmAligner, AnIntervalPastTheLastCollectionIsPendingNotExtrapolated) {
  const auto a = Collected(90);
  const auto c = a.Mean(kKey, 85, 95);
  EXPECT_TRUE(c.pending);
  EXPECT_FALSE(c.mean);
  ASSERT_TRUE(c.covered_until_s) << "how far it could be told now: to the last collection";
  EXPECT_DOUBLE_EQ(*c.covered_until_s, 90);
  EXPECT_FALSE(a.Mean(kKey, 80, 90).covered_until_s) << "told: nothing to say";
  const auto b = Collected(120);
  EXPECT_DOUBLE_EQ(*b.Mean(kKey, 85, 95).mean, 0.2);  // the collection at 120 tells it
}

TEST(DcgmAligner, BeforeTheHistoryOrOfAnUnknownUnitIsUnknown) {
  const auto a = Collected(60);
  const auto before = a.Mean(kKey, -5, 5);
  EXPECT_FALSE(before.pending);
  EXPECT_FALSE(before.mean);
  EXPECT_FALSE(a.Mean({"GPU-b", std::nullopt}, 10, 20).mean);
  EXPECT_FALSE(a.Mean(kKey, 20, 20).mean);  // empty
}

TEST(DcgmAligner, StaleOrMissingForgetsTheHistoryAndTheGapStaysUnknown) {
  auto a = Collected(60);
  DcgmSeries stale{0.5, 60, true};
  a.Record(kKey, &stale, 150);
  EXPECT_FALSE(a.Mean(kKey, 10, 20).mean);
  EXPECT_FALSE(a.Mean(kKey, 10, 20).pending);
  DcgmSeries back{0.4, 160, false};
  a.Record(kKey, &back, 160);  // starts afresh at 160
  back = {0.6, 190, false};
  a.Record(kKey, &back, 190);
  EXPECT_FALSE(a.Mean(kKey, 150, 170).mean);  // reaches into the gap
  EXPECT_DOUBLE_EQ(*a.Mean(kKey, 165, 185).mean, 0.6);
  a.Record(kKey, nullptr, 200);  // one failed read: the history stays
  EXPECT_DOUBLE_EQ(*a.Mean(kKey, 165, 185).mean, 0.6);
  a.Record(kKey, nullptr, 291);  // missing for longer than a stale series' age: forgotten
  EXPECT_FALSE(a.Mean(kKey, 165, 185).mean);
}

TEST(DcgmAligner, ASeriesSeenAgainWithoutANewCollectionAddsNothing) {
  auto a = Collected(30);
  DcgmSeries same{0.9, 30, false};  // the same collection read again (another value: ignored)
  a.Record(kKey, &same, 45);
  EXPECT_DOUBLE_EQ(*a.Mean(kKey, 0, 30).mean, 0.8);
  EXPECT_TRUE(a.Mean(kKey, 25, 35).pending);
}

TEST(DcgmAligner, HoldsGpusWhoseActivityComesFromDcgmOnly) {
  DcgmReading r;
  r.series[{"GPU-m", 1}] = {0.25, 0, false};
  r.series[{"GPU-w", std::nullopt}] = {0.75, 0, false};
  r.series[{"GPU-u", std::nullopt}] = {0.75, 0, false};
  gpu::GpuSnapshot snap;
  gpu::DeviceSample mig;
  mig.uuid = "GPU-m";
  mig.mig_enabled = true;
  mig.mig_instances.resize(2);
  mig.mig_instances[0].gpu_instance_id = 1;
  mig.mig_instances[1].gpu_instance_id = 2;  // no series: unknown, but instance 1 is held
  gpu::DeviceSample whole;
  whole.uuid = "GPU-w";
  gpu::DeviceSample with_util;  // NVML's utilization wins: not held
  with_util.uuid = "GPU-u";
  with_util.utilization_gpu_percent = 40;
  gpu::DeviceSample none;  // no series at all
  none.uuid = "GPU-n";
  snap.devices = {mig, whole, with_util, none};
  DcgmAligner a;
  a.Apply(r, 10, snap);
  EXPECT_TRUE(snap.devices[0].dcgm_held);
  EXPECT_TRUE(snap.devices[1].dcgm_held);
  EXPECT_FALSE(snap.devices[2].dcgm_held);
  EXPECT_FALSE(snap.devices[3].dcgm_held);
  r.series[{"GPU-m", 1}] = {0.5, 20, false};
  a.Apply(r, 21, snap);
  EXPECT_DOUBLE_EQ(*a.Mean({"GPU-m", 1}, 12, 18).mean, 0.5);
  EXPECT_FALSE(a.Mean({"GPU-m", 2}, 12, 18).mean);
  EXPECT_TRUE(a.Mean({"GPU-w", std::nullopt}, 12, 18).pending);  // its series did not change
}

}  // namespace
}  // namespace gpumeter::dcgm

namespace gpumeter::dcgm {
namespace {

TEST(DcgmAligner, ANewCollectionGivesTheIdlePowerFitAWindow) {
  gpu::DeviceSample d;
  d.uuid = "GPU-m";
  d.mig_enabled = true;
  d.mig_total_slices = 7;
  d.mig_instances.resize(2);
  d.mig_instances[0].gpu_instance_id = 1;
  d.mig_instances[0].slices = 3;
  d.mig_instances[1].gpu_instance_id = 2;
  d.mig_instances[1].slices = 4;
  DcgmAligner a;
  auto pass = [&](double now, double seen, double v1, double v2, double energy) {
    DcgmReading r;
    r.series[{"GPU-m", 1}] = {v1, seen, false};
    r.series[{"GPU-m", 2}] = {v2, seen, false};
    gpu::GpuSnapshot snap;
    snap.devices = {d};
    snap.devices[0].energy_joules = energy;
    a.Apply(r, now, snap);
    return snap.devices[0].dcgm_window;
  };
  EXPECT_FALSE(pass(30, 30, 0.5, 0.5, 1000));  // the first collection: no window yet
  EXPECT_FALSE(pass(31, 30, 0.5, 0.5, 1100));  // the same collection
  const auto w = pass(60, 60, 1.0, 0.25, 7000);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->activity, (3 * 1.0 + 4 * 0.25) / 7);
  EXPECT_DOUBLE_EQ(w->watts, 6000.0 / 30);
  EXPECT_DOUBLE_EQ(w->seconds, 30);
  d.mig_instances[1].sm_active_ratio = 0.3;  // GPM: the fit has its own pairs
  EXPECT_FALSE(pass(90, 90, 1.0, 0.25, 9000));
}

// At a coarse step the collection falls between two passes: the energy counter at its time is
// placed by the board's power samples between them, not linearly.
TEST(DcgmAligner, TheCounterAtACollectionFollowsThePowerBetweenPasses) {
  gpu::DeviceSample d;
  d.uuid = "GPU-m";
  d.mig_enabled = true;
  d.mig_total_slices = 7;
  d.mig_instances.resize(1);
  d.mig_instances[0].gpu_instance_id = 1;
  d.mig_instances[0].slices = 7;
  DcgmAligner a;
  auto pass = [&](double now, double seen, double v, double energy, double edge) {
    DcgmReading r;
    r.series[{"GPU-m", 1}] = {v, seen, false};
    gpu::GpuSnapshot snap;
    snap.devices = {d};
    snap.devices[0].energy_joules = energy;
    // Samples every 0.5 s since the pass before: 100 W up to `edge`, 400 W after.
    for (double t = now - 14.5; t <= now + 1e-9; t += 0.5)
      snap.devices[0].power_samples.push_back(
          {static_cast<uint64_t>(t * 1e6), t <= edge + 1e-9 ? 100.0 : 400.0});
    a.Apply(r, now, snap);
    return snap.devices[0].dcgm_window;
  };
  // Passes every 15 s; collections at 30 (seen at 20: its first, no window) and 60 (seen at 50).
  EXPECT_FALSE(pass(15, 15, 0.5, 1000, 100));
  EXPECT_FALSE(pass(30, 20, 0.5, 2500, 100));  // 15-30 at 100 W: the counter at 20 is 1500
  EXPECT_FALSE(pass(45, 20, 0.5, 4000, 100));
  // 45-60: 100 W to 50, then 400 W: 500 + 4000 J. At 50 the counter is 4500 (linear: 5500, which
  // would say 133 W over the collection).
  const auto w = pass(60, 50, 0.8, 8500, 50);
  ASSERT_TRUE(w);
  EXPECT_NEAR(w->watts, (4500.0 - 1500) / 30, 1e-9);
  EXPECT_DOUBLE_EQ(w->seconds, 30);
}

}  // namespace
}  // namespace gpumeter::dcgm

namespace gpumeter::dcgm {
namespace {

// DRAM_ACTIVE rides along: each unit's collections kept as activity's and told for any covered
// interval, while only activity decides what is held (a GPU with a DRAM series and no GR series,
// and no NVML activity, is not held for it).
TEST(DcgmAligner, MemoryTrafficIsAlignedLikeActivityAndHoldsNothing) {
  DcgmReading r;
  r.series[{"GPU-m", 1}] = {0.25, 0, false};
  r.series[{"GPU-m", 1, true}] = {0.6, 0, false};
  r.series[{"GPU-d", std::nullopt, true}] = {0.3, 0, false};  // DRAM only, no GR series
  gpu::GpuSnapshot snap;
  gpu::DeviceSample mig;
  mig.uuid = "GPU-m";
  mig.mig_enabled = true;
  mig.mig_instances.resize(1);
  mig.mig_instances[0].gpu_instance_id = 1;
  gpu::DeviceSample dram_only;  // no NVML activity either: only a GR series would hold it
  dram_only.uuid = "GPU-d";
  snap.devices = {mig, dram_only};
  DcgmAligner a;
  a.Apply(r, 10, snap);
  EXPECT_TRUE(snap.devices[0].dcgm_held);
  EXPECT_FALSE(snap.devices[1].dcgm_held) << "a DRAM series alone holds nothing";
  r.series[{"GPU-m", 1}] = {0.5, 20, false};
  r.series[{"GPU-m", 1, true}] = {0.8, 20, false};
  a.Apply(r, 21, snap);
  EXPECT_DOUBLE_EQ(*a.Mean({"GPU-m", 1, true}, 12, 18).mean, 0.8);
  EXPECT_DOUBLE_EQ(*a.Mean({"GPU-m", 1}, 12, 18).mean, 0.5) << "the two kept apart";
  EXPECT_TRUE(a.Mean({"GPU-m", 1, true}, 12, 25).pending);
  // The DRAM series gone for good (the exporter stopped collecting it): unknown, not 0.
  r.series.erase({"GPU-m", 1, true});
  a.Apply(r, 200, snap);
  EXPECT_TRUE(a.Mean({"GPU-m", 1, true}, 12, 18).mean.has_value()) << "missing a while: kept";
  a.Apply(r, 300, snap);
  EXPECT_FALSE(a.Mean({"GPU-m", 1, true}, 12, 18).mean.has_value());
}

}  // namespace
}  // namespace gpumeter::dcgm
