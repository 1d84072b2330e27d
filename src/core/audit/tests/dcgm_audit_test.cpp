// dcgm-exporter pages written from its documented label shapes (incumbents reference §1.5, §1.7):
// the default mode (one pod per GPU), the virtual-GPU mode (a full-value copy per pod with a vgpu
// label), the per-process mode (per-pod FB_USED and GPU_UTIL beside the device series, every
// other metric copied), MIG labels and the old label names; each with its inflation factor.
#include "core/audit/dcgm_audit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace gpumeter::audit {
namespace {

std::string Series(const std::string& metric, const std::string& gpu, const std::string& extra,
                   double v) {
  return metric + "{gpu=\"" + gpu + "\",UUID=\"GPU-" + gpu + "\",pci_bus_id=\"00000000:0" + gpu +
         ":00.0\",device=\"nvidia" + gpu +
         "\",modelName=\"NVIDIA H100 80GB "
         "HBM3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"580.65.06\"" +
         extra + "} " + std::to_string(v) + "\n";
}
std::string Pod(const std::string& ns, const std::string& pod, int vgpu = -1) {
  return ",container=\"main\",namespace=\"" + ns + "\",pod=\"" + pod + "\"" +
         (vgpu >= 0 ? ",vgpu=\"" + std::to_string(vgpu) + "\"" : "");
}

// The page parsed whole (every series checked for repeats), then audited.
DcgmAudit Whole(const std::string& text) {
  auto page = ParsePromText(text);
  EXPECT_TRUE(page) << page.error().message;
  return page ? AuditDcgmPage(*page) : DcgmAudit{};
}

// Fed in two pieces, cut at `at`.
Expected<DcgmAudit> Split(const std::string& text, size_t at,
                          size_t max_line = prom::kMaxLineBytes) {
  DcgmPageAuditor auditor(1.01, max_line);
  (void)auditor.Feed(std::string_view(text).substr(0, at));
  (void)auditor.Feed(std::string_view(text).substr(at));
  return auditor.Finish();
}

// The page as `audit` reads it, streamed; checked against the whole-page audit.
DcgmAudit Audit(const std::string& text) {
  auto streamed = Split(text, text.size() / 2);
  EXPECT_TRUE(streamed) << streamed.error().message;
  if (!streamed) return DcgmAudit{};
  EXPECT_EQ(*streamed, Whole(text));
  return *streamed;
}

// GPU 0 time-sliced by three pods, every series copied at the full device value; GPU 1 alone.
std::string VirtualGpuPage() {
  std::string page = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  for (int i = 0; i < 3; ++i) {
    page += Series("DCGM_FI_DEV_GPU_UTIL", "0", Pod("ml", "p" + std::to_string(i), i), 90);
    page += Series("DCGM_FI_DEV_FB_USED", "0", Pod("ml", "p" + std::to_string(i), i), 60000);
    page += Series("DCGM_FI_DEV_POWER_USAGE", "0", Pod("ml", "p" + std::to_string(i), i), 500);
    page += Series("DCGM_FI_DEV_GPU_TEMP", "0", Pod("ml", "p" + std::to_string(i), i), 60);
  }
  return page + Series("DCGM_FI_DEV_GPU_UTIL", "1", "", 10);
}

const MetricInflation* Metric(const GpuAudit& g, const std::string& name) {
  for (const auto& m : g.metrics)
    if (m.metric == name) return &m;
  return nullptr;
}

TEST(DcgmAudit, VirtualGpuModeCopiesTheDeviceIntoEveryPod) {
  const auto a = Audit(VirtualGpuPage());
  EXPECT_NE(a.mode.find("virtual GPUs"), std::string::npos) << a.mode;
  ASSERT_EQ(a.gpus.size(), 1u);
  const auto& g = a.gpus[0];
  EXPECT_TRUE(g.inflated);
  EXPECT_DOUBLE_EQ(g.worst_factor, 3.0);
  EXPECT_EQ(g.pods.size(), 3u);
  ASSERT_NE(Metric(g, "DCGM_FI_DEV_FB_USED"), nullptr);
  EXPECT_DOUBLE_EQ(Metric(g, "DCGM_FI_DEV_FB_USED")->pods_sum, 180000);
  EXPECT_DOUBLE_EQ(Metric(g, "DCGM_FI_DEV_FB_USED")->device_value, 60000);
  EXPECT_FALSE(Metric(g, "DCGM_FI_DEV_FB_USED")->device_series);
  EXPECT_EQ(Metric(g, "DCGM_FI_DEV_GPU_TEMP"), nullptr) << "temperatures are not additive";
}

TEST(DcgmAudit, PerProcessModeSplitsTwoMetricsAndCopiesTheRest) {
  // Device series kept; FB_USED and GPU_UTIL split per pod (adding up), power and PROF copied.
  std::string page;
  page += Series("DCGM_FI_DEV_FB_USED", "0", "", 40000);
  page += Series("DCGM_FI_DEV_GPU_UTIL", "0", "", 80);
  page += Series("DCGM_FI_DEV_POWER_USAGE", "0", "", 400);
  page += Series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0", "", 0.8);
  const std::pair<const char*, double> pods[] = {{"a", 30000}, {"b", 10000}};
  for (const auto& [pod, mem] : pods) {
    page += Series("DCGM_FI_DEV_FB_USED", "0", Pod("ml", pod, 0), mem);
    page += Series("DCGM_FI_DEV_GPU_UTIL", "0", Pod("ml", pod, 0), mem / 500);
    page += Series("DCGM_FI_DEV_POWER_USAGE", "0", Pod("ml", pod, 0), 400);
    page += Series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0", Pod("ml", pod, 0), 0.8);
  }
  const auto a = Audit(page);
  ASSERT_EQ(a.gpus.size(), 1u);
  const auto& g = a.gpus[0];
  EXPECT_NEAR(Metric(g, "DCGM_FI_DEV_FB_USED")->factor, 1.0, 1e-12);
  EXPECT_NEAR(Metric(g, "DCGM_FI_DEV_GPU_UTIL")->factor, 1.0, 1e-12);
  EXPECT_NEAR(Metric(g, "DCGM_FI_DEV_POWER_USAGE")->factor, 2.0, 1e-12);
  EXPECT_NEAR(Metric(g, "DCGM_FI_PROF_GR_ENGINE_ACTIVE")->factor, 2.0, 1e-12);
  EXPECT_TRUE(Metric(g, "DCGM_FI_DEV_POWER_USAGE")->device_series);
  EXPECT_TRUE(g.inflated);
  EXPECT_DOUBLE_EQ(g.worst_factor, 2.0);
}

TEST(DcgmAudit, DefaultModeLabelsOnePodAndIsNotInflated) {
  // Default mode: the last writer wins, one pod per GPU; the sum equals the device.
  const std::string page = Series("DCGM_FI_DEV_GPU_UTIL", "0", Pod("ml", "only"), 70) +
                           Series("DCGM_FI_DEV_FB_USED", "0", Pod("ml", "only"), 1000);
  const auto a = Audit(page);
  EXPECT_NE(a.mode.find("default"), std::string::npos) << a.mode;
  ASSERT_EQ(a.gpus.size(), 1u);
  EXPECT_FALSE(a.gpus[0].inflated);
  EXPECT_DOUBLE_EQ(a.gpus[0].worst_factor, 1.0);
}

TEST(DcgmAudit, MigInstancesAndOldLabelNamesAreTheirOwnGpus) {
  // MIG: GPU_I_ID/GPU_I_PROFILE; older exporters: pod_name/pod_namespace, lower-case uuid/hostname.
  auto mig = [](const std::string& gi, const std::string& pod, double v) {
    return "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",uuid=\"GPU-m\",hostname=\"node-b\",GPU_I_"
           "PROFILE=\"3g.40gb\",GPU_I_ID=\"" +
           gi + "\",pod_name=\"" + pod + "\",pod_namespace=\"ml\",container_name=\"c\"} " +
           std::to_string(v) + "\n";
  };
  const auto a = Audit(mig("1", "x", 0.5) + mig("1", "y", 0.5) + mig("2", "z", 0.2));
  ASSERT_EQ(a.gpus.size(), 2u);
  EXPECT_EQ(a.gpus[0].mig_instance, "1");
  EXPECT_EQ(a.gpus[0].host, "node-b");
  EXPECT_EQ(a.gpus[0].uuid, "GPU-m");
  EXPECT_DOUBLE_EQ(a.gpus[0].worst_factor, 2.0);  // two pods on instance 1, copies
  EXPECT_EQ(a.gpus[0].pods, (std::vector<std::string>{"ml/x", "ml/y"}));
  EXPECT_FALSE(a.gpus[1].inflated);
}

TEST(DcgmAudit, AdditiveMetrics) {
  for (const char* yes :
       {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_PROF_SM_ACTIVE",
        "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_DEV_GPU_UTIL_RATIO", "DCGM_FI_DEV_MEM_COPY_UTIL"})
    EXPECT_TRUE(IsAdditiveDcgmMetric(yes)) << yes;
  for (const char* no : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_FB_FREE",
                         "DCGM_FI_DEV_XID_ERRORS", "up", "gpumeter_compute_ratio"})
    EXPECT_FALSE(IsAdditiveDcgmMetric(no)) << no;
}

// NaN, ±Inf and negative values are not usage: left out of the sums, counted with their lines.
TEST(DcgmAudit, NonFiniteAndNegativeValuesAreUnknownNotSummed) {
  const auto page =
      ParsePromText(Series("DCGM_FI_DEV_FB_USED", "0", "", 1000) +
                    Series("DCGM_FI_DEV_FB_USED", "0", Pod("a", "p1"), 400) +
                    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",pod=\"p2\"} NaN\n" +
                    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",pod=\"p3\"} +Inf\n" +
                    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",pod=\"p4\"} -5\n");
  ASSERT_TRUE(page) << page.error().message;
  const auto a = AuditDcgmPage(*page);
  EXPECT_EQ(a.invalid_samples, 3u);
  EXPECT_EQ(a.invalid_lines, (std::vector<size_t>{3, 4, 5}));
  for (const auto& g : a.gpus)
    for (const auto& m : g.metrics) {
      EXPECT_TRUE(std::isfinite(m.pods_sum)) << m.metric;
      EXPECT_TRUE(std::isfinite(m.factor)) << m.metric;
      EXPECT_GE(m.pods_sum, 0) << m.metric;
    }
}

// Cut at every byte (inside a line, a label value, a UTF-8 sequence), the audit is the whole
// page's.
TEST(DcgmPageAuditor, EveryChunkBoundaryAuditsAsTheWholePage) {
  const std::string text =
      VirtualGpuPage() +
      Series("DCGM_FI_DEV_FB_USED", "2", Pod("\xc3\xa9quipe", "caf\xc3\xa9"), 5) +
      Series("DCGM_FI_DEV_FB_USED", "2", Pod("ml", "\xf0\x9f\x9a\x80"), 7);
  const auto whole = Whole(text);
  ASSERT_EQ(whole.gpus.size(), 2u);
  for (size_t k = 1; k < text.size(); ++k) {
    const auto a = Split(text, k);
    ASSERT_TRUE(a) << k << ": " << a.error().message;
    ASSERT_EQ(*a, whole) << "cut at " << k;
  }
}

// Other families and non-additive ones are counted as samples and dropped; a repeat among them
// costs nothing, a repeated additive series is refused (it would be summed twice).
TEST(DcgmPageAuditor, OnlyAdditiveSeriesAreKeptAndCheckedForRepeats) {
  std::string others;
  for (int i = 0; i < 500; ++i)
    others += "kube_pod_info{namespace=\"ml\",pod=\"p" + std::to_string(i) + "\"} 1\n";
  others += "up 1\nup 1\n" + Series("DCGM_FI_DEV_GPU_TEMP", "0", "", 50) +
            Series("DCGM_FI_DEV_GPU_TEMP", "0", "", 50);
  auto streamed = Split(others + VirtualGpuPage(), 1000);
  ASSERT_TRUE(streamed) << streamed.error().message;
  auto expected = Whole(VirtualGpuPage());
  EXPECT_EQ(streamed->samples, expected.samples + 504);
  expected.samples = streamed->samples;
  EXPECT_EQ(*streamed, expected);
  const std::string line = Series("DCGM_FI_DEV_FB_USED", "0", Pod("a", "p1"), 100);
  const auto twice = Split(line + "up 1\n" + line, 10);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message,
            "line 3: series DCGM_FI_DEV_FB_USED repeats the one on line 1 with the same labels");
}

TEST(DcgmPageAuditor, ALineOverTheCapIsAnError) {
  const std::string text = VirtualGpuPage() + "x{a=\"" + std::string(500, 'a') + "\"} 1\n";
  const auto a = Split(text, 100, 400);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message.find("line 15: longer than 400 bytes (refused): x{a=\"aaa"), 0u)
      << a.error().message;
}

}  // namespace
}  // namespace gpumeter::audit
