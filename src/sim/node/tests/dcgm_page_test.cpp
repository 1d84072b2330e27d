// The simulated dcgm-exporter's page: the last collection's mean busy fraction per MIG GPU
// instance, read back with the agent's own page reader; capped by the compute instance's share.
#include "sim/node/dcgm_page.h"

#include <gtest/gtest.h>

#include "sim/scenario/loader.h"
#include "sim/scenario/truth.h"
#include "sources/dcgm/dcgm_page.h"
#include "support/paths.h"

namespace gpumeter::sim {
namespace {

scenario::Scenario MigA100() {
  auto s = scenario::LoadScenarioFile(testing::ScenarioPath("mig-a100"));
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? *s : scenario::Scenario{};
}

dcgm::DcgmPage Read(const scenario::Scenario& s, double t) {
  auto page = dcgm::ReadDcgmText(DcgmExporterPage(s, t));
  EXPECT_TRUE(page) << (page ? "" : page.error().message);
  return page ? *page : dcgm::DcgmPage{};
}

TEST(DcgmExporterPage, TheLastCollectionsMeanPerGpuInstance) {
  const auto s = MigA100();
  ASSERT_TRUE(HasDcgmExporter(s));
  const auto& g = s.gpus.at(0);
  const auto page = Read(s, 119.5);  // the collection at 90 covers [60, 90]
  ASSERT_EQ(page.gr_active.size(), 3u);
  for (const auto& m : g.mig_instances)
    EXPECT_NEAR(page.gr_active.at({g.uuid, m.gi_id}),
                scenario::UnitBusySeconds(s, m.uuid, 60, 90) / 30, 1e-6)
        << m.profile;
  EXPECT_NEAR(page.gr_active.at({g.uuid, 2}), 0.6, 1e-6);  // the trainer, 60 % until 95 s
  EXPECT_DOUBLE_EQ(page.gr_active.at({g.uuid, 3}), 0.0);   // the held, idle 2g.20gb
  EXPECT_EQ(page.hosts, std::set<std::string>{"gpu-node-a100"});
  // Before the first collection of the run: the idle time before it (an exporter already up).
  EXPECT_DOUBLE_EQ(Read(s, 10).gr_active.at({g.uuid, 2}), 0.0);
  // A new collection changes the GPU's series (the energy counter grows).
  EXPECT_NE(Read(s, 119).gpu_fingerprint.at(g.uuid), Read(s, 121).gpu_fingerprint.at(g.uuid));
  EXPECT_EQ(Read(s, 121).gpu_fingerprint.at(g.uuid), Read(s, 149).gpu_fingerprint.at(g.uuid));
}

TEST(DcgmExporterPage, ASmallerComputeInstanceCapsTheActivity) {
  auto s = MigA100();
  auto& m = s.gpus.at(0).mig_instances.at(0);  // 3g.40gb: a 1-slice compute instance
  m.compute_slices = 1;
  const auto page = Read(s, 45);
  EXPECT_NEAR(page.gr_active.at({s.gpus[0].uuid, 2}),
              scenario::UnitBusySeconds(s, m.uuid, 0, 30) / 30 / 3, 1e-6);
}

TEST(DcgmExporterPage, NoneWithoutTheKey) {
  auto s = MigA100();
  s.gpus.at(0).dcgm_exporter = false;
  EXPECT_FALSE(HasDcgmExporter(s));
  EXPECT_EQ(DcgmExporterPage(s, 100), "");
}

}  // namespace
}  // namespace gpumeter::sim
