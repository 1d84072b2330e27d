// DCGM's GR engine activity where NVML has none (MIG before Hopper, a GPU without utilization):
// it feeds the same rules GPM feeds, NVML's own signals win where present, and the rows say
// which signal was used; tenants of one MIG instance are split by an estimate that says so.
#include <gtest/gtest.h>

#include "core/attribution/attribute.h"
#include "core/attribution/observe.h"
#include "core/attribution/tests/node_spec.h"

namespace gpumeter::attribution {
namespace {

using test_support::FedAccountant;
using test_support::NodeSpec;

Owner C(const std::string& pod) { return Owner{OwnerKind::kContainer, "ns", pod, "c"}; }

NodeSpec Ctx() {
  NodeSpec ctx;
  ctx.owner = [](uint32_t pid) -> std::optional<Owner> { return C("p" + std::to_string(pid)); };
  return ctx;
}

gpu::MigInstanceSample Instance(const std::string& uuid, uint32_t gi, uint32_t slices,
                                std::vector<gpu::GpuProcess> procs) {
  gpu::MigInstanceSample m;
  m.uuid = uuid;
  m.gpu_instance_id = gi;
  m.slices = slices;
  m.memory = gpu::MemoryInfo{100, 40, 0, 60};
  m.processes = std::move(procs);
  return m;
}

// An A100 with MIG: no GPM, no utilization, no per-process samples.
gpu::DeviceSample A100(std::vector<gpu::MigInstanceSample> instances) {
  gpu::DeviceSample d;
  d.uuid = "GPU-a100";
  d.name = "NVIDIA A100-SXM4-80GB";
  d.mig_enabled = true;
  d.process_utilization_supported = false;
  d.mig_total_slices = 7;
  d.mig_instances = std::move(instances);
  return d;
}

const Row* RowOf(const UnitLedger& l, const Owner& o) {
  for (const auto& r : l.rows)
    if (r.owner == o) return &r;
  return nullptr;
}
const Owner kIdle{OwnerKind::kIdle, {}, {}, {}};
const Owner kUnattributed{OwnerKind::kUnattributed, {}, {}, {}};

TEST(DcgmActivity, AMigInstanceAloneGetsItsBusyTimeAndTheIdleRowNamesDcgm) {
  auto m = Instance("MIG-3g", 1, 3, {{7, gpu::ProcessType::kCompute, 40, 1, 0}});
  m.dcgm_gr_active = 0.6;
  const auto units = Observe(nullptr, A100({m}), 10, Ctx());
  ASSERT_FALSE(units.empty());
  EXPECT_TRUE(units[0].busy_from_dcgm);
  const auto l = AttributeUnit(units[0], 10);
  ASSERT_TRUE(RowOf(l, C("p7")));
  EXPECT_DOUBLE_EQ(RowOf(l, C("p7"))->compute_seconds, 6);
  EXPECT_EQ(RowOf(l, C("p7"))->compute_rule, Rule::kSingleTenant);
  ASSERT_TRUE(RowOf(l, kIdle));
  EXPECT_DOUBLE_EQ(RowOf(l, kIdle)->compute_seconds, 4);
  EXPECT_EQ(RowOf(l, kIdle)->compute_rule, Rule::kUnitNotBusyDcgm);
}

TEST(DcgmActivity, WithoutItTheInstanceIsUnknownNotIdle) {
  auto m = Instance("MIG-3g", 1, 3, {{7, gpu::ProcessType::kCompute, 40, 1, 0}});
  const auto l = AttributeUnit(Observe(nullptr, A100({m}), 10, Ctx())[0], 10);
  EXPECT_FALSE(RowOf(l, kIdle) && RowOf(l, kIdle)->compute_seconds > 0);
  ASSERT_TRUE(RowOf(l, kUnattributed));
  EXPECT_DOUBLE_EQ(RowOf(l, kUnattributed)->compute_seconds, 10);
}

TEST(DcgmActivity, GpmWinsOverDcgm) {
  auto m = Instance("MIG-3g", 1, 3, {{7, gpu::ProcessType::kCompute, 40, 1, 0}});
  m.dcgm_gr_active = 0.6;
  m.sm_active_ratio = 0.3;
  const auto units = Observe(nullptr, A100({m}), 10, Ctx());
  EXPECT_FALSE(units[0].busy_from_dcgm);
  const auto l = AttributeUnit(units[0], 10);
  EXPECT_DOUBLE_EQ(RowOf(l, C("p7"))->compute_seconds, 3);
  EXPECT_EQ(RowOf(l, kIdle)->compute_rule, Rule::kUnitNotBusyDevice);
}

TEST(DcgmActivity, TenantsOfATimeSlicedInstanceSplitEvenlyAsAnEstimate) {
  auto m = Instance(
      "MIG-1g", 9, 1,
      {{1, gpu::ProcessType::kCompute, 30, 9, 0}, {2, gpu::ProcessType::kCompute, 10, 9, 0}});
  m.dcgm_gr_active = 0.8;
  const auto l = AttributeUnit(Observe(nullptr, A100({m}), 10, Ctx())[0], 10);
  // 30 and 10 MiB held: memory says nothing of who ran, so 4 s each, each within [0, 8].
  EXPECT_DOUBLE_EQ(RowOf(l, C("p1"))->compute_seconds, 4);
  EXPECT_DOUBLE_EQ(RowOf(l, C("p2"))->compute_seconds, 4);
  EXPECT_DOUBLE_EQ(RowOf(l, C("p1"))->compute_bound_seconds, 4);
  EXPECT_EQ(RowOf(l, C("p1"))->compute_rule, Rule::kEvenSplitNoSamples);
  EXPECT_TRUE(domain::IsComputeEstimate(RowOf(l, C("p1"))->compute_rule));
}

TEST(DcgmActivity, TenantsWithoutMemoryReadingsSplitEvenlyAsAnEstimate) {
  auto m = Instance(
      "MIG-1g", 9, 1,
      {{1, gpu::ProcessType::kCompute, {}, 9, 0}, {2, gpu::ProcessType::kCompute, {}, 9, 0}});
  m.dcgm_gr_active = 0.5;
  const auto l = AttributeUnit(Observe(nullptr, A100({m}), 10, Ctx())[0], 10);
  EXPECT_DOUBLE_EQ(RowOf(l, C("p1"))->compute_seconds, 2.5);
  EXPECT_DOUBLE_EQ(RowOf(l, C("p2"))->compute_seconds, 2.5);
  EXPECT_EQ(RowOf(l, C("p2"))->compute_rule, Rule::kEvenSplitNoSamples);
  EXPECT_TRUE(domain::IsComputeEstimate(Rule::kEvenSplitNoSamples));
}

TEST(DcgmActivity, EnergyOfTheGpuIsSplitByDcgmActivityTimesSize) {
  auto a = Instance("MIG-3g", 1, 3, {});
  auto b = Instance("MIG-2g", 5, 2, {});
  a.dcgm_gr_active = 1.0;
  b.dcgm_gr_active = 0.5;
  auto before = A100({a, b}), now = A100({a, b});
  before.energy_joules = 0;
  now.energy_joules = 1700;  // 10 s: idle 70 W × 10 s = 700 J, dynamic 1000 J
  auto ctx = Ctx();
  ctx.idle_power_watts = [](const std::string&) -> std::optional<double> { return 70.0; };
  const auto units = Observe(&before, now, 10, ctx);
  ASSERT_GE(units.size(), 2u);
  // Idle by slices out of 7, the rest by activity × slices (3 : 1).
  EXPECT_NEAR(*units[0].energy_joules, 700.0 * 3 / 7 + 1000.0 * 3 / 4, 1e-9);
  EXPECT_NEAR(*units[1].energy_joules, 700.0 * 2 / 7 + 1000.0 * 1 / 4, 1e-9);
  EXPECT_EQ(units[0].energy_rule, Rule::kMigIdleBySize);
  EXPECT_NEAR(*MigGpuActivity(now), (3 * 1.0 + 2 * 0.5) / 7, 1e-12);
}

TEST(DcgmActivity, AWholeGpuUsesDcgmOnlyWithoutUtilization) {
  gpu::DeviceSample d;
  d.uuid = "GPU-w";
  d.memory = gpu::MemoryInfo{100, 0, 0, 100};
  d.dcgm_gr_active = 0.4;
  EXPECT_DOUBLE_EQ(BusyFraction(d).value_or(-1), 0.4);
  EXPECT_TRUE(Observe(nullptr, d, 1, Ctx())[0].busy_from_dcgm);
  d.utilization_gpu_percent = 90;
  EXPECT_DOUBLE_EQ(BusyFraction(d).value_or(-1), 0.9);
  EXPECT_FALSE(Observe(nullptr, d, 1, Ctx())[0].busy_from_dcgm);
}

}  // namespace
}  // namespace gpumeter::attribution
