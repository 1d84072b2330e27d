// The dcgm-exporter page as the activity source reads it, from pages in the formats the exporter
// writes (docs: incumbents §1.7, §2): both field names, both host label spellings, MIG instances
// and whole GPUs. Read as it streams, in pieces split anywhere, it reads as the whole page does;
// what is not the reading's is dropped, and a page past one node's exporter is refused.
#include "sources/dcgm/dcgm_page.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace gpumeter::dcgm {
namespace {

// The page parsed whole (every series checked for repeats), then read: what the stream must give.
DcgmPage Whole(const std::string& text) {
  auto page = prom::ParsePromText(text);
  EXPECT_TRUE(page) << (page ? "" : page.error().message);
  auto read = page ? ReadDcgmPage(*page) : Expected<DcgmPage>(DcgmPage{});
  EXPECT_TRUE(read) << (read ? "" : read.error().message);
  return read ? *read : DcgmPage{};
}

// The page as the source reads it, streamed; checked against the whole-page read.
DcgmPage Read(const std::string& text) {
  auto streamed = ReadDcgmText(text);
  EXPECT_TRUE(streamed) << (streamed ? "" : streamed.error().message);
  if (!streamed) return DcgmPage{};
  EXPECT_EQ(*streamed, Whole(text));
  return *streamed;
}

// Fed in two pieces, cut at `at`.
Expected<DcgmPage> Split(const std::string& text, size_t at,
                         size_t max_line = prom::kMaxLineBytes) {
  DcgmPageReader reader(max_line);
  (void)reader.Feed(std::string_view(text).substr(0, at));
  (void)reader.Feed(std::string_view(text).substr(at));
  return reader.Finish();
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

constexpr const char* kBadSeriesPage =
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 0.5\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"one\"} 0.5\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"3\"} NaN\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"4\"} -0.1\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-x\",GPU_I_ID=\"5\"} 0\n";

TEST(DcgmPage, BadSeriesAreSkippedAndNamed) {
  const auto p = Read(kBadSeriesPage);
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
constexpr const char* kDramPage = R"(# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID="GPU-a100",GPU_I_ID="1",hostname="n"} 0.7
# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-a100",GPU_I_ID="1",hostname="n"} 0.42
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-a100",GPU_I_ID="2",hostname="n"} 0.2
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-whole",hostname="n"} 1.5
DCGM_FI_PROF_DRAM_ACTIVE{UUID="GPU-a100",GPU_I_ID="x",hostname="n"} 0.1
# TYPE DCGM_FI_PROF_DRAM_UTIL_RATIO gauge
DCGM_FI_PROF_DRAM_UTIL_RATIO{UUID="GPU-a100",GPU_I_ID="2",hostname="n"} 0.25
)";

TEST(DcgmPage, DramActiveUnderBothNamesBesideActivity) {
  const auto p = Read(kDramPage);
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

// Every page above, cut at every byte (inside a line, a label value, a UTF-8 sequence): the
// reading is the whole page's.
TEST(DcgmPageReader, EveryChunkBoundaryReadsAsTheWholePage) {
  const std::string utf8 =
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-u\",modelName=\"H100 \xe2\x80\x94 "
      "\xf0\x9f\x9a\x80\",hostname=\"n\xc3\xb6"
      "de\"} 0.25\r\n";
  for (const std::string& text : {std::string(kOldPage), std::string(kNewPage),
                                  std::string(kDramPage), std::string(kBadSeriesPage), utf8}) {
    const auto whole = Whole(text);
    ASSERT_FALSE(whole.gpu_fingerprint.empty());
    for (size_t k = 1; k < text.size(); ++k) {
      const auto p = Split(text, k);
      ASSERT_TRUE(p) << k << ": " << p.error().message;
      ASSERT_EQ(*p, whole) << "cut at " << k << " of\n" << text;
    }
  }
}

// Other families (no UUID: another exporter's series, repeats and all) leave nothing but their
// count: the reading is the one of the page without them.
TEST(DcgmPageReader, OtherFamiliesAreDropped) {
  std::string text = "# TYPE node_cpu_seconds_total counter\n";
  std::string line;
  std::istringstream lines(kNewPage);
  size_t others = 0;
  while (std::getline(lines, line)) {
    text += line + "\n";
    for (int i = 0; i < 200; ++i, ++others)
      text += "node_cpu_seconds_total{cpu=\"" + std::to_string(i) + "\",mode=\"idle\"} 1.5\n";
    text += "go_goroutines 12\n";  // the same series again: not checked, not kept
    ++others;
  }
  auto streamed = ReadDcgmText(text);
  ASSERT_TRUE(streamed) << streamed.error().message;
  auto expected = Read(kNewPage);
  EXPECT_EQ(streamed->samples, expected.samples + others);
  expected.samples = streamed->samples;
  EXPECT_EQ(*streamed, expected);
}

// A series of an activity field written twice is refused, as a whole page refused it.
TEST(DcgmPageReader, ARepeatedActivitySeriesIsAnError) {
  const std::string line = "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-a\",GPU_I_ID=\"1\"} 0.5\n";
  const auto p = ReadDcgmText(line + "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-a\"} 80\n" + line);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message,
            "line 3: series DCGM_FI_PROF_GR_ENGINE_ACTIVE repeats the one on line 1 with the "
            "same labels");
}

// A line over the cap names its line and start, wherever the page is cut.
TEST(DcgmPageReader, ALineOverTheCapIsAnError) {
  const std::string text = std::string(kNewPage) + "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-a100\"," +
                           "pod=\"" + std::string(300, 'p') + "\"} 1\n";
  for (size_t k = 1; k < text.size(); k += 7) {
    const auto p = Split(text, k, 256);
    ASSERT_FALSE(p) << k;
    EXPECT_EQ(p.error().message.find("line 6: longer than 256 bytes (refused): "
                                     "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-a100\",pod=\"ppp"),
              0u)
        << k << ": " << p.error().message;
  }
}

// A page with more GPUs or activity series than one node's exporter writes (a federation, an
// aggregator) is refused at the line that passes the cap: what a read keeps stays bounded.
TEST(DcgmPageReader, APageOfManyNodesIsRefusedPastOneNodesShare) {
  std::string gpus;
  for (size_t i = 0; i <= kMaxPageGpus; ++i)
    gpus += "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-" + std::to_string(i) + "\"} 80\n";
  const auto p = ReadDcgmText(gpus);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message,
            "line 257: more than 256 GPUs on the page: not one node's "
            "dcgm-exporter (refused)");
  std::string series;
  for (size_t i = 0; i <= kMaxActivitySeries; ++i)
    series +=
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-a\",pod=\"p" + std::to_string(i) + "\"} 0.5\n";
  const auto q = ReadDcgmText(series);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().message,
            "line 16385: more than 16384 activity series on the page: not one "
            "node's dcgm-exporter (refused)");
  std::string hosts;
  for (int i = 0; i < 40; ++i)
    hosts += "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-a\",Hostname=\"h" + std::to_string(i) + "\"} 1\n";
  const auto h = ReadDcgmText(hosts);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->hosts.size(), kMaxHosts);
  EXPECT_TRUE(h->more_hosts);
  EXPECT_TRUE(h->gpu_fields);
}

}  // namespace
}  // namespace gpumeter::dcgm
