#include "sinks/metrics/exposition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <locale>
#include <set>
#include <sstream>

#include "common/text_cell.h"
#include "domain/pod_label.h"
#include "sinks/metrics/http_server.h"

namespace gpumeter::metrics {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

gpu::DeviceSample Device() {
  gpu::DeviceSample d;
  d.index = 0;
  d.uuid = "GPU-x";
  d.name = "Test GPU";
  d.memory = gpu::MemoryInfo{1000, 300, 50, 650};
  d.utilization_gpu_percent = 50;
  d.energy_joules = 1234.5;
  // power_watts left unknown on purpose
  d.processes = {{1, gpu::ProcessType::kCompute, 100, {}, {}},
                 {2, gpu::ProcessType::kCompute, std::nullopt, {}, {}},
                 {3, gpu::ProcessType::kCompute, 200, {}, {}}};
  d.process_util = {{1, 10, 40, 0}, {1, 20, 45, 0}};
  return d;
}

std::shared_ptr<const gpu::SampleResult> Pass() {
  auto r = std::make_shared<gpu::SampleResult>();
  r->sequence = 1;
  r->ok = true;
  r->taken = std::chrono::steady_clock::time_point{} + std::chrono::seconds(100);
  r->duration_seconds = 0.25;
  r->snapshot.devices.push_back(Device());
  return r;
}

gpu::SamplerHealth Health() {
  gpu::SamplerHealth h;
  h.latest = h.last_good = Pass();
  h.passes = 7;
  return h;
}

using domain::Owner;
using domain::OwnerKind;

// A node after 10 s on GPU-x, time-sliced between two containers (one of them idle), with a host
// process and an unknown PID.
node::NodeState State() {
  node::NodeState s;
  s.node = "n1";
  s.passes = 11;
  s.intervals = 10;
  s.latest = s.last_good = Pass();
  s.owners[1] = {domain::OwnerKind::kContainer, "ns", "pod \"quoted\"\\", "c", "cgroup"};
  s.owners[2] = {domain::OwnerKind::kSystem, "", "", "", "host"};
  node::UnitInfo u;
  u.uuid = u.gpu_uuid = "GPU-x";
  u.model = "Test GPU";
  u.mode = domain::SharingMode::kTimeSlicing;
  u.replicas = 2;
  u.evidence = "node label nvidia.com/gpu.replicas=2";
  u.holders = {{"ns", "pod \"quoted\"\\", "c", 0.5, 1}, {"ns", "lazy", "c", 0.5, 1}};
  s.units = {u};
  s.unit_totals["GPU-x"] = {10,
                            10000,
                            500,
                            0,
                            10,
                            0,
                            0,
                            0,
                            std::nullopt,
                            {{domain::MemorySignal::kProcessMemUtil, 10}},
                            domain::MemorySignal::kProcessMemUtil};
  auto& a = s.totals[{"GPU-x", Owner{OwnerKind::kContainer, "ns", "pod \"quoted\"\\", "c"}}];
  a.compute_seconds = 4, a.memory_byte_seconds = 1000, a.energy_joules = 300,
  a.requested_share_seconds = 5;
  a.last_memory_bytes = 100, a.last_compute_ratio = 0.4, a.last_interval = 10;
  auto& b = s.totals[{"GPU-x", Owner{OwnerKind::kContainer, "ns", "lazy", "c"}}];
  b.requested_share_seconds = 5, b.last_interval = 10;
  auto& idle = s.totals[{"GPU-x", Owner{OwnerKind::kIdle, "", "", ""}}];
  idle.compute_seconds = 6, idle.memory_byte_seconds = 7000, idle.energy_joules = 200,
  idle.last_interval = 10;
  auto& sys = s.totals[{"GPU-x", Owner{OwnerKind::kSystem, "", "", ""}}];
  sys.memory_byte_seconds = 2000, sys.last_interval = 10;
  s.pod_labels[{"ns", "lazy"}] = {{"team", "vision"}, {"app.kubernetes.io/name", "lazy"}};
  s.sources.push_back({"kubelet", true, false, std::nullopt, 3, 3, 0.01, "unavailable", ""});
  s.sources.push_back(
      {"pods", false, false, std::nullopt, 0, 0, std::nullopt, "", "not configured"});
  return s;
}

std::string Render(const ExpositionOptions& o = {}) {
  return RenderText(BuildFamilies(
      Health(), State(), o, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
}

ExpositionOptions Full() {
  ExpositionOptions o;
  o.container_series = ContainerSeries::kFull;
  return o;
}

TEST(SnapshotMetrics, DeviceSeriesAndUnknownsAreAbsent) {
  const auto text = Render();
  EXPECT_THAT(
      text,
      HasSubstr("gpumeter_gpu_memory_used_bytes{node=\"n1\",gpu=\"0\",gpu_uuid=\"GPU-x\"} 300\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "gpumeter_gpu_memory_reserved_bytes{node=\"n1\",gpu=\"0\",gpu_uuid=\"GPU-x\"} 50\n"));
  EXPECT_THAT(text,
              HasSubstr("gpumeter_gpu_busy_ratio{node=\"n1\",gpu=\"0\",gpu_uuid=\"GPU-x\"} 0.5\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_gpu_energy_joules_total counter"));
  EXPECT_THAT(text, HasSubstr("sharing_mode=\"time-slicing\""));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_gpu_power_watts")))
      << "unknown power must not appear as 0";
  EXPECT_THAT(
      text, HasSubstr("gpumeter_source_last_success_age_seconds{node=\"n1\",source=\"nvml\"} 3\n"));
}

TEST(SnapshotMetrics, ProcessSeriesByOwner) {
  const auto text = Render();
  // Label values are escaped: quote and backslash.
  EXPECT_THAT(
      text,
      HasSubstr("pod=\"pod \\\"quoted\\\"\\\\\",container=\"c\",owner_kind=\"container\"} 100\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "pid=\"3\",namespace=\"\",pod=\"\",container=\"\",owner_kind=\"unattributed\"} 200\n"));
  // Newest sample wins; a listed process without samples was idle (0), per NVML's semantics.
  EXPECT_THAT(text, HasSubstr("gpumeter_process_sm_ratio{node=\"n1\",unit=\"GPU-x\",pid=\"1\""));
  EXPECT_THAT(text, HasSubstr("owner_kind=\"container\"} 0.45\n"));
  EXPECT_THAT(
      text,
      HasSubstr("pid=\"2\",namespace=\"\",pod=\"\",container=\"\",owner_kind=\"system\"} 0\n"));
  // pid 2 has unknown memory: no memory series for it.
  EXPECT_THAT(
      text,
      Not(HasSubstr("gpumeter_process_memory_used_bytes{node=\"n1\",unit=\"GPU-x\",pid=\"2\"")));
}

TEST(SnapshotMetrics, ProcessSeriesCanBeLeftOut) {
  ExpositionOptions o;
  o.process_series = false;
  const auto text = Render(o);
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_process_memory_used_bytes{")));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_process_sm_ratio{")));
  // Everything else stays: the devices and the owners' counters.
  EXPECT_THAT(text, HasSubstr("gpumeter_gpu_memory_used_bytes{node=\"n1\""));
  EXPECT_THAT(text, HasSubstr("gpumeter_compute_seconds_total{"));
}

TEST(SnapshotMetrics, NoSampleYetOnlyHealth) {
  gpu::SamplerHealth h;
  node::NodeState empty;
  empty.node = "n1";
  const auto text = RenderText(BuildFamilies(h, empty, {}, std::chrono::steady_clock::now()));
  EXPECT_THAT(text, HasSubstr("gpumeter_source_up{node=\"n1\",source=\"nvml\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_gpu_")));
}

struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(SnapshotMetrics, LocaleProof) {
  const auto saved = std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  const auto text = Render();
  std::locale::global(saved);
  EXPECT_THAT(text, HasSubstr("} 0.5\n"));
  EXPECT_THAT(text, HasSubstr("} 1234.5\n"));
  EXPECT_THAT(text, Not(HasSubstr("0,5")));
}

TEST(Attribution, OwnerSeriesAddUpToTheUnit) {
  const auto text = Render(Full());
  const std::string unit =
      "node=\"n1\",unit=\"GPU-x\",gpu_uuid=\"GPU-x\",model=\"Test GPU\",mig_profile=\"\",";
  EXPECT_THAT(text, HasSubstr("gpumeter_unit_info{node=\"n1\",unit=\"GPU-x\",gpu_uuid=\"GPU-x\","
                              "gpu=\"0\",model=\"Test GPU\","
                              "mig_profile=\"\",sharing_mode=\"time-slicing\",replicas=\"2\","
                              "evidence=\"node label nvidia.com/gpu.replicas=2\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_unit_seconds_total{node=\"n1\",unit=\"GPU-x\"} 10\n"));
  EXPECT_THAT(
      text,
      HasSubstr("gpumeter_compute_seconds_total{" + unit +
                "namespace=\"ns\",pod=\"lazy\",container=\"c\",owner_kind=\"container\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_compute_seconds_total{" + unit +
                              "namespace=\"\",pod=\"\",container=\"\",owner_kind=\"idle\"} 6\n"));
  EXPECT_THAT(text,
              HasSubstr("gpumeter_memory_byte_seconds_total{" + unit +
                        "namespace=\"\",pod=\"\",container=\"\",owner_kind=\"system\"} 2000\n"));
  EXPECT_THAT(
      text,
      HasSubstr("gpumeter_requested_share_ratio{" + unit +
                "namespace=\"ns\",pod=\"lazy\",container=\"c\",owner_kind=\"container\"} 0.5\n"));
  EXPECT_THAT(text,
              HasSubstr("gpumeter_compute_ratio{" + unit +
                        "namespace=\"ns\",pod=\"pod "
                        "\\\"quoted\\\"\\\\\",container=\"c\",owner_kind=\"container\"} 0.4\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_requested_share_ratio{" + unit +
                                  "namespace=\"\",pod=\"\",container=\"\",owner_kind=\"idle\"")))
      << "only containers hold a share";
  EXPECT_THAT(text, HasSubstr("gpumeter_source_up{node=\"n1\",source=\"kubelet\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("gpumeter_source_failures_total{node=\"n1\",source=\"kubelet\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_source_up{node=\"n1\",source=\"pods\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_series_dropped{node=\"n1\"} 0\n"));
}

// Cost: the policy and currency once, each unit's price × its GPU share, the unit's and each
// priced owner's counter; GPU-equivalents on the latest interval's rows.
TEST(Attribution, CostAndGpuEquivalentSeries) {
  auto s = State();
  s.cost_policy = "memory/idle=separate", s.currency = "EUR";
  s.units[0].gpu_fraction = 0.25;  // as a 2g of 8 slices would be
  s.units[0].gpu_memory_total_bytes = 4000;
  auto& ut = s.unit_totals.at("GPU-x");
  ut.price = cost::PriceQuote{4.0, 4.0, "pricing file", false};
  ut.cost = 0.0125;
  auto& a = s.totals.at({"GPU-x", Owner{OwnerKind::kContainer, "ns", "pod \"quoted\"\\", "c"}});
  a.cost = 0.0025, a.idle_cost = 0, a.priced = true;
  auto& idle = s.totals.at({"GPU-x", Owner{OwnerKind::kIdle, "", "", ""}});
  idle.cost = idle.idle_cost = 0.01, idle.priced = true;
  // The lazy holder's compute was unknown in the last interval: no GPU reading, not a 0.
  s.totals.at({"GPU-x", Owner{OwnerKind::kContainer, "ns", "lazy", "c"}}).last_compute_unknown =
      true;
  const auto text = RenderText(BuildFamilies(
      Health(), s, Full(), std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  const std::string unit =
      "node=\"n1\",unit=\"GPU-x\",gpu_uuid=\"GPU-x\",model=\"Test GPU\",mig_profile=\"\",";
  const std::string quoted =
      "namespace=\"ns\",pod=\"pod \\\"quoted\\\"\\\\\",container=\"c\","
      "owner_kind=\"container\"}";
  EXPECT_THAT(text, HasSubstr("gpumeter_cost_info{node=\"n1\",currency=\"EUR\","
                              "policy=\"memory/idle=separate\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_unit_price_per_hour{node=\"n1\",unit=\"GPU-x\","
                              "currency=\"EUR\",source=\"pricing file\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_unit_cost_total{node=\"n1\",unit=\"GPU-x\"} 0.0125\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_cost_total{" + unit + quoted + " 0.0025\n"));
  EXPECT_THAT(text,
              HasSubstr("gpumeter_idle_cost_total{" + unit +
                        "namespace=\"\",pod=\"\",container=\"\",owner_kind=\"idle\"} 0.01\n"));
  // Not priced (the system row): no cost series rather than a 0.
  EXPECT_THAT(text,
              Not(HasSubstr("gpumeter_cost_total{" + unit +
                            "namespace=\"\",pod=\"\",container=\"\",owner_kind=\"system\"}")));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_unit_unpriced_seconds_total")));
  // 0.4 of a quarter GPU is 0.1 GPU; 100 bytes of a 4000-byte GPU is 0.025 GPU.
  EXPECT_THAT(text, HasSubstr("gpumeter_compute_gpus{" + unit + quoted + " 0.1\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_memory_gpus{" + unit + quoted + " 0.025\n"));
  EXPECT_THAT(text,
              Not(HasSubstr("gpumeter_compute_gpus{" + unit + "namespace=\"ns\",pod=\"lazy\"")));
  EXPECT_THAT(text, HasSubstr("gpumeter_memory_gpus{" + unit + "namespace=\"ns\",pod=\"lazy\""));
}

// The series of each owner row, one label set each: the default set at most 8 per container and
// unit, none of the full set's families; the full set all of them, on the same rows.
TEST(Attribution, DefaultSetIsAtMostEightSeriesPerContainerAndTheFullSetTheRest) {
  auto s = State();
  s.cost_policy = "memory/idle=share", s.currency = "USD";
  s.units[0].gpu_memory_total_bytes = 4000;
  s.unit_totals.at("GPU-x").price = cost::PriceQuote{4.0, 4.0, "pricing file", false};
  // Everything a row can have: priced, unknown and estimated use, traffic and its unknowns.
  auto& a = s.totals.at({"GPU-x", Owner{OwnerKind::kContainer, "ns", "pod \"quoted\"\\", "c"}});
  a.priced = true, a.cost = 1, a.idle_cost = 0.5, a.memory_busy_seconds = 2;
  a.compute_unknown_seconds = 1, a.compute_bound_seconds = 1, a.energy_bound_joules = 1;
  a.memory_busy_unknown_seconds = 1, a.memory_busy_bound_seconds = 1;
  const auto at = std::chrono::steady_clock::time_point{} + std::chrono::seconds(103);
  const std::string row =
      "pod=\"pod \\\"quoted\\\"\\\\\",container=\"c\",owner_kind=\"container\"}";
  const auto families = [&](ExpositionOptions o) {
    o.process_series = false;  // their label sets end as the row's do
    std::set<std::string> out;
    std::istringstream lines(RenderText(BuildFamilies(Health(), s, o, at)));
    for (std::string line; std::getline(lines, line);)
      if (line.find(row) != std::string::npos) out.insert(line.substr(0, line.find('{')));
    return out;
  };
  const std::set<std::string> default_set{
      "gpumeter_memory_byte_seconds_total",     "gpumeter_compute_seconds_total",
      "gpumeter_compute_unknown_seconds_total", "gpumeter_compute_bound_seconds_total",
      "gpumeter_energy_joules_total",           "gpumeter_energy_bound_joules_total",
      "gpumeter_requested_share_seconds_total", "gpumeter_cost_total"};
  EXPECT_EQ(families({}), default_set);
  const auto full = families(Full());
  for (const auto& d : Catalogue()) {
    if (d.labels != Def(Metric::kMemoryByteSeconds).labels) continue;  // not an owner family
    EXPECT_TRUE(full.contains(d.name)) << d.name << ": not exported with the full set";
    EXPECT_EQ(default_set.contains(d.name), InDefaultSet(d.id)) << d.name;
  }
  EXPECT_EQ(full.size(), 17u);
}

// How many series of `metric` the exposition text has.
size_t SeriesOf(const std::string& text, const std::string& metric) {
  size_t series = 0;
  for (size_t at = text.find(metric + "{"); at != std::string::npos;
       at = text.find(metric + "{", at + 1))
    ++series;
  return series;
}

// An estimated split's bound: a series once it is above 0, never a row of zeros elsewhere.
TEST(Attribution, ComputeBoundOnlyWhereSomethingWasEstimated) {
  auto s = State();
  const auto before = RenderText(BuildFamilies(
      Health(), s, {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  EXPECT_THAT(before, Not(HasSubstr("gpumeter_compute_bound_seconds_total{")));
  s.totals.at({"GPU-x", Owner{OwnerKind::kContainer, "ns", "lazy", "c"}}).compute_bound_seconds =
      4.5;
  const auto text = RenderText(BuildFamilies(
      Health(), s, {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_compute_bound_seconds_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_compute_bound_seconds_total{node=\"n1\",unit=\"GPU-x\","
                              "gpu_uuid=\"GPU-x\",model=\"Test GPU\",mig_profile=\"\","
                              "namespace=\"ns\",pod=\"lazy\",container=\"c\","
                              "owner_kind=\"container\"} 4.5\n"));
  EXPECT_EQ(SeriesOf(text, "gpumeter_compute_bound_seconds_total"), 1u);
}

// An estimated energy split's bound, as compute's: a series once it is above 0, none elsewhere.
TEST(Attribution, EnergyBoundOnlyWhereSomethingWasEstimated) {
  auto s = State();
  const auto at = std::chrono::steady_clock::time_point{} + std::chrono::seconds(103);
  EXPECT_THAT(RenderText(BuildFamilies(Health(), s, {}, at)),
              Not(HasSubstr("gpumeter_energy_bound_joules_total{")));
  s.totals.at({"GPU-x", Owner{OwnerKind::kContainer, "ns", "lazy", "c"}}).energy_bound_joules = 120;
  const auto text = RenderText(BuildFamilies(Health(), s, {}, at));
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_energy_bound_joules_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_energy_bound_joules_total{node=\"n1\",unit=\"GPU-x\","
                              "gpu_uuid=\"GPU-x\",model=\"Test GPU\",mig_profile=\"\","
                              "namespace=\"ns\",pod=\"lazy\",container=\"c\","
                              "owner_kind=\"container\"} 120\n"));
  EXPECT_EQ(SeriesOf(text, "gpumeter_energy_bound_joules_total"), 1u);
}

// The Node object's facts: one info series to join at query time; none before it was read.
TEST(Attribution, NodeInfoFromTheNodeObject) {
  auto s = State();
  EXPECT_THAT(
      RenderText(BuildFamilies(
          Health(), s, {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103))),
      Not(HasSubstr("gpumeter_node_info{")));
  auto facts = std::make_shared<k8s::NodeFacts>();
  facts->instance_type = "p5.48xlarge", facts->region = "us-east-1", facts->zone = "us-east-1a",
  facts->capacity_type = "spot", facts->cloud = "aws", facts->provider_id = "aws:///us-east-1a/i-0";
  s.node_facts = facts;
  EXPECT_THAT(
      RenderText(BuildFamilies(
          Health(), s, {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103))),
      HasSubstr("gpumeter_node_info{node=\"n1\",instance_type=\"p5.48xlarge\","
                "region=\"us-east-1\",zone=\"us-east-1a\",capacity_type=\"spot\","
                "cloud=\"aws\",provider_id=\"aws:///us-east-1a/i-0\"} 1\n"));
}

TEST(Attribution, NoCostSeriesWithoutAPrice) {
  auto s = State();
  s.cost_policy = "memory/idle=share", s.currency = "USD";
  s.unit_totals.at("GPU-x").unpriced_seconds = 10;
  const auto text = RenderText(BuildFamilies(
      Health(), s, {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_unit_price_per_hour{")));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_unit_cost_total{")));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_cost_total{")));
  EXPECT_THAT(text,
              HasSubstr("gpumeter_unit_unpriced_seconds_total{node=\"n1\",unit=\"GPU-x\"} 10\n"));
}

TEST(Attribution, PodLabelsAreAnInfoSeriesPerPodUnderSafeNames) {
  ExpositionOptions o = Full();
  o.pod_label_keys = {"team", "app.kubernetes.io/name"};
  const auto text = Render(o);
  EXPECT_EQ(domain::PodLabelName("app.kubernetes.io/name"), "label_app_kubernetes_io_name");
  EXPECT_THAT(text, HasSubstr("gpumeter_pod_labels_info{node=\"n1\",namespace=\"ns\",pod=\"lazy\","
                              "label_team=\"vision\",label_app_kubernetes_io_name=\"lazy\"} 1\n"));
  // The counters and gauges keep their identity when a label changes: no label_ on any other
  // series, and no info series for idle and the other buckets (they are no pod).
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#") || line.starts_with("gpumeter_pod_labels_info{")) continue;
    EXPECT_THAT(line, Not(HasSubstr("label_"))) << line;
  }
  EXPECT_THAT(text, HasSubstr("gpumeter_compute_seconds_total{node=\"n1\",unit=\"GPU-x\""));
}

TEST(Attribution, APodsRelabelKeepsItsCountersSeries) {
  ExpositionOptions o;
  o.pod_label_keys = {"team"};
  auto s = State();
  const auto series = [&](const std::string& prefix) {
    std::set<std::string> out;
    std::istringstream lines(RenderText(BuildFamilies(Health(), s, o, {})));
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with(prefix)) out.insert(line.substr(0, line.rfind(' ')));
    return out;
  };
  const auto counters = series("gpumeter_compute_seconds_total{");
  const auto info = series("gpumeter_pod_labels_info{");
  s.pod_labels[{"ns", "lazy"}]["team"] = "speech";
  EXPECT_EQ(series("gpumeter_compute_seconds_total{"), counters);
  EXPECT_NE(series("gpumeter_pod_labels_info{"), info);
  EXPECT_THAT(series("gpumeter_pod_labels_info{"),
              Contains(HasSubstr("pod=\"lazy\",label_team=\"speech\"")));
}

TEST(SnapshotMetrics, ConnectionsCutAtTheHeaderDeadlineAreCounted) {
  const auto text = RenderText(BuildFamilies(
      Health(), State(), {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103),
      ServerStats{7}));
  EXPECT_THAT(text, HasSubstr("gpumeter_http_connections_cut_total{node=\"n1\"} 7\n"));
  EXPECT_THAT(Render(), HasSubstr("gpumeter_http_connections_cut_total{node=\"n1\"} 0\n"));
}

// The store's writer: intervals a stop could not write and wall-clock steps, where it is kept.
TEST(SnapshotMetrics, StoreLossesAtAStopAndClockStepsAreCounted) {
  auto state = State();
  EXPECT_THAT(Render(), Not(HasSubstr("gpumeter_clock_steps_total"))) << "no store, no series";
  node::StoreHealth store;
  store.dropped = 3, store.lost_at_stop = 2, store.clock_steps = 1;
  state.store = store;
  const auto text = RenderText(BuildFamilies(
      Health(), state, {}, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  EXPECT_THAT(text, HasSubstr("gpumeter_store_dropped_intervals_total{node=\"n1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_store_lost_at_stop_intervals_total{node=\"n1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_clock_steps_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_clock_steps_total{node=\"n1\"} 1\n"));
}

// /metrics through the server's handler: gzipped when asked for, not when refused by weight.
TEST(SnapshotMetrics, GzipOnlyWhereAcceptEncodingGivesItAWeight) {
  struct View : node::StateView {
    std::shared_ptr<const node::NodeState> State() const override {
      return std::make_shared<const node::NodeState>(metrics::State());
    }
    gpu::SamplerHealth Health() const override { return metrics::Health(); }
  } view;
  HttpServer server(view, {});
  const auto get = [&](std::string accept) {
    return server.Handle({"GET", "/metrics", [accept](const char* name) {
                            return std::string(name) == "Accept-Encoding" ? accept : "";
                          }});
  };
  const auto encoding = [](const HttpAnswer& a) {
    for (const auto& [k, v] : a.headers)
      if (k == "Content-Encoding") return v;
    return std::string();
  };
  ASSERT_GE(get("").body.size(), 1024u) << "large enough to be worth compressing";
  EXPECT_EQ(encoding(get("gzip")), "gzip");
  EXPECT_EQ(encoding(get("deflate, gzip;q=0.8")), "gzip");
  EXPECT_EQ(encoding(get("gzip;q=0")), "");
  EXPECT_EQ(encoding(get("*;q=0")), "");
  EXPECT_EQ(encoding(get("")), "");
}

TEST(Attribution, NoPodLabelsSeriesWithoutPodLabelKeys) {
  EXPECT_THAT(Render(ExpositionOptions{}), Not(HasSubstr("gpumeter_pod_labels_info{")));
}

TEST(Attribution, SeriesCapKeepsTheActiveContainersAndEveryNonContainerRow) {
  ExpositionOptions o;
  o.max_series = 1;
  const auto text = Render(o);
  EXPECT_THAT(text, HasSubstr("gpumeter_series_dropped{node=\"n1\"} 1\n"));
  EXPECT_THAT(
      text,
      HasSubstr("pod=\"pod \\\"quoted\\\"\\\\\",container=\"c\",owner_kind=\"container\"} 4\n"))
      << "the busier one is kept";
  EXPECT_THAT(text, Not(HasSubstr("pod=\"lazy\"")));
  EXPECT_THAT(text, HasSubstr("owner_kind=\"idle\"} 6\n"));
  EXPECT_THAT(text, HasSubstr("owner_kind=\"system\"} 2000\n"));
}

// Names that are not UTF-8 (a host process's command name, the driver's name for a GPU, a pod's
// label) reach /metrics as valid UTF-8, U+FFFD for each bad sequence, in both formats: Prometheus
// and promtool refuse a whole page over one invalid byte, and with it every series of the node.
TEST(SnapshotMetrics, LabelValuesThatAreNotUtf8AreMadeValid) {
  const std::string fffd = "\xef\xbf\xbd";
  auto s = State();
  guard::Finding f;
  f.kind = guard::Kind::kHostProcess, f.severity = guard::Severity::kWarning;
  f.node = "n1", f.unit_uuid = f.gpu_uuid = "GPU-x", f.first_seen = 1000;
  f.process = std::string("\xff\xfe") + "burn";
  s.findings.push_back(f);
  auto pass = std::make_shared<gpu::SampleResult>(*Pass());
  pass->snapshot.devices[0].name = "Tesla \xf4\x90\x80\x80";  // above U+10FFFF
  s.latest = s.last_good = pass;
  s.pod_labels[{"ns", "lazy"}]["team"] = "vi\xed\xa0\x80sion";  // a surrogate
  ExpositionOptions o;
  o.pod_label_keys = {"team"};
  const auto families = BuildFamilies(
      Health(), s, o, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103));
  for (const auto& text : {RenderText(families), RenderOpenMetrics(families)}) {
    // ValidUtf8 gives its input back exactly when it is valid UTF-8.
    EXPECT_EQ(ValidUtf8(text, text.size()), text) << "not UTF-8";
    EXPECT_THAT(text, HasSubstr("gpumeter_finding_first_seen_timestamp_seconds{node=\"n1\","
                                "kind=\"host-process\",severity=\"warning\",namespace=\"\","
                                "pod=\"\",container=\"\",unit=\"GPU-x\",gpu_uuid=\"GPU-x\","
                                "process=\"" +
                                fffd + fffd + "burn\"} 1000\n"));
    EXPECT_THAT(text, HasSubstr("model=\"Tesla " + fffd + fffd + fffd + fffd + "\""));
    EXPECT_THAT(text, HasSubstr("label_team=\"vi" + fffd + fffd + fffd + "sion\"}"));
  }
}

// Escapes apply on both paths: a plain ASCII value, and one made valid UTF-8 first (the newline,
// quote and backslash among non-ASCII bytes).
TEST(SnapshotMetrics, LabelValuesAreEscapedWhetherAsciiOrNot) {
  auto s = State();
  s.pod_labels[{"ns", "lazy"}]["team"] = "a\nb\"c\\d";
  s.pod_labels[{"ns", "lazy"}]["site"] = "\xc3\xbc\n\"\\\xff";
  ExpositionOptions o;
  o.pod_label_keys = {"site", "team"};
  const auto text = RenderText(BuildFamilies(
      Health(), s, o, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  EXPECT_THAT(
      text,
      HasSubstr("label_site=\"\xc3\xbc\\n\\\"\\\\\xef\xbf\xbd\",label_team=\"a\\nb\\\"c\\\\d\"}"));
}

// A label value is cut at kMaxLabelValueBytes, before a character that would pass it.
TEST(SnapshotMetrics, LongLabelValuesAreCutAtACharacter) {
  auto s = State();
  s.pod_labels[{"ns", "lazy"}]["team"] = std::string(kMaxLabelValueBytes - 1, 'x') + "\xc3\xa9";
  ExpositionOptions o;
  o.pod_label_keys = {"team"};
  const auto text = RenderText(BuildFamilies(
      Health(), s, o, std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
  EXPECT_THAT(text, HasSubstr("label_team=\"" + std::string(kMaxLabelValueBytes - 1, 'x') + "\"}"));
}

TEST(ParseListen, AcceptsAndRejects) {
  EXPECT_EQ(ParseListen("127.0.0.1:9400")->second, 9400);
  EXPECT_EQ(ParseListen("[::1]:0")->first, "::1");
  EXPECT_EQ(ParseListen(":8080")->first, "0.0.0.0");
  EXPECT_THAT(ParseListen("localhost").error().message, HasSubstr("expected HOST:PORT"));
  EXPECT_THAT(ParseListen("h:99999").error().message, HasSubstr("0-65535"));
  EXPECT_THAT(ParseListen("h:12ab").error().message, HasSubstr("'h:12ab'"));
}

}  // namespace
}  // namespace gpumeter::metrics
