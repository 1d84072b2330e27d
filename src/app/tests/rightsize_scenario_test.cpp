// Rightsizing end to end on the demo's 8-GPU node: the real pipeline over the fake NVML writes
// five minutes into a store on disk (UsageRecorder), `Rightsize` reads it back, and every kind of
// recommendation comes out with the savings worked by hand below. Bad input names itself.
#include <gtest/gtest.h>

#include <regex>

#include <fstream>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/agent/rightsize_runner.h"
#include "app/tests/scenario_pipeline.h"
#include "app/usage/rightsize.h"
#include "sinks/metrics/exposition.h"
#include "store/writer/usage_recorder.h"

namespace gpumeter::app {
namespace {

using rightsize::Action;

const rightsize::Recommendation* Find(const std::vector<rightsize::Recommendation>& rs,
                                      const std::string& name) {
  for (const auto& r : rs)
    if (r.key.Name() == name) return &r;
  return nullptr;
}

class RightsizeDemo : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto db = (dir_.path() / "usage.db").string();
    StoreKeeper::Options ko;
    ko.path = db;
    keeper_ = std::make_unique<StoreKeeper>(ko);
    auto opened = keeper_->Ensure(StoreKeeper::Clock::now());
    ASSERT_TRUE(opened && *opened == StoreKeeper::Event::kOpen) << db;
    UsageRecorder recorder(*keeper_);
    testing::ScenarioPipeline run(gpumeter::testing::ScenarioPath("node-8gpu"), 0);
    ASSERT_TRUE(run.ok());
    for (int k = 0; k <= 30; ++k) {  // 300 scenario seconds, a pass every 10 s
      run.Pass(10.0 * k);
      recorder.Record(*run.Latest());
    }
    EXPECT_EQ(recorder.failed(), 0u);
    std::ofstream(dir_.path() / "prices.yaml") << "currency: USD\ngpu_models:\n  H100: 2.00\n";
    options_.source = UsageSource{UsageSource::Kind::kStore, db};
    options_.pricing_file = (dir_.path() / "prices.yaml").string();
    options_.min_history = Seconds(120);
  }
  gpumeter::testing::TempDir dir_{"gpumeter-rightsize"};
  std::unique_ptr<StoreKeeper> keeper_;  // kept open, as the agent keeps its store
  RightsizeOptions options_;
};

TEST_F(RightsizeDemo, EveryKindWithSavingsWorkedByHand) {
  auto rs = Rightsize(options_);
  ASSERT_TRUE(rs) << rs.error().message;
  // One H100-month at 2.00 USD per GPU-hour: 2.00 × 730 h = 1460 USD.
  const double month = 2.00 * 730;

  // reclaim: the forgotten notebook holds a whole H100 and never computes: all of it.
  const auto* notebook = Find(*rs, "research/Pod/forgotten-notebook/jupyter");
  ASSERT_NE(notebook, nullptr);
  EXPECT_EQ(notebook->action, Action::kReclaim) << notebook->reason;
  EXPECT_NEAR(*notebook->monthly_savings, 1460.00, 1e-9);

  // mig: the summarizer holds a 3g.40gb (3/7) and needs 14.6 GiB × 1.15 = 16.8 GiB and 20 % of
  // 3/7 × 1.15 ≈ 10 % of the GPU: a 1g.20gb (2/8 of 78.5 GiB = 19.6 GiB, 1/7). (3/7 − 1/7) × 1460.
  const auto* summarizer = Find(*rs, "llm/Pod/summarizer-0/vllm");
  ASSERT_NE(summarizer, nullptr);
  EXPECT_EQ(summarizer->action, Action::kMig) << summarizer->reason;
  EXPECT_EQ(summarizer->recommended, "MIG 1g.20gb");
  EXPECT_NEAR(*summarizer->monthly_savings, (3.0 / 7 - 1.0 / 7) * month, 1e-9);  // 417.14 USD
  EXPECT_GE(summarizer->memory_target_bytes, 15000.0 * 1024 * 1024 * 1.15 * (1 - 1e-12));

  // share: ETL needs 35.2 GiB × 1.15 = 40.4 GiB, more than any profile below the whole GPU (4/8 =
  // 39.8 GiB); OCR (11.7 GiB, 30 %) is memory-bound: its traffic, 50 % × 1.15, is more than a
  // 3g.40gb's 4/8 of the bandwidth, so no profile below the whole GPU holds it either. Together
  // they fit one (54 GiB, about 70 % of its time, 50 % + 15 % of its memory traffic × 1.15 and a
  // histogram bucket): each gives up half of a GPU.
  const auto* ocr = Find(*rs, "vision/Deployment/ocr/server");
  const auto* etl = Find(*rs, "batch/Pod/etl-0/worker");
  ASSERT_NE(ocr, nullptr);
  ASSERT_NE(etl, nullptr);
  for (const auto* r : {ocr, etl}) {
    EXPECT_EQ(r->action, Action::kShare) << r->key.Name() << ": " << r->reason;
    EXPECT_EQ(r->recommended, "time-slice (or MPS) one GPU with 2 replicas");
    EXPECT_NEAR(*r->monthly_savings, 0.5 * month, 1e-9);  // 730 USD each
  }
  EXPECT_EQ(ocr->share_with, std::vector<std::string>{"batch/Pod/etl-0/worker"});
  ASSERT_TRUE(ocr->traffic_p90.has_value()) << "its memory traffic is measured";
  EXPECT_NEAR(*ocr->traffic_p90, 0.50, 0.05);
  EXPECT_GT(ocr->traffic_target, 4.0 / 8) << "more than a 3g.40gb's bandwidth";

  // keep: the trainer (two GPUs), the chat StatefulSet (two replicas, each half an MPS GPU).
  const auto* trainer = Find(*rs, "vision/Pod/detector-train-0/trainer");
  ASSERT_NE(trainer, nullptr);
  EXPECT_EQ(trainer->action, Action::kKeep);
  EXPECT_DOUBLE_EQ(*trainer->monthly_savings, 0.0);
  const auto* chat = Find(*rs, "llm/StatefulSet/chat/vllm");
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(chat->action, Action::kKeep) << chat->reason;
  EXPECT_EQ(chat->replicas, 2u);
  EXPECT_EQ(chat->pods, (std::vector<std::string>{"chat-0", "chat-1"}));
  // The leaking debug pod holds nothing: nothing to resize.
  EXPECT_EQ(Find(*rs, "sandbox/Pod/debug-shell/shell"), nullptr);

  // With the default minimum history (a day), five minutes say nothing: all keep.
  options_.min_history = Seconds(86400);
  auto day = Rightsize(options_);
  ASSERT_TRUE(day) << day.error().message;
  for (const auto& r : *day) EXPECT_EQ(r.action, Action::kKeep) << r.key.Name();
}

TEST_F(RightsizeDemo, TableAndJson) {
  auto table = RenderRightsize(options_);
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_NE(table->find("total savings per month: 3337.14 USD"), std::string::npos)
      << *table;  // 1460 + 417.14 + 2 × 730
  options_.format = "json";
  auto json = RenderRightsize(options_);
  ASSERT_TRUE(json);
  const auto j = nlohmann::json::parse(*json);
  ASSERT_TRUE(j.at("recommendations").is_array());
  EXPECT_EQ(j.at("recommendations")[0].at("action"), "reclaim");
  EXPECT_EQ(j.at("recommendations")[0].at("evidence").at("computeP90").is_number(), true);
}

TEST_F(RightsizeDemo, TheOpenStoreGivesWhatItsPathGives) {
  // The agent and the demo hand over the store they write; the command opens it by path.
  auto by_path = RenderRightsize(options_);
  ASSERT_TRUE(by_path) << by_path.error().message;
  auto open = RenderRightsize(*keeper_, options_);
  ASSERT_TRUE(open) << open.error().message;
  EXPECT_EQ(*open, *by_path);
  // The history source's own name in its errors, as the path gave it.
  auto empty = store::Store::Open((dir_.path() / "empty.db").string());
  ASSERT_TRUE(empty) << empty.error().message;
  const auto none = Rightsize(**empty, options_);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "store " + (dir_.path() / "empty.db").string() + ": empty (no interval recorded yet)");
}

TEST_F(RightsizeDemo, BadInputNamesItself) {
  const std::pair<std::function<void(RightsizeOptions&)>, std::string> cases[] = {
      {[](RightsizeOptions& o) { o.source.reset(); }, "--source: required"},
      {[](RightsizeOptions& o) {
         o.source = UsageSource{UsageSource::Kind::kFile, "x.json"};
       },
       "--source file:x.json: rightsizing reads a store or Prometheus"},
      {[](RightsizeOptions& o) {
         o.source = UsageSource{UsageSource::Kind::kPrometheus, "ftp://x"};
       },
       "not an http(s)://host:port URL"},
      {[](RightsizeOptions& o) { o.window = Seconds(0); }, "--window 0s: must be longer than 0"},
      {[](RightsizeOptions& o) {
         o.source = UsageSource{UsageSource::Kind::kStore, "/nonexistent/usage.db"};
       },
       "/nonexistent/usage.db"},
      {[](RightsizeOptions& o) { o.pricing_file = "/nonexistent/prices.yaml"; },
       "/nonexistent/prices.yaml"},
  };
  for (const auto& [edit, want] : cases) {
    auto o = options_;
    edit(o);
    const auto r = Rightsize(o);
    ASSERT_FALSE(r) << want;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

// The command never answers "nothing to resize" when it read no workload at all (a fleet
// benchmark's Prometheus once gave 0 rows, exit 0): it says what it found and fails. --to reads
// the history up to a past time, as report's does.
TEST_F(RightsizeDemo, AReadWithNoWorkloadIsAnErrorThatSaysWhy) {
  auto o = options_;
  o.require_workloads = true;
  auto all = Rightsize(o);
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_FALSE(all->empty());
  o.ns = "no-such-namespace";
  auto none = Rightsize(o);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("no workload in the usage from"), std::string::npos)
      << none.error().message;
  EXPECT_NE(none.error().message.find(" on --node/--namespace ("), std::string::npos)
      << none.error().message;
  EXPECT_NE(none.error().message.find(" elsewhere)"), std::string::npos) << none.error().message;
  o = options_;
  o.require_workloads = true;
  o.to_s = 1'000'000'000;  // 2001: before anything was recorded
  auto early = Rightsize(o);
  ASSERT_FALSE(early);
  EXPECT_NE(early.error().message.find("give --to"), std::string::npos) << early.error().message;
  o.require_workloads = false;  // the agent's runner: an empty answer, not an error
  auto quiet = Rightsize(o);
  ASSERT_TRUE(quiet) << quiet.error().message;
  EXPECT_TRUE(quiet->empty());
  EXPECT_EQ(ParseTimeFlag("--to", "yesterday").error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(*ParseTimeFlag("--to", "2026-12-01T00:00:00Z"), 1'796'083'200);
}

}  // namespace
}  // namespace gpumeter::app

namespace gpumeter::app {
namespace {

TEST_F(RightsizeDemo, TheAgentExportsTheLatestRunAsMetrics) {
  RightsizeRunner runner(*keeper_, options_, std::chrono::milliseconds(0), std::chrono::hours(1));
  for (int i = 0; i < 600 && runner.runs() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(runner.runs(), 1u);
  const auto rows = runner.Latest();
  ASSERT_TRUE(rows);
  node::NodeState state;
  state.node = "gpu-node-dgx-07";
  state.rightsizing = rows;
  const auto text =
      metrics::RenderText(metrics::BuildFamilies({}, state, {}, std::chrono::steady_clock::now()));
  // Label values are codes from a bounded vocabulary, not prose: the series stay few and stable.
  EXPECT_NE(text.find("gpumeter_rightsize_recommended_gpu_ratio{node=\"gpu-node-dgx-07\",namespace="
                      "\"llm\",workload=\"Pod/summarizer-0\","
                      "container=\"vllm\",action=\"mig\",current=\"mig-3g.40gb\",recommended="
                      "\"mig-1g.20gb\",replicas=\"1\"} 0.14285714"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpumeter_rightsize_monthly_savings{node=\"gpu-node-dgx-07\",namespace="
                      "\"research\",workload=\"Pod/forgotten-notebook\","
                      "container=\"jupyter\",action=\"reclaim\",current=\"gpu\",recommended="
                      "\"release\",replicas=\"1\",currency=\"USD\"} 1460"),
            std::string::npos)
      << text;
  // Every value of the two labels is from the vocabulary.
  const std::string kind = R"((\d+x)?(gpu|mig-[0-9a-z.+]+|time-slicing-\d+|mps-\d+))";
  const std::regex code("^(release|" + kind + "(\\+" + kind + ")*)$");
  size_t checked = 0;
  for (const auto& r : *rows) {
    EXPECT_TRUE(std::regex_match(r.current_code, code)) << r.current_code;
    EXPECT_TRUE(std::regex_match(r.recommended_code, code)) << r.recommended_code;
    ++checked;
  }
  EXPECT_GT(checked, 5u);
}

}  // namespace
}  // namespace gpumeter::app
