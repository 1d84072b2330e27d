// /metrics for a fixed scenario and clock, against a committed golden file
// (tests/golden/node-8gpu-r580.prom; `promtool check metrics` runs on it too). The whole pipeline
// runs: fake NVML through the loader, a fake kubelet over gRPC, a /proc tree, the pods. Sources
// whose figures are wall-clock durations are replaced by fixed ones (pods), and the clock of every
// pass is set by the test. Regenerate after an intended change with GPUMETER_UPDATE_GOLDEN=1 and
// review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/scenario_context.h"
#include "cli/scenario_fixture.h"
#include "cli/simulated_node.h"
#include "kubelet/pod_resources_source.h"
#include "metrics/exposition.h"
#include "node/pipeline.h"
#include "scenario/loader.h"
#include "support/fake_nvml.h"
#include "support/temp_dir.h"

namespace gpumeter::cli {
namespace {

class FixedPods final : public node::PodSource {
 public:
  explicit FixedPods(const std::string& list) {
    auto store = std::make_shared<k8s::PodStore>();
    ok_ = store->ApplyList(list).has_value();
    store_ = std::move(store);
  }
  void Poll(std::chrono::steady_clock::time_point) override {}
  std::shared_ptr<const k8s::PodStore> Current() const override { return store_; }
  node::SourceStatus Status() const override { return {"pods", true, ok_, std::nullopt, 1, 0, std::nullopt, "", "fixed"}; }

 private:
  bool ok_ = false;
  std::shared_ptr<const k8s::PodStore> store_;
};

// The kubelet's List duration is wall-clock time, the one figure a fixed clock cannot fix: its
// value is masked on both sides (the series must still be there).
std::string MaskDurations(const std::string& text) {
  static const std::regex duration(R"((gpumeter_source_duration_seconds\{node="[^"]*",source="kubelet"\}) \S+)");
  return std::regex_replace(text, duration, "$1 <duration>");
}

TEST(GoldenMetrics, Node8GpuAtAFixedClock) {
  auto scen = scenario::LoadScenarioFile(gpumeter::testing::ScenarioPath("node-8gpu"));
  ASSERT_TRUE(scen) << scen.error().message;
  gpumeter::testing::TempDir dir("gpumeter-golden");
  auto node = SimulatedNode::Create(*scen, dir.path());
  ASSERT_TRUE(node) << node.error().message;
  kubelet::PodResourcesOptions ko;
  ko.socket_path = (*node)->kubelet_socket();
  kubelet::PodResourcesSource kubelet(std::make_unique<kubelet::PodResourcesClient>(ko));
  FixedPods pods(ScenarioPodListJson(*scen));
  node::PipelineOptions po;
  po.node = scen->node_name;
  po.proc_root = (*node)->proc_root();
  po.evidence = ScenarioSharingEvidence(*scen);
  po.evidence.mig_parent.clear();
  node::NodePipeline pipeline({&kubelet, &pods, nullptr}, po);

  gpumeter::testing::FakeNvml fake("r580", gpumeter::testing::ScenarioPath("node-8gpu"), 100);
  ASSERT_TRUE(fake.ok());
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  std::shared_ptr<const sampler::SampleResult> last;
  for (int k = 0; k <= 4; ++k) {
    const double t = 100 + k;
    fake.SetTime(t);
    ASSERT_TRUE((*node)->RefreshProc(t));
    auto r = std::make_shared<sampler::SampleResult>();
    r->sequence = static_cast<uint64_t>(k + 1);
    r->taken = t0 + std::chrono::seconds(k);
    r->duration_seconds = 0.004;
    r->ok = true;
    r->snapshot = fake.Sample();
    pipeline.OnPass(r);
    last = r;
  }
  sampler::SamplerHealth health;
  health.latest = health.last_good = last;
  health.passes = 5;
  metrics::ExpositionOptions eo;
  eo.pod_label_keys = {"team"};
  const auto text = metrics::RenderText(metrics::BuildFamilies(health, *pipeline.Latest(), eo, last->taken + std::chrono::milliseconds(500)));

  const std::string golden = gpumeter::testing::SourceDir() + "/tests/golden/node-8gpu-r580.prom";
  if (std::getenv("GPUMETER_UPDATE_GOLDEN")) {
    std::ofstream(golden) << text;
    GTEST_SKIP() << "wrote " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden << " missing: run with GPUMETER_UPDATE_GOLDEN=1";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(MaskDurations(text), MaskDurations(ss.str())) << "/metrics differs from " << golden
                            << "; if the change is intended, regenerate with GPUMETER_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace
}  // namespace gpumeter::cli
