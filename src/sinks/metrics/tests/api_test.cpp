// OpenMetrics rendering and the JSON API from a hand-made NodeState.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <locale>
#include <sstream>

#include "common/json/key_case.h"
#include "common/text_cell.h"
#include "sinks/metrics/exposition.h"
#include "sinks/metrics/http_server.h"
#include "sinks/metrics/json_api.h"

namespace gpumeter::metrics {
namespace {

using domain::Owner;
using domain::OwnerKind;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

node::NodeState State() {
  node::NodeState s;
  s.node = "n1";
  s.intervals = 4;
  auto r = std::make_shared<gpu::SampleResult>();
  r->ok = true;
  gpu::DeviceSample d;
  d.uuid = "GPU-x";
  d.name = "Test GPU";
  d.memory = gpu::MemoryInfo{1000, 300, std::nullopt, 700};
  d.processes = {{7, gpu::ProcessType::kCompute, 200, {}, {}},
                 {8, gpu::ProcessType::kMps, std::nullopt, {}, {}}};
  r->snapshot.devices.push_back(d);
  s.latest = s.last_good = r;
  s.owners[7] = {domain::OwnerKind::kContainer, "ns", "p", "c", "cgroup pod UID + container ID"};
  node::UnitInfo u;
  u.uuid = u.gpu_uuid = "GPU-x";
  u.model = "Test GPU";
  u.evidence = "one holder, no replica IDs";
  u.holders = {{"ns", "p", "c", 1.0, 1}};
  s.units = {u};
  s.unit_totals["GPU-x"] = {4,
                            4000,
                            0,
                            4,
                            4,
                            0,
                            0,
                            0,
                            std::nullopt,  // energy unknown throughout
                            {{domain::MemorySignal::kProcessMemUtil, 4}},
                            domain::MemorySignal::kProcessMemUtil};
  auto& t = s.totals[{"GPU-x", Owner{OwnerKind::kContainer, "ns", "p", "c"}}];
  t.compute_seconds = 1.5, t.memory_byte_seconds = 800, t.requested_share_seconds = 4,
  t.last_interval = 4, t.last_memory_bytes = 200;
  t.compute_rule = "per-process samples";
  auto& gone = s.totals[{"GPU-x", Owner{OwnerKind::kContainer, "ns", "old", "c"}}];
  gone.compute_seconds = 0.5, gone.last_interval = 1;
  auto& idle = s.totals[{"GPU-x", Owner{OwnerKind::kIdle, "", "", ""}}];
  idle.compute_seconds = 2, idle.memory_byte_seconds = 3200, idle.last_interval = 4;
  s.sources.push_back({"kubelet", true, true,
                       std::chrono::steady_clock::time_point{} + std::chrono::seconds(90), 5, 0,
                       0.01, "", "sock"});
  return s;
}

TEST(OpenMetrics, FamiliesUnitsInfoAndEof) {
  gpu::SamplerHealth h;
  ExpositionOptions full;  // with the gauges, whose # UNIT lines are checked too
  full.container_series = ContainerSeries::kFull;
  const auto text = RenderOpenMetrics(BuildFamilies(
      h, State(), full, std::chrono::steady_clock::time_point{} + std::chrono::seconds(100)));
  // Counters: the family without _total, samples with it, and the unit from the catalogue.
  EXPECT_THAT(
      text,
      HasSubstr(
          "# TYPE gpumeter_compute_seconds counter\n# UNIT gpumeter_compute_seconds seconds\n"));
  EXPECT_THAT(text, HasSubstr("\ngpumeter_compute_seconds_total{node=\"n1\",unit=\"GPU-x\","));
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_unit_memory_capacity_byte_seconds counter\n# UNIT "
                              "gpumeter_unit_memory_capacity_byte_seconds byte_seconds\n"));
  // _info gauges are the info type.
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_unit info\n"));
  EXPECT_THAT(text, HasSubstr("\ngpumeter_unit_info{node=\"n1\",unit=\"GPU-x\""));
  EXPECT_THAT(
      text, HasSubstr("# TYPE gpumeter_memory_bytes gauge\n# UNIT gpumeter_memory_bytes bytes\n"));
  EXPECT_THAT(
      text,
      HasSubstr("gpumeter_source_last_success_age_seconds{node=\"n1\",source=\"kubelet\"} 10\n"));
  EXPECT_THAT(text, EndsWith("# EOF\n"));
  EXPECT_TRUE(WantsOpenMetrics(
      "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"));
  EXPECT_FALSE(WantsOpenMetrics("text/plain"));
}

TEST(JsonApi, UnitsLedgerProcessesSources) {
  const auto s = State();
  const auto units = UnitsJson(s);
  ASSERT_EQ(units["units"].size(), 1u);
  EXPECT_EQ(units["units"][0]["sharing_mode"], "exclusive");
  EXPECT_TRUE(units["units"][0]["mig_profile"].is_null());
  EXPECT_EQ(units["units"][0]["memory_total_bytes"], nullptr);
  EXPECT_EQ(units["units"][0]["holders"][0]["pod"], "p");

  const auto ledger = LedgerJson(s);
  const auto& owners = ledger["units"][0]["owners"];
  ASSERT_EQ(owners.size(), 3u);
  double compute = 0;
  for (const auto& o : owners) compute += o["compute_seconds"].get<double>();
  EXPECT_DOUBLE_EQ(compute, ledger["units"][0]["seconds"].get<double>())
      << "owners add up to the unit";
  EXPECT_TRUE(ledger["units"][0]["energy_joules"].is_null()) << "unknown energy is null, not 0";
  for (const auto& o : owners) {
    EXPECT_TRUE(o["energy_joules"].is_null());
    if (o.value("pod", "") == "old") {
      EXPECT_TRUE(o["memory_bytes"].is_null()) << "not in the latest interval: no current value";
    }
    if (o.value("pod", "") == "p") {
      EXPECT_EQ(o["memory_bytes"], 200);
      EXPECT_EQ(o["rules"]["compute"], "per-process samples");
    }
  }

  const auto procs = ProcessesJson(s)["processes"];
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0]["owner"]["pod"], "p");
  EXPECT_EQ(procs[1]["owner"]["kind"], "unattributed");
  EXPECT_TRUE(procs[1]["memory_bytes"].is_null());
  EXPECT_EQ(procs[1]["type"], "mps");

  gpu::SamplerHealth h;
  const auto sources =
      SourcesJson(h, s, std::chrono::milliseconds(0),
                  std::chrono::steady_clock::time_point{} + std::chrono::seconds(100))["sources"];
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0]["name"], "nvml");
  EXPECT_EQ(sources[0]["up"], false);
  EXPECT_TRUE(sources[0]["last_success_age_seconds"].is_null());
  EXPECT_EQ(sources[1]["last_success_age_seconds"], 10.0);
}

// An estimated energy split: its ± in the running total (joules) and over the latest interval
// (watts, beside power_watts); a measured one's is 0.
TEST(JsonApi, EnergyBoundsBesideTheEnergy) {
  auto s = State();
  auto& u = s.unit_totals["GPU-x"];
  u.energy_joules = 400, u.energy_unknown_seconds = 0, u.last_interval = s.intervals;
  auto& t = s.totals[{"GPU-x", Owner{OwnerKind::kContainer, "ns", "p", "c"}}];
  t.energy_joules = 300, t.energy_bound_joules = 60;
  attribution::UnitLedger l;
  l.uuid = "GPU-x";
  l.seconds = 4;
  l.energy_joules = 400;
  attribution::Row r;
  r.owner = Owner{OwnerKind::kContainer, "ns", "p", "c"};
  r.compute_seconds = 1.5, r.energy_joules = 300, r.energy_bound_joules = 60;
  l.rows.push_back(r);
  s.last_interval = {l};
  const auto ledger = LedgerJson(s);
  bool seen = false;
  for (const auto& o : ledger["units"][0]["owners"]) {
    if (o.value("pod", "") == "p") {
      seen = true;
      EXPECT_EQ(o["energy_bound_joules"], 60.0);
      EXPECT_EQ(o["power_watts"], 75.0);
      EXPECT_EQ(o["power_bound_watts"], 15.0);
    } else {
      EXPECT_EQ(o["energy_bound_joules"], 0.0) << o.dump();
    }
  }
  EXPECT_TRUE(seen);
}

// /api/v2's spelling of the ledger (what the server serves): camelCase keys, and a pod's label
// keys as the pod has them (kDataKeyedMembers; without it `cost_center` would be respelled).
TEST(JsonApi, V2KeepsThePodsLabelKeys) {
  auto s = State();
  s.pod_labels[{"ns", "p"}] = {{"cost_center", "cv-42"}, {"team", "vision"}};
  const auto v2 = json_case::ToCamelCase(LedgerJson(s), kDataKeyedMembers);
  ASSERT_TRUE(v2) << v2.error().message;
  EXPECT_TRUE(v2->contains("podLabels"));
  EXPECT_EQ((*v2)["podLabels"][0]["labels"]["cost_center"], "cv-42");
  EXPECT_TRUE((*v2)["units"][0]["owners"][0].contains("computeSeconds"));
}

// A fixed state, as the routes read it.
class FixedView : public node::StateView {
 public:
  explicit FixedView(node::NodeState s)
      : state_(std::make_shared<const node::NodeState>(std::move(s))) {}
  std::shared_ptr<const node::NodeState> State() const override { return state_; }
  gpu::SamplerHealth Health() const override { return {}; }

 private:
  std::shared_ptr<const node::NodeState> state_;
};

// Text that is not UTF-8 in every endpoint's data (a command name, a cgroup path, a cut error, a
// pod label's key and value): each answers 200 with JSON that parses (nlohmann's parser refuses
// invalid UTF-8), U+FFFD where the bad bytes were, as on /metrics.
TEST(JsonApi, TextThatIsNotUtf8IsReplacedNotAnError) {
  const std::string fffd = "\xef\xbf\xbd";
  auto s = State();
  guard::Finding f;
  f.kind = guard::Kind::kHostProcess, f.node = "n1", f.unit_uuid = f.gpu_uuid = "GPU-x";
  f.process = std::string("\xff\xfe") + "burn";
  f.evidence = "pid 9 (" + f.process + ") runs outside any pod";
  s.findings.push_back(f);
  s.owners[8] = {OwnerKind::kSystem, "", "", "", "host process (cgroup /system.slice/\xc0\xaf)"};
  s.sources[0].last_error = "cut \xe2\x82";
  s.pod_labels[{"ns", "p"}] = {{"te\xffm", "vi\xed\xa0\x80sion"}};
  FixedView view(std::move(s));
  HttpServer server(view, {});
  const auto get = [&](const std::string& path) {
    return server.Handle({"GET", path, [](const char*) { return std::string(); }});
  };
  for (const std::string version : {"v1", "v2"})
    for (const std::string resource : {"units", "ledger", "processes", "findings", "sources"}) {
      const std::string path = "/api/" + version + "/" + resource;
      const auto a = get(path);
      EXPECT_EQ(a.status, 200u) << path << ": " << a.body;
      EXPECT_FALSE(nlohmann::json::parse(a.body, nullptr, false).is_discarded()) << path;
    }
  const auto findings = nlohmann::json::parse(get("/api/v2/findings").body, nullptr, false);
  ASSERT_FALSE(findings.is_discarded());
  EXPECT_EQ(findings["findings"][0]["process"], fffd + fffd + "burn");
  EXPECT_EQ(findings["findings"][0]["process"], ValidUtf8(f.process)) << "as /metrics shows it";
  const auto ledger = nlohmann::json::parse(get("/api/v2/ledger").body, nullptr, false);
  ASSERT_FALSE(ledger.is_discarded());
  EXPECT_EQ(ledger["podLabels"][0]["labels"]["te" + fffd + "m"],
            "vi" + fffd + fffd + fffd + "sion");
}

}  // namespace
}  // namespace gpumeter::metrics

namespace gpumeter::metrics {
namespace {

struct CommaLocale : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
};

// One definition of "NVML is up": a sampler whose last pass was good but finished longer ago
// than stale_after is down in /metrics and in /api/v1/sources alike (the API once said up).
TEST(JsonApi, NvmlUpIsTheSameInMetricsAndSources) {
  using std::chrono::seconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(1000);
  gpu::SamplerHealth h;
  auto r = std::make_shared<gpu::SampleResult>();
  r->ok = true;
  r->taken = t0;
  r->duration_seconds = 0.1;
  h.latest = h.last_good = r;
  h.passes = 3;
  ExpositionOptions o;
  o.stale_after = std::chrono::milliseconds(5000);
  for (const auto& [at, up] :
       {std::pair{t0 + seconds(2), true}, std::pair{t0 + seconds(60), false}}) {
    const auto text = RenderText(BuildFamilies(h, State(), o, at));
    EXPECT_THAT(text, HasSubstr(std::string("gpumeter_source_up{node=\"n1\",source=\"nvml\"} ") +
                                (up ? "1" : "0") + "\n"));
    const auto nvml = SourcesJson(h, State(), o.stale_after, at)["sources"][0];
    EXPECT_EQ(nvml["name"], "nvml");
    EXPECT_EQ(nvml["up"], up);
    EXPECT_EQ(nvml["attempts"], 3);
    if (!up) {
      EXPECT_THAT(nvml["last_error"].get<std::string>(),
                  HasSubstr("no sampling pass finished for 60 s"));
    }
  }
}

TEST(OpenMetrics, LocaleProofAndHugeEscapedLabelValues) {
  auto s = State();
  // A 64 KiB pod label with quotes, backslashes and newlines, copied through --pod-label: cut to
  // kMaxLabelValueBytes (of the value, before escaping), escaped.
  std::string huge(64 * 1024, 'x');
  huge[10] = '"', huge[20] = '\\', huge[30] = '\n';
  s.pod_labels[{"ns", "p"}] = {{"team", huge}};
  ExpositionOptions o;
  o.pod_label_keys = {"team"};
  const auto saved = std::locale::global(std::locale(std::locale::classic(), new CommaLocale));
  const auto families =
      BuildFamilies({}, s, o, std::chrono::steady_clock::time_point{} + std::chrono::seconds(100));
  const auto om = RenderOpenMetrics(families);
  const auto text = RenderText(families);
  std::locale::global(saved);
  EXPECT_THAT(om, HasSubstr("gpumeter_pod_labels_info{node=\"n1\",namespace=\"ns\",pod=\"p\","
                            "label_team=\""));
  EXPECT_THAT(om, HasSubstr("} 1.5\n")) << "no decimal comma";
  for (const auto* out : {&om, &text}) {
    std::string escaped = huge.substr(0, 10) + "\\\"" + huge.substr(11, 9) + "\\\\" +
                          huge.substr(21, 9) + "\\n" + huge.substr(31, kMaxLabelValueBytes - 31);
    EXPECT_THAT(*out, HasSubstr("label_team=\"" + escaped + "\"}"));
    // Every line is one sample or one comment: the newline inside the value is escaped.
    std::istringstream lines(*out);
    for (std::string line; std::getline(lines, line);)
      ASSERT_TRUE(line.starts_with("gpumeter_") || line.starts_with("#")) << line.substr(0, 80);
  }
}

}  // namespace
}  // namespace gpumeter::metrics
