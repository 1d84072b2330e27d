// Memory traffic read through the real NVML loading path, against the fake driver.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sources/nvml/nvml_gpu_source.h"
#include "support/fake_nvml.h"

namespace gpumeter::nvml {
namespace {

// Memory traffic through the real loading path: per-process memUtil beside smUtil, GPM's
// DRAM_BW_UTIL per GPU instance and per GPU (asked in the same nvmlGpmMetricsGet as SM_UTIL), and
// utilization.memory. tests/scenarios/harness/bandwidth-h100.yaml, hand-read at (100, 110]:
// GPU 0: vllm 21 % SM / 68 % traffic, trainer 70 % / 15 % (0.91 SM: no scaling); the 3g.40gb's
// decoder moves 80 %; the 4g.40gb's notebooks 40 % + 10 %; GPU 2's embedding job 62 %.
TEST(NvmlSource, MemoryTrafficPerProcessPerInstanceAndPerGpu) {
  const auto scenario = testing::SourceDir() + "/tests/scenarios/harness/bandwidth-h100.yaml";
  testing::FakeNvml f("r580", scenario, 100);
  (void)f.Sample();
  f.SetTime(110);
  const auto snap = f.Sample();
  ASSERT_EQ(snap.devices.size(), 3u);
  const auto& ts = snap.devices[0];
  std::map<uint32_t, std::set<uint32_t>> mem;
  for (const auto& u : ts.process_util) mem[u.pid].insert(u.memory_percent);
  EXPECT_EQ(mem[7100], std::set<uint32_t>{68});
  EXPECT_EQ(mem[7200], std::set<uint32_t>{15});
  ASSERT_TRUE(ts.utilization_memory_percent);
  EXPECT_EQ(*ts.utilization_memory_percent, 83u);
  ASSERT_TRUE(ts.dram_bw_ratio);
  EXPECT_NEAR(*ts.dram_bw_ratio, 0.83, 1e-9);

  const auto& mig = snap.devices[1];
  std::map<uint32_t, const gpu::MigInstanceSample*> by_gi;
  for (const auto& m : mig.mig_instances) by_gi[m.gpu_instance_id] = &m;
  ASSERT_TRUE(by_gi.count(1) && by_gi.count(2));
  ASSERT_TRUE(by_gi[2]->dram_bw_ratio && by_gi[1]->dram_bw_ratio);
  EXPECT_NEAR(*by_gi[2]->dram_bw_ratio, 0.80, 1e-9);
  EXPECT_NEAR(*by_gi[1]->dram_bw_ratio, 0.50, 1e-9);
  EXPECT_NEAR(*by_gi[2]->sm_active_ratio, 0.25, 1e-9) << "SM_UTIL still read beside it";

  const auto& blind = snap.devices[2];
  EXPECT_FALSE(blind.process_utilization_supported);
  ASSERT_TRUE(blind.dram_bw_ratio);
  EXPECT_NEAR(*blind.dram_bw_ratio, 0.62, 1e-9);
  EXPECT_TRUE(ts.errors.empty() && mig.errors.empty() && blind.errors.empty());
}

}  // namespace
}  // namespace gpumeter::nvml
