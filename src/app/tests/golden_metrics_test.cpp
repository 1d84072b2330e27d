// /metrics for a fixed scenario and clock, against committed golden files: the default set of
// per-container series (tests/golden/node-8gpu-r580.prom) and the full set
// (node-8gpu-r580-full.prom, --container-series full); `promtool check metrics` runs on both. The
// whole pipeline runs: fake NVML through the loader, a fake kubelet over gRPC, a /proc tree, the
// pods. Sources whose figures are wall-clock durations are replaced by fixed ones (pods), and the
// clock of every pass is set by the test. Regenerate after an intended change with
// GPUMETER_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "app/tests/scenario_pipeline.h"
#include "sinks/metrics/exposition.h"

namespace gpumeter::app {
namespace {

// The kubelet's List duration is wall-clock time, the one figure a fixed clock cannot fix: its
// value is masked on both sides (the series must still be there).
std::string MaskDurations(const std::string& text) {
  static const std::regex duration(
      R"((gpumeter_source_duration_seconds\{node="[^"]*",source="kubelet"\}) \S+)");
  return std::regex_replace(text, duration, "$1 <duration>");
}

void ExpectGolden(metrics::ContainerSeries set, const std::string& file) {
  // Priced by the default tables (node-8gpu's Node says p5.48xlarge), as the agent is by default.
  const auto pricing = cost::Pricing::Defaults();
  testing::ScenarioPipeline run(gpumeter::testing::ScenarioPath("node-8gpu"), 100,
                                [&pricing](node::PipelineOptions& po) { po.pricing = &pricing; });
  ASSERT_TRUE(run.ok());
  std::shared_ptr<const gpu::SampleResult> last;
  for (int k = 0; k <= 4; ++k) last = run.Pass(100 + k);
  gpu::SamplerHealth health;
  health.latest = health.last_good = last;
  health.passes = 5;
  metrics::ExpositionOptions eo;
  eo.pod_label_keys = {"team"};
  eo.container_series = set;
  const auto text = metrics::RenderText(metrics::BuildFamilies(
      health, *run.Latest(), eo, last->taken + std::chrono::milliseconds(500)));

  const std::string golden = gpumeter::testing::SourceDir() + "/tests/golden/" + file;
  if (std::getenv("GPUMETER_UPDATE_GOLDEN")) {
    std::ofstream(golden) << text;
    GTEST_SKIP() << "wrote " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden << " missing: run with GPUMETER_UPDATE_GOLDEN=1";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(MaskDurations(text), MaskDurations(ss.str()))
      << "/metrics differs from " << golden
      << "; if the change is intended, regenerate with GPUMETER_UPDATE_GOLDEN=1 and review the "
         "diff";
}

TEST(GoldenMetrics, Node8GpuAtAFixedClock) {
  ExpectGolden(metrics::ContainerSeries::kDefault, "node-8gpu-r580.prom");
}

TEST(GoldenMetrics, Node8GpuAtAFixedClockFullSet) {
  ExpectGolden(metrics::ContainerSeries::kFull, "node-8gpu-r580-full.prom");
}

}  // namespace
}  // namespace gpumeter::app
