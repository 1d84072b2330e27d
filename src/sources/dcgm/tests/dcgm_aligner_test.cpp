// The aligner: the exporter's 30 s means, seen late, become per-interval busy fractions whose sum
// follows the exporter's integral; stale or missing series are unknown.
#include "sources/dcgm/dcgm_aligner.h"

#include <gtest/gtest.h>

namespace gpumeter::dcgm {
namespace {

const DcgmKey kKey{"GPU-a", 3};

TEST(DcgmAligner, TotalsFollowTheExportersIntegral) {
  // Truth: busy 0 until t=0, 0.8 on [0, 60), 0.2 on [60, 120). The exporter collects every
  // 30 s: at 0 it shows 0, at 30 and 60 it shows 0.8, at 90 and 120 it shows 0.2.
  DcgmAligner a;
  double total = 0;
  for (int t = 0; t <= 120; ++t) {
    const int tc = t / 30 * 30;
    const double v = tc == 0 ? 0.0 : (tc <= 60 ? 0.8 : 0.2);
    DcgmSeries s{v, static_cast<double>(tc), false};
    const auto busy = a.Step(kKey, &s, t);
    if (t == 0) {
      EXPECT_FALSE(busy);  // the first pass starts the history
      continue;
    }
    ASSERT_TRUE(busy);
    EXPECT_GE(*busy, 0.0);
    EXPECT_LE(*busy, 1.0);
    total += *busy;
  }
  EXPECT_NEAR(total, 0.8 * 60 + 0.2 * 60, 1e-9);  // exact at a collection
}

TEST(DcgmAligner, AGaugeWouldLagAndTheAlignerDoesNot) {
  // Busy 0.6 from t=0 on: the naive gauge shows 0 for the first 30 s.
  DcgmAligner a;
  double total = 0;
  for (int t = 0; t <= 90; ++t) {
    const int tc = t / 30 * 30;
    DcgmSeries s{tc == 0 ? 0.0 : 0.6, static_cast<double>(tc), false};
    total += a.Step(kKey, &s, t).value_or(0);
  }
  EXPECT_NEAR(total, 0.6 * 90, 1e-9);
}

TEST(DcgmAligner, StaleOrMissingIsUnknownAndForgetsTheHistory) {
  DcgmAligner a;
  DcgmSeries s{0.5, 0, false};
  EXPECT_FALSE(a.Step(kKey, &s, 0));
  EXPECT_DOUBLE_EQ(*a.Step(kKey, &s, 1), 0.5);
  EXPECT_FALSE(a.Step(kKey, nullptr, 2));
  s.stale = true;
  EXPECT_FALSE(a.Step(kKey, &s, 3));
  s = {0.9, 4, false};
  EXPECT_FALSE(a.Step(kKey, &s, 4));  // starts afresh: the gap is not filled in
  EXPECT_DOUBLE_EQ(*a.Step(kKey, &s, 5), 0.9);
}

TEST(DcgmAligner, AppliesToMigInstancesAndWholeGpus) {
  DcgmReading r;
  r.series[{"GPU-m", 1}] = {0.25, 0, false};
  r.series[{"GPU-w", std::nullopt}] = {0.75, 0, false};
  gpu::GpuSnapshot snap;
  gpu::DeviceSample mig;
  mig.uuid = "GPU-m";
  mig.mig_enabled = true;
  mig.mig_instances.resize(2);
  mig.mig_instances[0].gpu_instance_id = 1;
  mig.mig_instances[1].gpu_instance_id = 2;  // no series: unknown
  gpu::DeviceSample whole;
  whole.uuid = "GPU-w";
  snap.devices = {mig, whole};
  DcgmAligner a;
  a.Apply(r, 10, snap);
  auto next = snap;
  a.Apply(r, 11, next);
  EXPECT_DOUBLE_EQ(next.devices[0].mig_instances[0].dcgm_gr_active.value_or(-1), 0.25);
  EXPECT_FALSE(next.devices[0].mig_instances[1].dcgm_gr_active);
  EXPECT_DOUBLE_EQ(next.devices[1].dcgm_gr_active.value_or(-1), 0.75);
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

}  // namespace
}  // namespace gpumeter::dcgm
