// The Prometheus frame: the window's amounts become rates over the unit's seconds; a NaN or an
// infinity from PromQL is unknown; no energy is unknown power; findings from their series.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sources/history/prometheus_frame.h"

namespace gpumeter::history {
namespace {

using domain::OwnerKind;

history::PrometheusUsage Usage() {
  attribution::UnitRecord r;
  r.unit = {"n1", "GPU-a", "GPU-a", "H100", "", domain::SharingMode::kTimeSlicing, 1.0};
  r.seconds = 60;
  r.memory_capacity_byte_seconds = 80e9 * 60;
  r.energy_joules = 300.0 * 60;
  r.owners = {{{OwnerKind::kContainer, "ml", "p", "c"}, 30e9 * 60, 0.5 * 60, 200.0 * 60, 0.5 * 60},
              {{OwnerKind::kIdle, "", "", ""}, 50e9 * 60, 0.5 * 60, 100.0 * 60, 0}};
  history::PrometheusUsage u;
  u.units = {r};
  return u;
}

TEST(TopPrometheusFrame, RatesOverTheUnitsSeconds) {
  const auto f = FrameFromUsage(Usage(), "prometheus x", 1000, 60);
  ASSERT_EQ(f.units.size(), 1u);
  const auto& u = f.units[0];
  EXPECT_EQ(u.label, "n1 GPU-a");
  EXPECT_DOUBLE_EQ(*u.memory_total_bytes, 80e9);
  EXPECT_DOUBLE_EQ(*u.power_watts, 300);
  EXPECT_DOUBLE_EQ(*u.busy_ratio, 0.5);  // not idle
  EXPECT_DOUBLE_EQ(*u.memory_used_bytes, 30e9);
  EXPECT_DOUBLE_EQ(*u.owners[0].held_share, 0.5);
  EXPECT_DOUBLE_EQ(*u.owners[0].power_watts, 200);
  EXPECT_DOUBLE_EQ(*u.owners[0].power_bound_watts, 0) << "no energy bound series: measured";
}

// gpumeter_energy_bound_joules_total over the window: the ± of the owner's power.
TEST(TopPrometheusFrame, AnEnergyBoundIsThePowersPlusMinus) {
  auto usage = Usage();
  usage.units[0].owners[0].energy_bound_joules = 40.0 * 60;
  const auto f = FrameFromUsage(usage, "prometheus x", 1000, 60);
  ASSERT_EQ(f.units.size(), 1u);
  EXPECT_DOUBLE_EQ(*f.units[0].owners[0].power_bound_watts, 40);
  usage.units[0].energy_joules = 0;  // energy unknown: so is its ±
  EXPECT_FALSE(
      FrameFromUsage(usage, "prometheus x", 1000, 60).units[0].owners[0].power_watts.has_value());
}

TEST(TopPrometheusFrame, NonFiniteIsUnknownAndNoEnergyIsUnknownPower) {
  auto usage = Usage();
  usage.units[0].owners[0].compute_seconds = std::numeric_limits<double>::quiet_NaN();
  usage.units[0].energy_joules = 0;
  auto dead = usage.units[0];
  dead.seconds = std::numeric_limits<double>::infinity();
  usage.units.push_back(dead);
  const auto f = FrameFromUsage(usage, "prometheus x", 1000, 60);
  ASSERT_EQ(f.units.size(), 1u) << "a unit without finite seconds is left out";
  EXPECT_FALSE(f.units[0].owners[0].compute_ratio.has_value());
  EXPECT_FALSE(f.units[0].busy_ratio.has_value()) << "busy needs every non-idle owner";
  EXPECT_FALSE(f.units[0].power_watts.has_value());
  EXPECT_FALSE(f.units[0].owners[0].power_watts.has_value());
}

TEST(TopPrometheusFrame, FindingsFromTheirSeries) {
  history::PromSample pod{{{"node", "n1"},
                           {"kind", "idle-allocation"},
                           {"severity", "warning"},
                           {"namespace", "ml"},
                           {"pod", "p"},
                           {"container", "c"}},
                          1700000000};
  history::PromSample host{{{"node", "n2"}, {"kind", "host-process"}, {"process", "dcgmi"}}, 5};
  const auto found = FindingsFromSamples({pod, host});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].who, "ml/p/c");
  EXPECT_EQ(found[0].first_seen_unix_s, 1700000000);
  EXPECT_EQ(found[1].who, "host process dcgmi");
  EXPECT_EQ(found[1].node, "n2");
}

}  // namespace
}  // namespace gpumeter::history
