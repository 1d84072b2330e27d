// The dcgm-exporter page as the activity source reads it, from pages in the formats the exporter
// writes (docs: incumbents §1.7, §2): both field names, both host label spellings, MIG instances
// and whole GPUs.
#include "sources/dcgm/dcgm_page.h"

#include <gtest/gtest.h>

namespace gpumeter::dcgm {
namespace {

DcgmPage Read(const std::string& text) {
  auto page = prom::ParsePromText(text);
  EXPECT_TRUE(page) << (page ? "" : page.error().message);
  return page ? ReadDcgmPage(*page) : DcgmPage{};
}

// dcgm-exporter before PR #655 (`Hostname`), DCGM < 4.6 field name, an A100 with MIG.
constexpr const char* kOldPage = R"(# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a100",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node-a",DCGM_FI_DRIVER_VERSION="535.104.05"} 182.5
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-a100",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="node-a",DCGM_FI_DRIVER_VERSION="535.104.05"} 0.712345
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-a100",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="2g.20gb",GPU_I_ID="5",Hostname="node-a",DCGM_FI_DRIVER_VERSION="535.104.05",pod="train-0",namespace="ml",container="main"} 0.25
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-whole",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",Hostname="node-a",DCGM_FI_DRIVER_VERSION="535.104.05"} 0.5
)";

// After PR #655 (`hostname`), DCGM ≥ 4.6 field name.
constexpr const char* kNewPage = R"(# TYPE DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO gauge
DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO{gpu="0",UUID="GPU-a100",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13",hostname="node-b"} 0.125
DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO{gpu="1",UUID="GPU-whole",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",hostname="node-b"} 1.3
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a100",device="nvidia0",hostname="node-b"} 123456789
)";

TEST(DcgmPage, OldFieldNameAndHostnameLabel) {
  const auto p = Read(kOldPage);
  ASSERT_EQ(p.gr_active.size(), 3u);
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-a100", 1}), 0.712345);
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-a100", 5}), 0.25);  // a pod label changes nothing
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-whole", std::nullopt}), 0.5);  // no GPU_I_ID: whole GPU
  EXPECT_EQ(p.hosts, std::set<std::string>{"node-a"});
  EXPECT_EQ(p.gpu_fingerprint.size(), 2u);
  EXPECT_EQ(p.skipped, 0u);
}

TEST(DcgmPage, NewFieldNameAndHostnameLabelClampedToOne) {
  const auto p = Read(kNewPage);
  ASSERT_EQ(p.gr_active.size(), 2u);
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-a100", 13}), 0.125);
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-whole", std::nullopt}), 1.0);  // overshoot on MIG
  EXPECT_EQ(p.hosts, std::set<std::string>{"node-b"});
}

TEST(DcgmPage, NewNameWinsWhereBothArePresent) {
  const auto p = Read(
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"2\"} 0.9\n"
      "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO{UUID=\"GPU-x\",GPU_I_ID=\"2\"} 0.4\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{uuid=\"GPU-y\"} 0.3\n");  // -o: lower-case uuid
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-x", 2}), 0.4);
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-y", std::nullopt}), 0.3);
}

TEST(DcgmPage, BadSeriesAreSkippedAndNamed) {
  const auto p = Read(
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 0.5\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"one\"} 0.5\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"3\"} NaN\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"4\"} -0.1\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"5\"} 0\n");
  EXPECT_EQ(p.skipped, 4u);
  ASSERT_EQ(p.gr_active.size(), 1u);  // a measured 0 is kept: it is not unknown
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-x", 5}), 0.0);
  ASSERT_EQ(p.skipped_why.size(), 4u);
  EXPECT_NE(p.skipped_why[0].find("line 1"), std::string::npos);
  EXPECT_NE(p.skipped_why[1].find("'one'"), std::string::npos);
}

TEST(DcgmPage, FingerprintChangesWithAnySeriesOfTheGpu) {
  const auto a = Read(kNewPage);
  std::string text = kNewPage;
  text.replace(text.find("123456789"), 9, "123456999");
  const auto b = Read(text);
  EXPECT_NE(a.gpu_fingerprint.at("GPU-a100"), b.gpu_fingerprint.at("GPU-a100"));
  EXPECT_EQ(a.gpu_fingerprint.at("GPU-whole"), b.gpu_fingerprint.at("GPU-whole"));
}

}  // namespace
}  // namespace gpumeter::dcgm

namespace gpumeter::dcgm {
namespace {

// Memory traffic: DRAM_ACTIVE per GPU instance and whole GPU under both names (the DCGM 4.x one
// wins where a key has both), kept apart from GR activity; its bad series skipped as GR's are.
TEST(DcgmPage, DramActiveUnderBothNamesBesideActivity) {
  const auto p = Read(R"(# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID="GPU-a100",GPU_I_ID="1",hostname="n"} 0.7
# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-a100",GPU_I_ID="1",hostname="n"} 0.42
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-a100",GPU_I_ID="2",hostname="n"} 0.2
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-whole",hostname="n"} 1.5
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-a100",GPU_I_ID="x",hostname="n"} 0.1
# TYPE DCGM_FI_PROF_DRAM_UTIL_RATIO gauge
DCGM_FI_PROF_DRAM_UTIL_RATIO{UUID="GPU-a100",GPU_I_ID="2",hostname="n"} 0.25
)");
  ASSERT_EQ(p.gr_active.size(), 1u);
  EXPECT_DOUBLE_EQ(p.gr_active.at({"GPU-a100", 1}), 0.7);
  ASSERT_EQ(p.dram_active.size(), 3u);
  EXPECT_DOUBLE_EQ(p.dram_active.at({"GPU-a100", 1}), 0.42);
  EXPECT_DOUBLE_EQ(p.dram_active.at({"GPU-a100", 2}), 0.25) << "the 4.x name wins";
  EXPECT_DOUBLE_EQ(p.dram_active.at({"GPU-whole", std::nullopt}), 1.0) << "clamped";
  EXPECT_EQ(p.skipped, 1u);
  ASSERT_FALSE(p.skipped_why.empty());
  EXPECT_NE(p.skipped_why[0].find("DCGM_FI_PROF_DRAM_ACTIVE"), std::string::npos);
}

}  // namespace
}  // namespace gpumeter::dcgm
