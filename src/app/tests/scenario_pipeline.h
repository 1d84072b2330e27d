// Test helper: the whole node pipeline over a scenario file at a clock the test sets — the fake
// NVML through the real loader, a fake kubelet over gRPC, a /proc tree and the pods (a fixed
// PodList, so no wall-clock durations show). Each Pass(t) takes a sampling pass at scenario time t;
// the pass is stamped kWall0 + t on the wall clock (first/last seen of findings).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "node/pipeline/pipeline.h"
#include "sim/fake_kubelet/simulated_node.h"
#include "sim/node/scenario_context.h"
#include "sim/node/scenario_fixture.h"
#include "sim/scenario/loader.h"
#include "sources/kubelet/pod_resources_source.h"
#include "support/fake_nvml.h"
#include "support/temp_dir.h"

namespace gpumeter::app::testing {

class FixedPods final : public kube_api::PodSource {
 public:
  explicit FixedPods(const std::string& list) {
    auto store = std::make_shared<k8s::PodStore>();
    ok_ = store->ApplyList(list).has_value();
    store_ = std::move(store);
  }
  void Poll(std::chrono::steady_clock::time_point) override {}
  std::shared_ptr<const k8s::PodStore> Current() const override { return store_; }
  domain::SourceStatus Status() const override {
    return {"pods", true, ok_, std::nullopt, 1, 0, std::nullopt, "", "fixed"};
  }

 private:
  bool ok_ = false;
  std::shared_ptr<const k8s::PodStore> store_;
};

// The scenario's node_object as a read Node (none when it has none), with a fixed status.
class FixedNode final : public kube_api::NodeSource {
 public:
  explicit FixedNode(const std::string& json) {
    auto facts = std::make_shared<k8s::NodeFacts>();
    ok_ = facts->ApplyList(json).has_value();
    if (ok_) facts_ = std::move(facts);
  }
  std::shared_ptr<const k8s::NodeFacts> Current() const override { return facts_; }
  domain::SourceStatus Status() const override {
    return {"node", true, ok_, std::nullopt, 1, 0, std::nullopt, "", "fixed"};
  }

 private:
  bool ok_ = false;
  std::shared_ptr<const k8s::NodeFacts> facts_;
};

// 2026-12-01T00:00:00Z.
inline const auto kWall0 =
    std::chrono::system_clock::time_point{} + std::chrono::seconds(1796083200);

class ScenarioPipeline {
 public:
  // `tweak` adjusts the pipeline options (guardrails, pricing) before the pipeline is built.
  ScenarioPipeline(const std::string& scenario_path, double t0,
                   const std::function<void(node::PipelineOptions&)>& tweak = {})
      : dir_("gpumeter-scenario-pipeline") {
    auto scen = scenario::LoadScenarioFile(scenario_path);
    EXPECT_TRUE(scen) << (scen ? "" : scen.error().message);
    if (!scen) return;
    scenario_ = std::move(*scen);
    auto node = sim::SimulatedNode::Create(scenario_, dir_.path());
    EXPECT_TRUE(node) << (node ? "" : node.error().message);
    if (!node) return;
    node_ = std::move(*node);
    kubelet::PodResourcesOptions ko;
    ko.socket_path = node_->kubelet_socket();
    kubelet_ = std::make_unique<kubelet::PodResourcesSource>(
        std::make_unique<kubelet::PodResourcesClient>(ko));
    pods_ = std::make_unique<FixedPods>(sim::ScenarioPodListJson(scenario_));
    if (scenario_.node_object)
      node_source_ = std::make_unique<FixedNode>(sim::ScenarioNodeJson(scenario_));
    node::PipelineOptions po;
    po.node = scenario_.node_name;
    po.proc_root = node_->proc_root();
    po.evidence = sim::ScenarioSharingEvidence(scenario_);
    po.evidence.mig_parent.clear();
    if (tweak) tweak(po);
    pipeline_ = std::make_unique<node::NodePipeline>(
        node::PipelineSources{kubelet_.get(), pods_.get(), nullptr, nullptr, node_source_.get()},
        po);
    fake_ = std::make_unique<gpumeter::testing::FakeNvml>("r580", scenario_path, t0);
    t0_ = t0;
  }

  bool ok() const { return pipeline_ && fake_ && fake_->ok(); }

  // One sampling pass at scenario time `t_s` (passes in increasing time).
  std::shared_ptr<const gpu::SampleResult> Pass(double t_s) {
    fake_->SetTime(t_s);
    EXPECT_TRUE(node_->RefreshProc(t_s));
    auto r = std::make_shared<gpu::SampleResult>();
    r->sequence = ++passes_;
    r->taken = kSteady0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(t_s - t0_));
    r->wall = kWall0 + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           std::chrono::duration<double>(t_s));
    r->duration_seconds = 0.004;
    r->ok = true;
    r->snapshot = fake_->Sample();
    pipeline_->OnPass(r);
    return r;
  }

  std::shared_ptr<const node::NodeState> Latest() const { return pipeline_->Latest(); }
  const scenario::Scenario& scenario() const { return scenario_; }

 private:
  static inline const auto kSteady0 =
      std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  gpumeter::testing::TempDir dir_;
  scenario::Scenario scenario_;
  std::unique_ptr<sim::SimulatedNode> node_;
  std::unique_ptr<kubelet::PodResourcesSource> kubelet_;
  std::unique_ptr<FixedPods> pods_;
  std::unique_ptr<FixedNode> node_source_;  // null: the scenario has no node_object
  std::unique_ptr<node::NodePipeline> pipeline_;
  std::unique_ptr<gpumeter::testing::FakeNvml> fake_;
  double t0_ = 0;
  uint64_t passes_ = 0;
};

}  // namespace gpumeter::app::testing
