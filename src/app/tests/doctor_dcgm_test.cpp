// `gpumeter doctor`'s dcgm check on the A100 MIG scenario (no GPM): the scenario's dcgm-exporter
// served on loopback matches NVML's MIG instances; another node's page, an exporter that is down,
// and no --dcgm-metrics at all are each reported.
#include <gtest/gtest.h>

#include <cstdlib>

#include "app/diagnose/doctor_checks.h"
#include "sim/fake_kubelet/fake_dcgm_exporter.h"
#include "sim/scenario/loader.h"
#include "support/paths.h"

namespace gpumeter::app {
namespace {

class DoctorDcgmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = scenario::LoadScenarioFile(testing::ScenarioPath("mig-a100"));
    ASSERT_TRUE(s) << s.error().message;
    scenario_ = std::make_unique<scenario::Scenario>(std::move(*s));
    ::setenv("GPUMETER_FAKE_NVML_SCENARIO", testing::ScenarioPath("mig-a100").c_str(), 1);
    ::setenv("GPUMETER_FAKE_NVML_START_S", "100", 1);
    ::unsetenv("GPUMETER_FAKE_NVML_EPOCH_US");
    const auto nvml = CheckNvml(testing::FakeNvmlPath("r580"), nvml_);
    ASSERT_EQ(nvml.status, CheckStatus::kOk) << nvml.detail;
    ASSERT_EQ(nvml_.mig_instances.size(), 3u);
  }
  std::unique_ptr<scenario::Scenario> scenario_;
  NvmlFindings nvml_;
};

TEST_F(DoctorDcgmTest, TheNodesExporterCoversEveryMigInstance) {
  sim::FakeDcgmExporter exporter;
  ASSERT_TRUE(exporter.Start(
      *scenario_, [] { return 100.0; }, "127.0.0.1"));
  const auto c = CheckDcgm(exporter.url(), nvml_);
  EXPECT_EQ(c.status, CheckStatus::kOk) << c.detail;
  EXPECT_NE(c.detail.find("3 MIG instance(s) of 3 with activity"), std::string::npos) << c.detail;
}

TEST_F(DoctorDcgmTest, AnotherNodesPageFails) {
  auto other = *scenario_;
  other.gpus[0].uuid = "GPU-00000000-0000-4000-8000-000000000000";
  other.node_name = "gpu-node-other";
  sim::FakeDcgmExporter exporter;
  ASSERT_TRUE(exporter.Start(
      other, [] { return 100.0; }, "127.0.0.1"));
  const auto c = CheckDcgm(exporter.url(), nvml_);
  EXPECT_EQ(c.status, CheckStatus::kFail) << c.detail;
  EXPECT_NE(c.detail.find("gpu-node-other"), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("NODE_IP"), std::string::npos);
}

TEST_F(DoctorDcgmTest, AnExporterThatIsDownFails) {
  std::string url;
  {
    sim::FakeDcgmExporter exporter;
    ASSERT_TRUE(exporter.Start(
        *scenario_, [] { return 100.0; }, "127.0.0.1"));
    url = exporter.url();
  }
  const auto c = CheckDcgm(url, nvml_);
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.detail.find("unreachable"), std::string::npos) << c.detail;
}

TEST_F(DoctorDcgmTest, WithoutItMigInstancesWithoutGpmAreAWarning) {
  const auto c = CheckDcgm("", nvml_);
  EXPECT_EQ(c.status, CheckStatus::kWarn);
  EXPECT_NE(c.fix.find("--dcgm-metrics"), std::string::npos);
}

}  // namespace
}  // namespace gpumeter::app
