#include "core/cost/allocate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace gpumeter::cost {
namespace {

using domain::Owner;
using domain::OwnerKind;

Owner C(const std::string& pod) { return {OwnerKind::kContainer, "ns", pod, "c"}; }
Owner K(OwnerKind k) { return {k, {}, {}, {}}; }

double Sum(const std::vector<CostRow>& rows) {
  double s = 0;
  for (const auto& r : rows) s += r.cost;
  return s;
}
const CostRow* Find(const std::vector<CostRow>& rows, const Owner& o) {
  for (const auto& r : rows)
    if (r.owner == o) return &r;
  return nullptr;
}

// A GPU for one hour at $4/h, 80 GiB: pod a used 40 % of compute and 20 GiB, pod b 10 % and
// 40 GiB, idle the rest; a held 1/2, b 1/4 (a time-sliced GPU with 4 replicas, 1 unrequested).
UnitUsage Example() {
  const double gib = 1024.0 * 1024 * 1024, s = 3600;
  UnitUsage u;
  u.seconds = s;
  u.memory_capacity_byte_seconds = 80 * gib * s;
  u.cost = 4.0;
  u.owners = {{C("a"), 20 * gib * s, 0.4 * s, 0, 0.5 * s},
              {C("b"), 40 * gib * s, 0.1 * s, 0, 0.25 * s},
              {K(OwnerKind::kIdle), 20 * gib * s, 0.5 * s, 0, 0}};
  return u;
}

TEST(Allocate, HandComputedPolicies) {
  const auto u = Example();
  struct Case {
    Policy policy;
    double a, b, idle_row;
  };
  const Case cases[] = {
      // memory: a 1/4 of $4 = 1, b 1/2 = 2; idle $1 shared 1:2.
      {{Basis::kMemory, 0.5, IdleRule::kShare}, 1 + 1.0 / 3, 2 + 2.0 / 3, 0},
      {{Basis::kMemory, 0.5, IdleRule::kSeparate}, 1, 2, 1},
      // owner: idle by held share 2:1.
      {{Basis::kMemory, 0.5, IdleRule::kOwner}, 1 + 2.0 / 3, 2 + 1.0 / 3, 0},
      // compute: a 1.6, b 0.4, idle 2.0 shared 4:1.
      {{Basis::kCompute, 0.5, IdleRule::kShare}, 1.6 + 1.6, 0.4 + 0.4, 0},
      // blend 0.5: a 0.5×0.4 + 0.5×0.25 = 0.325 → 1.3; b 0.5×0.1 + 0.5×0.5 = 0.3 → 1.2; idle 1.5
      // separate.
      {{Basis::kBlend, 0.5, IdleRule::kSeparate}, 1.3, 1.2, 1.5},
      // request: a 2, b 1, the unrequested quarter $1 separate.
      {{Basis::kRequest, 0.5, IdleRule::kSeparate}, 2, 1, 1},
  };
  for (const auto& c : cases) {
    const auto rows = Allocate(u, c.policy);
    ASSERT_NE(Find(rows, C("a")), nullptr) << c.policy.Name();
    EXPECT_NEAR(Find(rows, C("a"))->cost, c.a, 1e-12) << c.policy.Name();
    EXPECT_NEAR(Find(rows, C("b"))->cost, c.b, 1e-12) << c.policy.Name();
    const auto* idle = Find(rows, K(OwnerKind::kIdle));
    EXPECT_NEAR(idle ? idle->cost : 0, c.idle_row, 1e-12) << c.policy.Name();
    EXPECT_NEAR(Sum(rows), 4.0, 1e-12) << c.policy.Name();
  }
}

TEST(Allocate, IdleWithNobodyToPlaceItOnStaysIdle) {
  UnitUsage u;
  u.seconds = 60;
  u.memory_capacity_byte_seconds = 1e9 * 60;
  u.cost = 0.5;
  u.owners = {{K(OwnerKind::kIdle), 1e9 * 60, 60, 0, 0}};
  for (auto idle : {IdleRule::kShare, IdleRule::kOwner, IdleRule::kSeparate}) {
    const auto rows = Allocate(u, {Basis::kMemory, 0.5, idle});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].owner.kind, OwnerKind::kIdle);
    EXPECT_DOUBLE_EQ(rows[0].cost, 0.5);
    EXPECT_DOUBLE_EQ(rows[0].idle_cost, 0.5);
  }
}

// A container that holds a whole unit and uses none of it (it once paid 0, and its unit's
// cost landed on __idle__). Under share and owner it pays the unit: it blocked it for everyone
// else; under separate the idle row keeps it, as that rule says; under request it used what it
// held. Beside it, a unit held by two idle pods 3:1 splits by held share.
TEST(Allocate, IdleHoldersPayForTheUnitTheyBlock) {
  const double gib = 1024.0 * 1024 * 1024, s = 600;
  UnitUsage u;
  u.seconds = s;
  u.memory_capacity_byte_seconds = 20 * gib * s;
  // A 2g.20gb (2/7 of an A100 at $4.10/h) for 10 minutes: the example in docs/pricing.md.
  const double cost = 4.10 * 2 / 7 * s / 3600;
  u.cost = cost;
  u.owners = {{C("reserve"), 0, 0, 0, 1.0 * s},  // holds it all, no process
              {K(OwnerKind::kIdle), 20 * gib * s, s, 0, 0}};
  for (auto basis : {Basis::kMemory, Basis::kCompute, Basis::kBlend, Basis::kRequest})
    for (auto idle : {IdleRule::kShare, IdleRule::kOwner, IdleRule::kSeparate}) {
      const Policy p{basis, 0.5, idle};
      const auto rows = Allocate(u, p);
      const auto* holder = Find(rows, C("reserve"));
      const auto* idle_row = Find(rows, K(OwnerKind::kIdle));
      ASSERT_NE(holder, nullptr) << p.Name();
      const bool holder_pays = basis == Basis::kRequest || idle != IdleRule::kSeparate;
      EXPECT_NEAR(holder->cost, holder_pays ? cost : 0.0, 1e-12) << p.Name();
      EXPECT_NEAR(idle_row ? idle_row->cost : 0, holder_pays ? 0.0 : cost, 1e-12) << p.Name();
      EXPECT_NEAR(Sum(rows), cost, 1e-12) << p.Name();
    }
  u.owners = {{C("x"), 0, 0, 0, 0.75 * s},
              {C("y"), 0, 0, 0, 0.25 * s},
              {K(OwnerKind::kIdle), 20 * gib * s, s, 0, 0}};
  const auto rows = Allocate(u, {Basis::kMemory, 0.5, IdleRule::kShare});
  EXPECT_NEAR(Find(rows, C("x"))->cost, 0.75 * cost, 1e-12);
  EXPECT_NEAR(Find(rows, C("y"))->cost, 0.25 * cost, 1e-12);
  EXPECT_NEAR(Find(rows, C("x"))->idle_cost, 0.75 * cost, 1e-12);
  EXPECT_EQ(Find(rows, K(OwnerKind::kIdle)), nullptr);
  // Once anyone uses the unit, share follows use again: the user pays the idle, not the holder.
  u.owners.push_back({C("user"), 1 * gib * s, 0.1 * s, 0, 0});
  const auto used = Allocate(u, {Basis::kMemory, 0.5, IdleRule::kShare});
  EXPECT_NEAR(Find(used, C("user"))->cost, cost, 1e-12);
  EXPECT_NEAR(Find(used, C("x"))->cost, 0.0, 1e-12);
}

// Random units: under every basis and idle rule, the rows add up to the unit's cost, none is
// negative, and idle_cost never exceeds cost.
TEST(Allocate, ConservationUnderEveryPolicy) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> U(0, 1);
  for (int trial = 0; trial < 500; ++trial) {
    UnitUsage u;
    u.seconds = 1 + 3600 * U(rng);
    const double cap = 1e10;
    u.memory_capacity_byte_seconds = cap * u.seconds;
    u.cost = 10 * U(rng) + 1e-6;
    const int n = static_cast<int>(rng() % 6);
    double mem_left = 1, cmp_left = 1,
           req_left = 1.2;  // requests may exceed the unit (misconfigured)
    for (int i = 0; i < n; ++i) {
      const double m = mem_left * U(rng), c = cmp_left * U(rng),
                   r = req_left * U(rng) * (rng() % 3 == 0 ? 0 : 1);
      mem_left -= m, cmp_left -= c, req_left -= r;
      u.owners.push_back(
          {C("p" + std::to_string(i)), m * cap * u.seconds, c * u.seconds, 0, r * u.seconds});
    }
    u.owners.push_back(
        {K(OwnerKind::kIdle), mem_left * cap * u.seconds, cmp_left * u.seconds, 0, 0});
    for (auto basis : {Basis::kMemory, Basis::kCompute, Basis::kBlend, Basis::kRequest})
      for (auto idle : {IdleRule::kShare, IdleRule::kOwner, IdleRule::kSeparate}) {
        const Policy p{basis, U(rng), idle};
        const auto rows = Allocate(u, p);
        EXPECT_NEAR(Sum(rows), u.cost, 1e-9 * u.cost) << p.Name() << " trial " << trial;
        for (const auto& r : rows) {
          EXPECT_GE(r.cost, 0) << p.Name();
          EXPECT_GE(r.idle_cost, 0) << p.Name();
          EXPECT_LE(r.idle_cost, r.cost + 1e-12) << p.Name();
        }
      }
  }
}

TEST(Allocate, PolicyTextsParseOrNameTheProblem) {
  double alpha = 0;
  EXPECT_EQ(*ParseBasis("blend:0.7", &alpha), Basis::kBlend);
  EXPECT_DOUBLE_EQ(alpha, 0.7);
  EXPECT_EQ(*ParseBasis("request", nullptr), Basis::kRequest);
  for (const char* bad : {"blend:1.5", "blend:", "blend:x", "usage", ""}) {
    const auto b = ParseBasis(bad, &alpha);
    ASSERT_FALSE(b) << bad;
    EXPECT_NE(b.error().message.find(std::string("'") + bad + "'"), std::string::npos)
        << b.error().message;
  }
  EXPECT_EQ(*ParseIdleRule("owner"), IdleRule::kOwner);
  EXPECT_FALSE(ParseIdleRule("even"));
  EXPECT_EQ((Policy{Basis::kBlend, 0.25, IdleRule::kOwner}.Name()), "blend:0.25/idle=owner");
}

}  // namespace
}  // namespace gpumeter::cost
