#include "core/attribution/collection_profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpumeter::attribution {
namespace {

constexpr double kIdle = 30, kDynamic = 120;  // board watts at idle; more at full activity

// A collection of `n` one-second pieces whose board power follows the units' true activity under
// the linear model (idle + dynamic × Σ share × activity), each piece's prior the true means.
ProfileInput Collection(const std::vector<double>& share,
                        const std::vector<std::vector<double>>& truth, bool resolved = true) {
  ProfileInput in;
  in.share = share;
  in.weight.assign(share.size(), 1.0);
  in.idle_watts = kIdle;
  std::vector<double> mean(share.size(), 0);
  for (const auto& x : truth)
    for (size_t i = 0; i < share.size(); ++i) mean[i] += x[i] / static_cast<double>(truth.size());
  for (const auto& x : truth) {
    double weighted = 0;
    for (size_t i = 0; i < share.size(); ++i) weighted += share[i] * x[i];
    in.pieces.push_back({1.0, kIdle + kDynamic * weighted, resolved, mean});
  }
  return in;
}

// The true busy energy of unit i: its share of idle power and its dynamic power, over its time.
double TrueBusyEnergy(const std::vector<double>& share, const std::vector<std::vector<double>>& t,
                      size_t i) {
  double e = 0;
  for (const auto& x : t) e += x[i] * share[i] * (kIdle + kDynamic * x[i]);
  return e;
}

UnitProfile Sum(const ProfileResult& r, size_t i) {
  UnitProfile s;
  for (const auto& piece : r.units) {
    s.busy_seconds += piece[i].busy_seconds;
    s.energy_joules += piece[i].energy_joules;
    s.busy_energy_joules += piece[i].busy_energy_joules;
    s.busy_energy_bound_joules += piece[i].busy_energy_bound_joules;
  }
  return s;
}

TEST(CollectionProfile, AWholeGpuFollowsItsPowerExactly) {
  // Busy for 4 s of 10 at the start: the collection says 40 %, the power says when.
  std::vector<std::vector<double>> truth;
  for (size_t k = 0; k < 10; ++k) truth.push_back({k < 4 ? 1.0 : 0.0});
  const auto r = ProfileCollections(Collection({1.0}, truth));
  ASSERT_EQ(r.busy.size(), 10u);
  for (size_t k = 0; k < 10; ++k) EXPECT_NEAR(r.busy[k][0], truth[k][0], 1e-6) << "piece " << k;
  const auto s = Sum(r, 0);
  EXPECT_NEAR(s.busy_seconds, 4.0, 1e-9) << "the collection's mean is kept";
  EXPECT_NEAR(s.busy_energy_joules, TrueBusyEnergy({1.0}, truth, 0), 1e-6);
  // Spread evenly, the burst would have been charged 4 s at the mean power: 4 × (30 + 48).
  EXPECT_GT(s.busy_energy_joules, 4 * (kIdle + 0.4 * kDynamic) * 1.5);
  // One unit: the power leaves nothing open but the idle power's own error, 2 % of the mean
  // 78 W, over its 4 busy seconds and through κ (Σ x² / mean activity = 4 / 0.4).
  EXPECT_NEAR(s.busy_energy_bound_joules, 0.02 * 78 * (4 + 4 / 0.4), 1e-6);
}

TEST(CollectionProfile, TheUnitThatChangedBetweenCollectionsTakesThePowerChanges) {
  // A 2-slice instance steady at 80 %; a 1-slice one bursting at 100 % for 3 s of 12.
  const std::vector<double> share{0.5, 0.25};
  std::vector<std::vector<double>> truth;
  for (size_t k = 0; k < 12; ++k) truth.push_back({0.8, k >= 5 && k < 8 ? 1.0 : 0.0});
  auto in = Collection(share, truth);
  in.weight = {1e-4, 0.25};  // the second changed between collections, the first did not
  const auto r = ProfileCollections(in);
  ASSERT_EQ(r.busy.size(), 12u);
  for (size_t i = 0; i < 2; ++i) {
    const auto s = Sum(r, i);
    double want = 0;
    for (const auto& x : truth) want += x[i];
    EXPECT_NEAR(s.busy_seconds, want, 1e-6) << "unit " << i << ": its collection mean is kept";
    const double t = TrueBusyEnergy(share, truth, i);
    EXPECT_NEAR(s.busy_energy_joules, t, 0.02 * t) << "unit " << i;
    EXPECT_LE(std::abs(s.busy_energy_joules - t), s.busy_energy_bound_joules) << "unit " << i;
  }
  EXPECT_NEAR(r.busy[6][1], 1.0, 0.05);
  EXPECT_NEAR(r.busy[0][1], 0.0, 0.05);
}

TEST(CollectionProfile, TheBoundHoldsWhereTheWeightsGuessWrong) {
  // The weights say the first unit moves; in truth the second does. The estimate is off, and the
  // bound must still hold the truth (and energy still adds up to the board's).
  const std::vector<double> share{0.5, 0.5};
  std::vector<std::vector<double>> truth;
  for (size_t k = 0; k < 20; ++k) truth.push_back({0.5, k % 5 == 0 ? 1.0 : 0.1});
  auto in = Collection(share, truth);
  in.weight = {1.0, 1e-4};
  const auto r = ProfileCollections(in);
  ASSERT_EQ(r.busy.size(), 20u);
  double board = 0, units = 0;
  for (const auto& p : in.pieces) board += p.watts * p.seconds;
  for (size_t i = 0; i < 2; ++i) {
    const auto s = Sum(r, i);
    units += s.energy_joules;
    const double t = TrueBusyEnergy(share, truth, i);
    EXPECT_LE(std::abs(s.busy_energy_joules - t), s.busy_energy_bound_joules) << "unit " << i;
    EXPECT_GT(s.busy_energy_bound_joules, 0);
  }
  EXPECT_NEAR(units, board, 1e-6 * board) << "the units' energy is the board's";
}

TEST(CollectionProfile, AnUnresolvedPieceLeavesItsInsideOpen) {
  // One pass-long piece: busy 25 % of it, but when inside it no power sample says. The estimate
  // is even; the truth (all 2.5 s at full activity) must lie within the bound.
  ProfileInput in;
  in.share = {1.0};
  in.weight = {1.0};
  in.idle_watts = kIdle;
  in.pieces.push_back({10.0, kIdle + kDynamic * 0.25, false, {0.25}});
  const auto r = ProfileCollections(in);
  ASSERT_EQ(r.units.size(), 1u);
  const auto s = Sum(r, 0);
  const double truth = 2.5 * (kIdle + kDynamic);
  EXPECT_LE(std::abs(s.busy_energy_joules - truth), s.busy_energy_bound_joules);
  EXPECT_NEAR(s.busy_energy_joules, 2.5 * (kIdle + 0.25 * kDynamic), 1e-6) << "even inside";
}

TEST(CollectionProfile, NobodyBusyKeepsThePriorsAndBoundsNothing) {
  ProfileInput in;
  in.share = {0.5, 0.5};
  in.weight = {1.0, 1.0};
  in.idle_watts = kIdle;
  for (int k = 0; k < 5; ++k) in.pieces.push_back({1.0, kIdle, true, {0.0, 0.0}});
  const auto r = ProfileCollections(in);
  ASSERT_EQ(r.units.size(), 5u);
  for (size_t i = 0; i < 2; ++i) {
    const auto s = Sum(r, i);
    EXPECT_EQ(s.busy_seconds, 0);
    EXPECT_NEAR(s.energy_joules, 5 * kIdle * 0.5, 1e-9) << "idle power by share";
    EXPECT_EQ(s.busy_energy_bound_joules, 0);
  }
}

TEST(CollectionProfile, MalformedInputGivesNothing) {
  ProfileInput in;
  EXPECT_TRUE(ProfileCollections(in).units.empty()) << "no units";
  in.share = {1.0};
  in.weight = {1.0};
  in.pieces.push_back({1.0, 50, true, {0.5, 0.5}});
  EXPECT_TRUE(ProfileCollections(in).units.empty()) << "a prior per unit";
  in.pieces[0].prior = {0.5};
  in.pieces[0].seconds = 0;
  EXPECT_TRUE(ProfileCollections(in).units.empty()) << "a piece of no time";
  in.pieces[0].seconds = 1;
  in.weight = {0.0};
  EXPECT_TRUE(ProfileCollections(in).units.empty()) << "a weight of 0";
}

}  // namespace
}  // namespace gpumeter::attribution
