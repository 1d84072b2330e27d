// Guardrails end to end, one scenario per finding (tests/scenarios/guard/): the real pipeline over
// the fake NVML, a fake kubelet on a socket, a /proc tree with each process's environment and the
// pods, for ten minutes of scenario time in one-minute passes. Each scenario must give exactly
// its findings — a clean node none — and no variable but NVIDIA_* / CUDA_* may reach any output.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "app/tests/scenario_pipeline.h"
#include "common/text_cell.h"
#include "core/guard/finding_json.h"
#include "sinks/metrics/exposition.h"
#include "sinks/metrics/json_api.h"

namespace gpumeter::app {
namespace {

using guard::Kind;
using guard::Severity;

constexpr const char* kG0 = "GPU-9a000000-0000-4000-8000-000000000000";
constexpr const char* kG1 = "GPU-9a000001-0000-4000-8000-000000000001";

std::string Path(const std::string& name) {
  return gpumeter::testing::SourceDir() + "/tests/scenarios/guard/" + name + ".yaml";
}

// (kind, namespace/pod/container or process, unit)
using Seen = std::set<std::tuple<std::string, std::string, std::string>>;

struct Run {
  std::shared_ptr<const node::NodeState> state;
  Seen seen;
  std::string metrics, api;
};

Run RunScenario(const std::string& name, double minutes = 10) {
  static const auto pricing =
      cost::Pricing::Parse("currency: USD\ngpu_models:\n  H100: 3.00\n", "test-pricing.yaml");
  EXPECT_TRUE(pricing);
  testing::ScenarioPipeline p(Path(name), 0, [&](node::PipelineOptions& o) {
    o.guard.idle_window_s = 300;
    o.pricing = &*pricing;
  });
  Run r;
  EXPECT_TRUE(p.ok());
  if (!p.ok()) return r;
  std::shared_ptr<const gpu::SampleResult> last;
  for (int k = 0; k <= minutes; ++k) last = p.Pass(60.0 * k);
  r.state = p.Latest();
  for (const auto& f : r.state->findings)
    r.seen.insert({guard::ToString(f.kind),
                   f.pod.empty() ? f.process : f.ns + "/" + f.pod + "/" + f.container,
                   f.unit_uuid});
  gpu::SamplerHealth health;
  health.latest = health.last_good = last;
  r.metrics = metrics::RenderText(metrics::BuildFamilies(health, *r.state, {}, last->taken));
  r.api = metrics::FindingsJson(*r.state).dump();
  return r;
}

TEST(GuardScenarios, ACleanNodeHasNoFinding) {
  const auto r = RunScenario("clean");
  ASSERT_TRUE(r.state);
  for (const auto& f : r.state->findings)
    ADD_FAILURE() << guard::ToString(f.kind) << ": " << f.evidence;
  for (const auto& [key, n] : r.state->findings_opened)
    EXPECT_EQ(n, 0u) << guard::ToString(key.first);
  EXPECT_EQ(r.metrics.find("gpumeter_finding_first_seen_timestamp_seconds{"), std::string::npos);
  EXPECT_NE(r.metrics.find("gpumeter_findings_opened_total{node=\"gpu-node-clean\",kind="
                           "\"unallocated-device\",severity=\"critical\"} 0"),
            std::string::npos);
}

TEST(GuardScenarios, TheLeakIsUseOfGpusAllocatedToAnotherPod) {
  const auto r = RunScenario("leak");
  ASSERT_TRUE(r.state);
  const Seen want{{"unallocated-device", "sandbox/debug/shell", kG0},
                  {"unallocated-device", "sandbox/debug/shell", kG1},
                  {"no-gpu-request", "sandbox/debug/shell", ""},
                  {"visible-devices-all", "sandbox/debug/shell", ""}};
  EXPECT_EQ(r.seen, want);
  for (const auto& f : r.state->findings) {
    EXPECT_EQ(f.node, "gpu-node-leak");
    EXPECT_EQ(f.first_seen, 1796083200 + 0.0)
        << guard::ToString(f.kind) << " seen from the first pass";
    EXPECT_EQ(f.last_seen, 1796083200 + 600.0);
    if (f.kind == Kind::kUnallocatedDevice) {
      EXPECT_EQ(f.severity, Severity::kCritical);
      EXPECT_NE(f.evidence.find("allocated to vision/train-0/trainer"), std::string::npos)
          << f.evidence;
      EXPECT_NE(f.evidence.find("4.0 GiB"), std::string::npos) << f.evidence;
    }
  }
  EXPECT_NE(
      r.metrics.find(
          "gpumeter_finding_first_seen_timestamp_seconds{node=\"gpu-node-leak\",kind=\"unallocated-"
          "device\","
          "severity=\"critical\",namespace=\"sandbox\",pod=\"debug\",container=\"shell\",unit=\"" +
          std::string(kG0) + "\",gpu_uuid=\"" + kG0 + "\",process=\"\"} 1796083200"),
      std::string::npos)
      << r.metrics;
  EXPECT_NE(r.metrics.find("gpumeter_findings_opened_total{node=\"gpu-node-leak\",kind="
                           "\"unallocated-device\",severity=\"critical\"} 2"),
            std::string::npos);
}

TEST(GuardScenarios, ASecretInTheEnvironmentNeverLeavesTheAgent) {
  const auto r = RunScenario("leak");
  ASSERT_TRUE(r.state);
  // The canary is in /proc/<pid>/environ beside NVIDIA_VISIBLE_DEVICES (the fixture writes it).
  for (const std::string canary :
       {"gpumeter-canary", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "wJalrXUtnFEMI"}) {
    EXPECT_EQ(r.metrics.find(canary), std::string::npos) << canary << " in /metrics";
    EXPECT_EQ(r.api.find(canary), std::string::npos) << canary << " in /api/v1/findings";
    EXPECT_EQ(metrics::ProcessesJson(*r.state).dump().find(canary), std::string::npos)
        << canary << " in /api/v1/processes";
    for (const auto& f : r.state->findings)
      EXPECT_EQ(f.evidence.find(canary), std::string::npos) << canary << " in " << f.evidence;
  }
}

TEST(GuardScenarios, VisibleDevicesNamingAGpuOutsideTheAllocation) {
  const auto r = RunScenario("visible-outside");
  ASSERT_TRUE(r.state);
  EXPECT_EQ(r.seen, (Seen{{"visible-devices-outside", "team-a/job-a/main", ""}}));
  ASSERT_EQ(r.state->findings.size(), 1u);
  EXPECT_NE(r.state->findings[0].evidence.find("names " + std::string(kG1) +
                                               " outside its allocation (" + kG0 + ")"),
            std::string::npos)
      << r.state->findings[0].evidence;
}

TEST(GuardScenarios, AHostProcessOutsideAnyPod) {
  const auto r = RunScenario("host-process");
  ASSERT_TRUE(r.state);
  EXPECT_EQ(r.seen, (Seen{{"host-process", "gpu-burn", kG0}}))
      << "the MPS server (nvidia-cuda-mps in /proc) is expected";
  EXPECT_NE(r.metrics.find("process=\"gpu-burn\""), std::string::npos);
}

// Command names that are not UTF-8 (hostile-names.yaml): the two that read the same once made
// valid are one finding, the name the kernel cut inside a character another; /metrics is valid
// UTF-8, and the findings themselves are (the API's strict dump in RunScenario would throw).
TEST(GuardScenarios, HostProcessNamesThatAreNotUtf8) {
  const auto r = RunScenario("hostile-names");
  ASSERT_TRUE(r.state);
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(r.seen, (Seen{{"host-process", fffd + fffd + "gpu-burn", kG0},
                          {"host-process", "tensor-worker-" + fffd, kG0}}));
  EXPECT_EQ(ValidUtf8(r.metrics, r.metrics.size()), r.metrics) << "/metrics is not UTF-8";
  EXPECT_NE(r.metrics.find("process=\"" + fffd + fffd + "gpu-burn\"} "), std::string::npos);
  EXPECT_NE(r.metrics.find("process=\"tensor-worker-" + fffd + "\"} "), std::string::npos);
  EXPECT_NE(r.api.find("tensor-worker-" + fffd), std::string::npos) << r.api;
}

TEST(GuardScenarios, AnIdleAllocationWithItsCost) {
  const auto r = RunScenario("idle");
  ASSERT_TRUE(r.state);
  EXPECT_EQ(r.seen, (Seen{{"idle-allocation", "research/notebook/jupyter", kG0}}));
  ASSERT_EQ(r.state->findings.size(), 1u);
  const auto& f = r.state->findings[0];
  // Ten one-minute intervals idle, a whole H100 at 3.00 USD per GPU-hour: 1/6 GPU-hour, 0.50 USD.
  ASSERT_TRUE(f.waste_gpu_hours && f.waste_cost);
  EXPECT_NEAR(*f.waste_gpu_hours, 600.0 / 3600, 1e-9);
  EXPECT_NEAR(*f.waste_cost, 0.50, 1e-9);
  EXPECT_EQ(f.currency, "USD");
  // Opened once the window (5 minutes) was reached: at the pass of minute 5.
  EXPECT_EQ(f.first_seen, 1796083200 + 300.0);
  EXPECT_NE(
      r.metrics.find(
          "gpumeter_finding_waste_gpu_seconds{node=\"gpu-node-idle\",kind=\"idle-allocation\""),
      std::string::npos);
  EXPECT_NE(r.metrics.find("currency=\"USD\"} 0.5"), std::string::npos) << r.metrics;
  // Four minutes are not the window yet.
  EXPECT_TRUE(RunScenario("idle", 4).seen.empty());
}

TEST(GuardScenarios, ASharedGpuNearOutOfMemory) {
  const auto r = RunScenario("oom");
  ASSERT_TRUE(r.state);
  EXPECT_EQ(r.seen, (Seen{{"oom-risk", "", kG0}}));
  ASSERT_EQ(r.state->findings.size(), 1u);
  EXPECT_NE(r.state->findings[0].evidence.find("llm/big-0/vllm 39.1 GiB, llm/big-1/vllm 36.1 GiB"),
            std::string::npos)
      << r.state->findings[0].evidence;
}

TEST(GuardScenarios, MpsClientsWithoutLimits) {
  const auto r = RunScenario("mps-no-limits");
  ASSERT_TRUE(r.state);
  EXPECT_EQ(r.seen, (Seen{{"mps-no-limits", "llm/chat-0/vllm", kG0}}));
}

TEST(GuardScenarios, FindingsRoundTripThroughTheApi) {
  const auto r = RunScenario("leak");
  ASSERT_TRUE(r.state);
  const auto j = metrics::FindingsJson(*r.state);
  EXPECT_TRUE(j.at("checked").get<bool>());
  ASSERT_EQ(j.at("findings").size(), r.state->findings.size());
  for (size_t i = 0; i < r.state->findings.size(); ++i) {
    const auto back = guard::FindingFromJson(j.at("findings")[i]);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->evidence, r.state->findings[i].evidence);
    EXPECT_EQ(back->kind, r.state->findings[i].kind);
    EXPECT_EQ(back->first_seen, r.state->findings[i].first_seen);
  }
  auto broken = j.at("findings")[0];
  broken.erase("severity");
  const auto bad = guard::FindingFromJson(broken);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "finding field 'severity' is missing or not a string");
}

}  // namespace
}  // namespace gpumeter::app
