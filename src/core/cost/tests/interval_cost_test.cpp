#include "core/cost/interval_cost.h"

#include <gtest/gtest.h>

namespace gpumeter::cost {
namespace {

using domain::Owner;
using domain::OwnerKind;

attribution::UnitLedger Ledger(const std::string& uuid, double seconds) {
  attribution::UnitLedger l;
  l.uuid = uuid;
  l.seconds = seconds;
  l.memory_capacity_byte_seconds = 10 * seconds;
  attribution::Row a;
  a.owner = Owner::Container("ns", "a", "c");
  a.memory_byte_seconds = 6 * seconds;
  attribution::Row idle;
  idle.owner = {OwnerKind::kIdle, {}, {}, {}};
  idle.memory_byte_seconds = 4 * seconds;
  l.rows = {a, idle};
  return l;
}

TEST(IntervalCost, PricesAUnitByItsShareOfTheGpuAndLeavesAnUnknownUnitUnpriced) {
  const auto pricing =
      Pricing::Parse("defaults: false\ngpu_models:\n  \"NVIDIA H100 80GB HBM3\": 4.00\n", "p.yaml");
  ASSERT_TRUE(pricing) << pricing.error().message;
  CostSettings settings;
  settings.pricing = &*pricing;
  const std::vector<PricedUnit> units = {{"MIG-a", "NVIDIA H100 80GB HBM3", 3.0 / 7}};
  const auto costs =
      CostOfInterval({Ledger("MIG-a", 1800), Ledger("GPU-gone", 1800)}, units, settings);
  ASSERT_EQ(costs.size(), 2u);
  ASSERT_TRUE(costs[0].price);
  EXPECT_DOUBLE_EQ(costs[0].price->per_gpu_hour, 4.0);
  EXPECT_DOUBLE_EQ(costs[0].unit_cost, 4.0 * 3 / 7 / 2);  // 3/7 of the GPU for half an hour
  double sum = 0;
  for (const auto& r : costs[0].rows) sum += r.cost;
  EXPECT_NEAR(sum, costs[0].unit_cost, 1e-12);
  EXPECT_EQ(costs[0].owners.size(), 2u);
  EXPECT_EQ(costs[1].uuid, "GPU-gone");
  EXPECT_FALSE(costs[1].price) << "a unit not listed has no known model, hence no price";
  EXPECT_TRUE(costs[1].rows.empty());
  EXPECT_EQ(costs[1].seconds, 1800);
}

TEST(IntervalCost, WithoutPricingNothingIsPriced) {
  const std::vector<PricedUnit> units = {{"GPU-a", "NVIDIA H100 80GB HBM3", 1}};
  const auto costs = CostOfInterval({Ledger("GPU-a", 60)}, units, CostSettings{});
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_FALSE(costs[0].price);
  EXPECT_EQ(costs[0].unit_cost, 0);
}

}  // namespace
}  // namespace gpumeter::cost
