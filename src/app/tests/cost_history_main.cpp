// Test tool: the agent's node pipeline over a scenario for a long stretch of scenario time at a
// clock the tool sets (ScenarioPipeline: fake NVML through the loader, a fake kubelet over gRPC,
// /proc, pods), priced under a policy, writing what a Prometheus scraping it every STEP seconds
// would have stored — one OpenMetrics file of timestamped samples, for `promtool tsdb
// create-blocks-from openmetrics` — and what the agent's --store would have recorded (SQLite),
// for `gpumeter report`. Used by cost_day_test.sh.
// Usage: gpumeter_cost_history SCENARIO HOURS STEP_S IDLE_RULE OUT.om STORE.db
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/tests/scenario_pipeline.h"
#include "sinks/metrics/exposition.h"
#include "store/writer/store_keeper.h"
#include "store/writer/usage_recorder.h"

namespace {

using gpumeter::app::testing::kWall0;

// One scrape's OpenMetrics page as blocks per family: its comment lines, then its samples.
struct Family {
  std::vector<std::string> header;
  std::vector<std::string> samples;  // each with " <timestamp>" appended
};

void AddScrape(const std::string& page, double unix_s, std::vector<std::string>& order,
               std::map<std::string, Family>& families) {
  std::string current;
  size_t pos = 0;
  while (pos < page.size()) {
    const size_t end = page.find('\n', pos);
    const std::string line = page.substr(pos, end == std::string::npos ? end : end - pos);
    pos = end == std::string::npos ? page.size() : end + 1;
    if (line.empty() || line == "# EOF") continue;
    if (line.starts_with("# ")) {
      const size_t a = line.find(' ', 2), b = line.find(' ', a + 1);
      const std::string name = line.substr(a + 1, b - a - 1);
      // What a cost query and a report's usage read (OpenMetrics family names: counters without
      // _total, info families without _info); the rest would make the day's file hundreds of MB.
      static const std::set<std::string> kept{"gpumeter_cost",
                                              "gpumeter_unit_cost",
                                              "gpumeter_unit",
                                              "gpumeter_node",
                                              "gpumeter_unit_seconds",
                                              "gpumeter_unit_memory_capacity_byte_seconds",
                                              "gpumeter_unit_energy_joules",
                                              "gpumeter_unit_gpu_share_ratio",
                                              "gpumeter_memory_byte_seconds",
                                              "gpumeter_compute_seconds",
                                              "gpumeter_energy_joules",
                                              "gpumeter_requested_share_seconds",
                                              "gpumeter_compute_unknown_seconds",
                                              "gpumeter_compute_bound_seconds"};
      if (!kept.count(name)) {
        current.clear();
        continue;
      }
      if (!families.count(name)) order.push_back(name);
      auto& f = families[name];
      current = name;
      if (f.header.size() < 3 &&
          std::find(f.header.begin(), f.header.end(), line) == f.header.end())
        f.header.push_back(line);
      continue;
    }
    if (!current.empty())
      families[current].samples.push_back(line + fmt::format(" {:.3f}", unix_s));
  }
}

// The tool's arguments (ScenarioPipeline runs inside a gtest test: its fixtures name
// themselves after the running test).
struct Args {
  std::string scenario, out, store;
  double hours = 0, step = 0;
  gpumeter::cost::IdleRule idle = gpumeter::cost::IdleRule::kSeparate;
};
Args& TheArgs() {
  static Args args;  // set once by main before the test runs
  return args;
}

TEST(CostHistory, Write) {
  const Args& a = TheArgs();
  const auto pricing = gpumeter::cost::Pricing::Defaults();
  gpumeter::cost::Policy policy;
  policy.idle = a.idle;
  gpumeter::app::testing::ScenarioPipeline run(a.scenario, 0,
                                               [&](gpumeter::node::PipelineOptions& po) {
                                                 po.pricing = &pricing;
                                                 po.cost_policy = policy;
                                               });
  ASSERT_TRUE(run.ok());
  gpumeter::app::StoreKeeper keeper(
      {a.store, {}, std::chrono::seconds(5), std::chrono::seconds(1), std::chrono::seconds(60)});
  ASSERT_TRUE(keeper.Ensure(gpumeter::app::StoreKeeper::Clock::now()));
  gpumeter::app::UsageRecorder recorder(keeper);
  std::vector<std::string> order;
  std::map<std::string, Family> families;
  const double wall0 = std::chrono::duration<double>(kWall0.time_since_epoch()).count();
  // Passes about every 5 s of scenario time at odd offsets; a scrape every `step` seconds.
  double next_scrape = 0;
  int k = 0;
  for (double t = 0; t <= a.hours * 3600; t += 5 + 0.013 * (k++ % 7)) {
    const auto pass = run.Pass(t);
    const auto state = run.Latest();
    recorder.Record(*state);
    if (t < next_scrape) continue;
    gpumeter::gpu::SamplerHealth h;
    h.latest = h.last_good = pass;
    h.passes = state->passes;
    gpumeter::metrics::ExpositionOptions eo;
    eo.process_series = false;
    AddScrape(gpumeter::metrics::RenderOpenMetrics(
                  gpumeter::metrics::BuildFamilies(h, *state, eo, pass->taken)),
              wall0 + t, order, families);
    next_scrape += a.step;
  }
  ASSERT_EQ(recorder.Flush(std::chrono::seconds(10)), 0u);
  std::ofstream out(a.out);
  for (const auto& name : order) {
    const auto& f = families[name];
    for (const auto& line : f.header) out << line << '\n';
    for (const auto& line : f.samples) out << line << '\n';
  }
  out << "# EOF\n";
  ASSERT_TRUE(out.good()) << a.out;
  std::printf("%.0f %.0f\n", wall0, wall0 + a.hours * 3600);  // the data's first and last second
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s SCENARIO HOURS STEP_S IDLE_RULE OUT.om STORE.db\n", argv[0]);
    return 2;
  }
  auto& a = TheArgs();
  a.scenario = argv[1], a.out = argv[5], a.store = argv[6];
  a.hours = std::atof(argv[2]), a.step = std::atof(argv[3]);
  const auto idle = gpumeter::cost::ParseIdleRule(argv[4]);
  if (a.hours <= 0 || a.step <= 0 || !idle) {
    std::fprintf(stderr, "bad HOURS, STEP_S or IDLE_RULE\n");
    return 2;
  }
  a.idle = *idle;
  int gtest_argc = 1;
  ::testing::InitGoogleTest(&gtest_argc, argv);
  ::testing::GTEST_FLAG(brief) = true;
  return RUN_ALL_TESTS();
}
