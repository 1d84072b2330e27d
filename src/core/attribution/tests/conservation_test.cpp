// Property tests over random observations: conservation, no negatives, nothing above capacity,
// invariance to process order, and splitting an interval in two gives the same totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/attribution/attribute.h"

namespace gpumeter::attribution {
namespace {

UnitObservation RandomUnit(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  auto maybe = [&](double p) { return unit(rng) < p; };
  UnitObservation u;
  u.uuid = "GPU-r";
  u.mode = static_cast<SharingMode>(rng() % 4);
  u.memory_total_bytes = 1 + rng() % (200ull << 30);
  if (maybe(0.8)) u.memory_reserved_bytes = rng() % (u.memory_total_bytes / 8 + 1);
  if (maybe(0.8))
    u.memory_used_bytes = rng() % (u.memory_total_bytes + 1);  // may exceed what is left
  if (maybe(0.8)) u.busy_fraction = maybe(0.1) ? 1.0 : unit(rng);
  if (maybe(0.7)) u.energy_joules = unit(rng) * 7000;
  const int n = static_cast<int>(rng() % 12);
  for (int i = 0; i < n; ++i) {
    ProcessObservation p;
    p.pid = static_cast<uint32_t>(100 + i);
    if (maybe(0.9))
      p.owner = Owner{OwnerKind::kContainer, "ns", "pod" + std::to_string(rng() % 5), "c"};
    if (maybe(0.85)) p.memory_bytes = rng() % (u.memory_total_bytes / 2 + 1);
    if (maybe(0.6)) p.sm_fraction = unit(rng) * 1.2;  // samples can be noisy, even above 100 %
    if (maybe(0.5)) p.mps_thread_fraction = unit(rng);
    if (maybe(0.6)) p.memory_busy_fraction = unit(rng) * 1.2;
    p.memory_busy_extrapolated = p.memory_busy_fraction && maybe(0.2);
    u.processes.push_back(p);
  }
  // Memory traffic: any signal, a unit figure or not, samples lost or not.
  u.memory_signal = static_cast<MemorySignal>(rng() % 5);
  if (maybe(0.6)) u.memory_busy_fraction = maybe(0.1) ? 1.0 : unit(rng);
  u.memory_busy_is_instant = maybe(0.3);
  return u;
}

struct Totals {
  double memory = 0, compute = 0, energy = 0, traffic = 0;
};
Totals Sum(const UnitLedger& l) {
  Totals t;
  for (const auto& r : l.rows) {
    t.memory += r.memory_byte_seconds;
    t.compute += r.compute_seconds;
    t.energy += r.energy_joules;
    t.traffic += r.memory_busy_seconds;
  }
  return t;
}

TEST(Conservation, RandomObservations) {
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 20000; ++i) {
    auto u = RandomUnit(rng);
    const double seconds = 0.1 + static_cast<double>(rng() % 1000) / 100.0;
    // Samples the driver lost (absolute seconds: not for the splitting property below).
    if (rng() % 5 == 0) u.samples_uncovered_seconds = static_cast<double>(rng() % 500) / 100.0;
    const auto l = AttributeUnit(u, seconds);
    const auto t = Sum(l);
    SCOPED_TRACE(i);
    ASSERT_NEAR(t.memory / l.memory_capacity_byte_seconds, 1.0, 1e-9);
    ASSERT_NEAR(t.compute / seconds, 1.0, 1e-9);
    ASSERT_NEAR(t.traffic / seconds, 1.0, 1e-9) << "memory traffic is conserved as compute";
    if (u.energy_joules && *u.energy_joules > 0) {
      ASSERT_NEAR(t.energy / *u.energy_joules, 1.0, 1e-9);
    }
    if (!u.energy_joules) {
      ASSERT_EQ(t.energy, 0.0) << "unknown energy is not split";
    }
    for (const auto& r : l.rows) {
      ASSERT_GE(r.memory_byte_seconds, 0);
      ASSERT_GE(r.compute_seconds, 0);
      ASSERT_GE(r.energy_joules, 0);
      ASSERT_LE(r.compute_seconds, seconds * (1 + 1e-12)) << "no owner above 100 %";
      ASSERT_LE(r.memory_byte_seconds, l.memory_capacity_byte_seconds * (1 + 1e-12));
      ASSERT_GE(r.compute_unknown_seconds, 0);
      ASSERT_LE(r.compute_unknown_seconds, seconds * (1 + 1e-12)) << "unknown within the interval";
      ASSERT_GE(r.memory_busy_seconds, 0);
      ASSERT_LE(r.memory_busy_seconds, seconds * (1 + 1e-12));
      ASSERT_GE(r.memory_busy_unknown_seconds, 0);
      ASSERT_LE(r.memory_busy_unknown_seconds, seconds * (1 + 1e-12));
      ASSERT_GE(r.memory_busy_bound_seconds, 0);
      // A row may say only that its owner's compute (or traffic) is unknown; not nothing.
      const bool has_amount = r.memory_byte_seconds > 0 || r.compute_seconds > 0 ||
                              r.compute_unknown_seconds > 0 || r.memory_busy_seconds > 0 ||
                              r.memory_busy_unknown_seconds > 0 || r.memory_busy_bound_seconds > 0;
      ASSERT_TRUE(has_amount) << "no empty rows";
    }
  }
}

TEST(Conservation, ProcessOrderDoesNotMatter) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    auto u = RandomUnit(rng);
    const auto a = AttributeUnit(u, 3);
    std::shuffle(u.processes.begin(), u.processes.end(), rng);
    const auto b = AttributeUnit(u, 3);
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (size_t k = 0; k < a.rows.size(); ++k) {
      ASSERT_EQ(a.rows[k].owner, b.rows[k].owner);
      ASSERT_NEAR(a.rows[k].memory_byte_seconds, b.rows[k].memory_byte_seconds,
                  1e-6 * (1 + a.rows[k].memory_byte_seconds));
      ASSERT_NEAR(a.rows[k].compute_seconds, b.rows[k].compute_seconds, 1e-12);
      ASSERT_NEAR(a.rows[k].memory_busy_seconds, b.rows[k].memory_busy_seconds, 1e-12);
    }
  }
}

TEST(Conservation, SplittingAnIntervalGivesTheSameTotals) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const auto u = RandomUnit(rng);
    const auto whole = AttributeUnit(u, 5);
    const auto first = AttributeUnit(u, 2), second = AttributeUnit(u, 3);
    ASSERT_EQ(whole.rows.size(), first.rows.size());
    for (size_t k = 0; k < whole.rows.size(); ++k) {
      ASSERT_NEAR(whole.rows[k].compute_seconds,
                  first.rows[k].compute_seconds + second.rows[k].compute_seconds, 1e-9);
      ASSERT_NEAR(whole.rows[k].memory_busy_seconds,
                  first.rows[k].memory_busy_seconds + second.rows[k].memory_busy_seconds, 1e-9);
      ASSERT_NEAR(whole.rows[k].memory_byte_seconds,
                  first.rows[k].memory_byte_seconds + second.rows[k].memory_byte_seconds,
                  1e-9 * whole.memory_capacity_byte_seconds);
    }
  }
}

TEST(Conservation, ZeroLengthIntervalHasNoRows) {
  std::mt19937_64 rng(3);
  EXPECT_TRUE(AttributeUnit(RandomUnit(rng), 0).rows.empty());
}

}  // namespace
}  // namespace gpumeter::attribution
