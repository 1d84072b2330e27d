// `report --bill` end to end on the bundled fixtures (tests/fixtures/bill/: one FOCUS export per
// cloud's flavour, with spot, savings-plan, reserved-instance and unused-commitment rows, a
// credit, a tax line, a purchase, a VM of no node, a disk, a node replaced mid-day under its
// name and an hour the agent was down), against a store written as the agent writes it. The
// expected amounts are worked out by hand from the fixtures (the comments show how).
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/usage/report.h"
#include "sources/bill/focus_reader.h"
#include "store/store.h"
#include "support/temp_dir.h"

namespace gpumeter::app {
namespace {

using nlohmann::json;

const int64_t kNov3 = 1793664000;  // 2026-11-03T00:00:00Z
int64_t At(int hour) { return kNov3 + int64_t{hour} * 3600; }

std::string Fixture(const std::string& name) {
  return std::string(GPUMETER_TEST_SOURCE_DIR) + "/tests/fixtures/bill/" + name;
}

struct Node {
  std::string name, provider_id, instance_id;
  int gpus = 1;
};

// One hour of one whole GPU as the agent records it: `pod` busy `busy` of the hour, idle the rest.
void WriteHour(store::Store& s, const Node& n, int hour, const std::string& gpu,
               const std::string& ns, const std::string& pod, double busy) {
  store::IntervalRecord rec;
  rec.end_unix_s = At(hour) + 1800;
  store::NodeRecord node;
  node.name = n.name;
  node.provider_id = n.provider_id;
  node.instance_id = n.instance_id;
  node.gpu_count = n.gpus;
  rec.node = node;
  store::UnitRecord u;
  u.unit = {n.name, gpu, gpu, "NVIDIA L4", "", domain::SharingMode::kExclusive, 1.0};
  u.seconds = 3600;
  u.memory_capacity_byte_seconds = 24e9 * 3600;
  if (!pod.empty())
    u.owners.push_back(
        {domain::Owner::Container(ns, pod, "main"), 1e9 * 3600, busy * 3600, 0, 3600});
  u.owners.push_back({{domain::OwnerKind::kIdle, "", "", ""}, 0, (1 - busy) * 3600, 0, 0});
  rec.units.push_back(u);
  ASSERT_TRUE(s.Write(rec));
}

ReportOptions Options(const std::string& store, int from_hour, int to_hour,
                      const std::vector<std::string>& bill, const std::string& split) {
  ReportOptions o;
  o.source = {UsageSource::Kind::kStore, store};
  o.from_s = At(from_hour);
  o.to_s = At(to_hour);
  o.policy.basis = cost::Basis::kCompute;
  o.policy.idle = cost::IdleRule::kSeparate;
  o.format = "json";
  o.bill_files = bill;
  o.bill_split = split;
  return o;
}

json Report(const ReportOptions& o) {
  auto text = RenderReport(o, At(48));
  EXPECT_TRUE(text) << (text ? "" : text.error().message);
  return text ? json::parse(*text) : json();
}

std::map<std::string, double> ByGroup(const json& r) {
  std::map<std::string, double> out;
  for (const auto& g : r["groups"]) out[g["group"]["namespace"]] = g["cost"];
  return out;
}

// Whatever the policy, the GPU nodes' lines are all placed, and the file's lines all counted.
void ExpectConserved(ReportOptions o, double node_lines) {
  for (const char* basis : {"memory", "compute", "request", "blend"})
    for (const auto idle :
         {cost::IdleRule::kShare, cost::IdleRule::kOwner, cost::IdleRule::kSeparate}) {
      double alpha = 0.5;
      o.policy.basis =
          *cost::ParseBasis(basis == std::string("blend") ? "blend:0.3" : basis, &alpha);
      o.policy.alpha = alpha;
      o.policy.idle = idle;
      const json r = Report(o);
      const json& a = r["bill"]["allocation"];
      const std::string name = o.policy.Name();
      EXPECT_TRUE(a["addsUp"].get<bool>()) << name;
      EXPECT_NEAR(a["sum"].get<double>(), node_lines, 0.005) << name;
      EXPECT_NEAR(r["bill"]["gpuNodeLines"]["effectiveCost"].get<double>(), node_lines, 1e-9)
          << name;
      double groups = 0;
      for (const auto& g : r["groups"]) groups += g["cost"].get<double>();
      EXPECT_NEAR(groups + a["noAgent"].get<double>() + a["nonGpu"].get<double>(), node_lines,
                  0.005)
          << name;
      double categories = r["bill"]["outsideWindow"]["effectiveCost"].get<double>() +
                          r["bill"]["refused"]["effectiveCost"].get<double>();
      for (const auto& [k, v] : r["bill"]["byCategory"].items())
        categories += v["effectiveCost"].get<double>();
      EXPECT_NEAR(categories, r["bill"]["total"]["effectiveCost"].get<double>(), 1e-9) << name;
    }
}

std::string GzipCopy(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  gzFile g = gzopen(to.c_str(), "wb");
  const std::string s = text.str();
  gzwrite(g, s.data(), static_cast<unsigned>(s.size()));
  gzclose(g);
  return to;
}

// The store of the AWS fixture's nodes, 10:00 to 14:00 (the comments of the test below).
void WriteAwsUsage(const std::string& path) {
  auto s = store::Store::Open(path);
  ASSERT_TRUE(s) << s.error().message;
  const Node a{"ip-10-0-1-5", "aws:///us-east-1a/i-0a1b2c3d4e5f60718", "", 4};
  for (int h : {10, 11, 13}) {  // 12: the agent was down
    WriteHour(**s, a, h, "GPU-a0", "vision", "train-0", 0.8);
    WriteHour(**s, a, h, "GPU-a1", "vision", "train-0", 0.8);
    WriteHour(**s, a, h, "GPU-a2", "research", "notebook-ana", 0.1);
    WriteHour(**s, a, h, "GPU-a3", "", "", 0);
  }
  // Replaced at 12:00 by another VM that took the same name (and so the same node name).
  const Node b1{"ip-10-0-2-7", "aws:///us-east-1b/i-0aaaaaaaaaaaaaaa1", "", 1};
  const Node b2{"ip-10-0-2-7", "aws:///us-east-1b/i-0aaaaaaaaaaaaaaa2", "", 1};
  for (int h : {10, 11}) WriteHour(**s, b1, h, "GPU-b0", "serving", "infer-0", 0.5);
  for (int h : {12, 13}) WriteHour(**s, b2, h, "GPU-b1", "serving", "infer-0", 0.5);
  // A node the agent saw that the bill does not name.
  WriteHour(**s, {"ip-10-0-3-3", "aws:///us-east-1a/i-0ccccccccccccccc3", "", 1}, 10, "GPU-c0", "",
            "", 0);
}

// The AWS day's usage in `dir` and the options of a report over 10:00-14:00 with its bill.
ReportOptions AwsReport(const testing::TempDir& dir) {
  const auto path = (dir.path() / "usage.db").string();
  WriteAwsUsage(path);
  const auto bill = GzipCopy(Fixture("aws-focus-1.0.csv"), (dir.path() / "aws.csv.gz").string());
  return Options(path, 10, 14, {bill}, "aws-scad");
}

TEST(BillReport, AwsSpotSavingsPlanAndReservedNodesReconcileToTheCent) {
  testing::TempDir dir("gpumeter-bill-report");
  const ReportOptions o = AwsReport(dir);
  const json r = Report(o);
  ASSERT_TRUE(r.contains("bill"));
  const json& b = r["bill"];
  // Node A: 4.00 an hour, 0.9 of it GPU: 0.90 per GPU-hour. Seen at 10, 11 and 13: train-0 on
  // two GPUs at 0.8 (1.44 an hour), the notebook 0.09, idle 0.18 + 0.18 + 0.81 + 0.90. At 12
  // nobody saw its 3.60. Node B: 2.50 (savings plan) then 2.00 (reserved) an hour, one GPU:
  // infer-0 half of 2.25 and of 1.80.
  const auto groups = ByGroup(r);
  EXPECT_NEAR(groups.at("vision"), 1.44 * 3, 1e-9);
  EXPECT_NEAR(groups.at("research"), 0.09 * 3, 1e-9);
  EXPECT_NEAR(groups.at("serving"), 1.125 * 2 + 0.9 * 2, 1e-9);
  EXPECT_NEAR(groups.at("__idle__"), 2.07 * 3 + 1.125 * 2 + 0.9 * 2, 1e-9);
  const json& a = b["allocation"];
  EXPECT_NEAR(a["containers"].get<double>(), 8.64, 1e-9);
  EXPECT_NEAR(a["idle"].get<double>(), 10.26, 1e-9);
  EXPECT_NEAR(a["noAgent"].get<double>(), 3.60, 1e-9);
  EXPECT_NEAR(a["nonGpu"].get<double>(), 2.50, 1e-9);
  EXPECT_NEAR(b["gpuNodeLines"]["effectiveCost"].get<double>(), 25.00, 1e-9);
  // The file: 28.134 in all (the 09:00 hour of node A, 4.00, before the window); commitments
  // amortized (EffectiveCost) and paid (BilledCost) come to the same sum.
  EXPECT_NEAR(b["total"]["effectiveCost"].get<double>(), 28.134, 1e-9);
  EXPECT_NEAR(b["total"]["billedCost"].get<double>(), 28.134, 1e-9);
  EXPECT_EQ(b["total"]["lines"], 19);
  EXPECT_NEAR(b["outsideWindow"]["effectiveCost"].get<double>(), 4.00, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Tax"]["effectiveCost"].get<double>(), 2.10, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Credit"]["effectiveCost"].get<double>(), -5.00, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Purchase"]["billedCost"].get<double>(), 10.25, 1e-9);
  EXPECT_NEAR(b["unusedCommitments"]["effectiveCost"].get<double>(), 1.25, 1e-9);
  EXPECT_NEAR(b["otherUsage"]["effectiveCost"].get<double>(), 0.40, 1e-9);
  ASSERT_EQ(b["unmatchedVms"].size(), 1u);
  EXPECT_EQ(b["unmatchedVms"][0]["resourceId"], "i-0fffffffffffffff0");
  EXPECT_NEAR(b["unmatchedVms"][0]["effectiveCost"].get<double>(), 0.384, 1e-9);
  ASSERT_EQ(b["nodes"].size(), 2u);
  EXPECT_EQ(b["nodes"][0]["node"], "ip-10-0-1-5");
  EXPECT_EQ(b["nodes"][0]["periodsUnseen"], 1);
  EXPECT_EQ(b["nodes"][0]["gpus"], 4);
  EXPECT_EQ(b["nodes"][1]["periods"], 4);  // both VMs of the name
  ASSERT_EQ(b["nodesWithoutLines"].size(), 1u);
  EXPECT_EQ(b["nodesWithoutLines"][0]["node"], "ip-10-0-3-3");
  EXPECT_EQ(r["currency"], "USD");
  ExpectConserved(o, 25.00);
}

// FOCUS out of FOCUS in, read back as a bill: each amount column of the rows sums to that column
// of the GPU nodes' lines (BilledCost 16.00: the savings plan and the reservation bill node B's
// hours at 0; ListCost 4 × 4.6016 + 4 × 0.9776); the table says where the bill's lines went.
TEST(BillReport, AwsDaysFocusRowsReadBackAsTheBillsGpuNodeLines) {
  testing::TempDir dir("gpumeter-bill-report");
  const ReportOptions o = AwsReport(dir);
  const json r = Report(o);
  const json& b = r["bill"];
  ReportOptions focus = o;
  focus.format = "focus";
  auto rows = RenderReport(focus, At(48));
  ASSERT_TRUE(rows) << rows.error().message;
  const auto out = (dir.path() / "out.csv").string();
  std::ofstream(out) << *rows;
  double billed = 0, effective = 0, list = 0;
  int64_t n = 0, non_gpu = 0, no_agent = 0;
  auto back = bill::ReadFocusFile(out, "", [&](const domain::Charge& c) {
    billed += c.billed_cost;
    effective += c.effective_cost;
    list += c.list_cost.value_or(0);
    ++n;
    non_gpu += c.resource_type == "Node";
    no_agent += c.resource_type == "GPU" && c.resource_id == "ip-10-0-1-5";
    return Expected<void>{};
  });
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_NEAR(billed, b["gpuNodeLines"]["billedCost"].get<double>(), 1e-9);
  EXPECT_NEAR(billed, 16.00, 1e-9);
  EXPECT_NEAR(effective, 25.00, 1e-9);
  EXPECT_NEAR(list, 4 * 4.6016 + 4 * 0.9776, 1e-9);
  EXPECT_EQ(non_gpu, 2);   // one per node
  EXPECT_EQ(no_agent, 1);  // node A's hour at 12
  EXPECT_GT(n, 8);

  ReportOptions table = o;
  table.format = "table";
  auto text = RenderReport(table, At(48));
  ASSERT_TRUE(text) << text.error().message;
  for (const char* s : {"From the bill: 1 file(s), 19 lines", "= the lines' total",
                        "ip-10-0-1-5: billed for 1 charge period(s) in which the agent recorded",
                        "ip-10-0-3-3: seen by the agent (1.000 GPU-h) and billed by no line",
                        "i-0fffffffffffffff0"})
    EXPECT_NE(text->find(s), std::string::npos) << s << " in:\n" << *text;
}

TEST(BillReport, ALineEndingIn9999IsRefusedAndMovesNoCost) {
  // The AWS fixture, and the same with one more line: node A's 11:00 hour again, its end made
  // 9999-12-31. Refused with its file and line; the containers' share and every bucket of the
  // bill without it are as they were, and its 4.00 is named refused, not "no agent".
  testing::TempDir dir("gpumeter-bill-report");
  const auto path = (dir.path() / "usage.db").string();
  WriteAwsUsage(path);
  std::ifstream in(Fixture("aws-focus-1.0.csv"));
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const std::string period = "2026-11-03T12:00:00Z,2026-11-03T11:00:00Z";  // End, Start
  const size_t at = s.find(period);
  ASSERT_NE(at, std::string::npos);
  const size_t begin = s.rfind('\n', at) + 1;
  std::string line = s.substr(begin, s.find('\n', at) + 1 - begin);
  line.replace(line.find(period), 20, "9999-12-31T00:00:00Z");
  ASSERT_EQ(s.back(), '\n');
  const auto bad = (dir.path() / "with9999.csv").string();
  std::ofstream(bad) << s + line;  // its line 21: the header and 19 lines before it
  const json without = Report(Options(path, 10, 14, {Fixture("aws-focus-1.0.csv")}, "aws-scad"));
  const ReportOptions o = Options(path, 10, 14, {bad}, "aws-scad");
  const json with = Report(o);
  ASSERT_TRUE(with.contains("bill"));
  const json& b = with["bill"];
  EXPECT_EQ(b["refused"]["lines"], 1);
  EXPECT_NEAR(b["refused"]["effectiveCost"].get<double>(), 4.00, 1e-9);
  ASSERT_EQ(b["refused"]["described"].size(), 1u);
  EXPECT_NE(b["refused"]["described"][0].get<std::string>().find(
                "with9999.csv:21: column ChargePeriodEnd: 9999-12-31T00:00:00Z is 2912135 days "
                "after ChargePeriodStart 2026-11-03T11:00:00Z"),
            std::string::npos)
      << b["refused"]["described"][0];
  EXPECT_NEAR(b["allocation"]["containers"].get<double>(), 8.64, 1e-9);
  for (const char* part : {"containers", "idle", "noAgent", "nonGpu", "sum"})
    EXPECT_EQ(b["allocation"][part], without["bill"]["allocation"][part]) << part;
  EXPECT_EQ(ByGroup(with), ByGroup(without));
  EXPECT_EQ(b["gpuNodeLines"], without["bill"]["gpuNodeLines"]);
  EXPECT_EQ(b["outsideWindow"], without["bill"]["outsideWindow"]);
  EXPECT_EQ(b["byCategory"], without["bill"]["byCategory"]);
  EXPECT_NEAR(b["total"]["effectiveCost"].get<double>(), 28.134 + 4.00, 1e-9);
  EXPECT_EQ(b["total"]["lines"], 20);
  ExpectConserved(o, 25.00);
  ReportOptions table = o;
  table.format = "table";
  auto t = RenderReport(table, At(48));
  ASSERT_TRUE(t) << t.error().message;
  for (const char* want : {"refused (charge period over 5 years)", "Refused lines (1, 4.00)",
                           "with9999.csv:21: column ChargePeriodEnd"})
    EXPECT_NE(t->find(want), std::string::npos) << want << " in:\n" << *t;
}

TEST(BillReport, AnAzureScaleSetsDailyLineIsSharedByItsNodes) {
  testing::TempDir dir("gpumeter-bill-report");
  const auto path = (dir.path() / "usage.db").string();
  const std::string set =
      "azure:///subscriptions/7d3c9a10-5b2e-4f61-9a8d-0c1b2a3f4e5d/resourceGroups/"
      "mc_ml-rg_ml-aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/"
      "aks-gpu-12345678-vmss/virtualMachines/";
  {
    auto s = store::Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    for (int h = 0; h < 24; ++h) {
      WriteHour(**s, {"aks-gpu-12345678-vmss000000", set + "0", "", 1}, h, "GPU-z0", "ml",
                "train-0", 0.75);
      if (h < 12)  // the other node's agent ran half the day
        WriteHour(**s, {"aks-gpu-12345678-vmss000001", set + "1", "", 1}, h, "GPU-z1", "ml",
                  "infer-0", 0.5);
    }
  }
  const ReportOptions o = Options(path, 0, 24, {Fixture("azure-focuscost-1.0.csv")}, "0.8");
  const json r = Report(o);
  ASSERT_TRUE(r.contains("bill"));
  const json& b = r["bill"];
  // 96.00 for the day (48 VM-hours), shared per GPU by the two nodes known that day: 48 each,
  // GPU 0.8 of it, 38.40. Node 0: train-0 0.75 of its day. Node 1: its agent saw 12 of 24 h:
  // infer-0 half of 19.20, the other 19.20 no agent saw.
  EXPECT_EQ(r["currency"], "EUR");
  EXPECT_NEAR(ByGroup(r).at("ml"), 28.80 + 9.60, 1e-9);
  EXPECT_NEAR(b["allocation"]["idle"].get<double>(), 9.60 + 9.60, 1e-9);
  EXPECT_NEAR(b["allocation"]["noAgent"].get<double>(), 19.20, 1e-9);
  EXPECT_NEAR(b["allocation"]["nonGpu"].get<double>(), 19.20, 1e-9);
  EXPECT_NEAR(b["total"]["effectiveCost"].get<double>(), 92.56, 1e-9);
  EXPECT_NEAR(b["unusedCommitments"]["effectiveCost"].get<double>(), 2.00, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Credit"]["effectiveCost"].get<double>(), -10.00, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Purchase"]["billedCost"].get<double>(), 30.00, 1e-9);
  ASSERT_EQ(b["unmatchedVms"].size(), 1u);
  EXPECT_NEAR(b["unmatchedVms"][0]["effectiveCost"].get<double>(), 3.36, 1e-9);
  EXPECT_NEAR(b["otherUsage"]["effectiveCost"].get<double>(), 1.20, 1e-9);
  ExpectConserved(o, 96.00);
}

TEST(BillReport, AGkeNodesSkuLinesAreSummedByNameAndByNumericId) {
  testing::TempDir dir("gpumeter-bill-report");
  const auto path = (dir.path() / "usage.db").string();
  {
    auto s = store::Store::Open(path);
    ASSERT_TRUE(s) << s.error().message;
    const Node n{"gke-ml-gpu-pool-1a2b3c4d-x9k2",
                 "gce://ml-prod/us-central1-a/gke-ml-gpu-pool-1a2b3c4d-x9k2", "4520988123456789012",
                 1};
    for (int h : {10, 11}) WriteHour(**s, n, h, "GPU-g0", "research", "nb-ana", 0.4);
  }
  const ReportOptions o = Options(path, 10, 13, {Fixture("gcp-focus-view.csv")}, "aws-scad");
  const json r = Report(o);
  ASSERT_TRUE(r.contains("bill"));
  const json& b = r["bill"];
  // GPU, core and RAM lines: 1.00 an hour, 0.90 GPU. Seen at 10 and 11 (nb-ana 0.4), not at 12.
  EXPECT_NEAR(b["gpuNodeLines"]["effectiveCost"].get<double>(), 3.00, 1e-9);
  EXPECT_EQ(b["gpuNodeLines"]["lines"], 9);
  EXPECT_NEAR(ByGroup(r).at("research"), 0.72, 1e-9);
  EXPECT_NEAR(b["allocation"]["idle"].get<double>(), 1.08, 1e-9);
  EXPECT_NEAR(b["allocation"]["noAgent"].get<double>(), 0.90, 1e-9);
  EXPECT_NEAR(b["allocation"]["nonGpu"].get<double>(), 0.30, 1e-9);
  EXPECT_NEAR(b["total"]["effectiveCost"].get<double>(), 4.38, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Credit"]["effectiveCost"].get<double>(), -0.12, 1e-9);
  EXPECT_NEAR(b["byCategory"]["Tax"]["effectiveCost"].get<double>(), 0.50, 1e-9);
  ExpectConserved(o, 3.00);
}

TEST(BillReport, ABadBillOrABadSourceIsAnErrorNamingIt) {
  testing::TempDir dir("gpumeter-bill-report");
  const auto path = (dir.path() / "usage.db").string();
  {
    auto s = store::Store::Open(path);
    ASSERT_TRUE(s);
    WriteHour(**s, {"n", "aws:///z/i-0a1b2c3d4e5f60718", "", 1}, 10, "GPU-0", "a", "p", 0.5);
  }
  const auto bad = (dir.path() / "bad.csv").string();
  std::ifstream in(Fixture("aws-focus-1.0.csv"));
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  s.insert(s.find("\n", s.find("\n", s.find("\n") + 1) + 1), ",extra");  // line 3 grows a field
  std::ofstream(bad) << s;
  auto r = RenderReport(Options(path, 10, 14, {bad}, "aws-scad"), At(48));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("bad.csv:3: 49 fields where the header has 48"),
            std::string::npos)
      << r.error().message;
  auto split = RenderReport(Options(path, 10, 14, {Fixture("aws-focus-1.0.csv")}, "1.5"), At(48));
  ASSERT_FALSE(split);
  EXPECT_NE(split.error().message.find("--bill-split: the GPU share"), std::string::npos)
      << split.error().message;
  auto html = Options(path, 10, 14, {Fixture("aws-focus-1.0.csv")}, "aws-scad");
  html.format = "html";
  auto h = RenderReport(html, At(48));
  ASSERT_TRUE(h) << h.error().message;
  for (const char* want : {"<h2>From the bill</h2>", "(the lines' total)", "i-0fffffffffffffff0",
                           "node's bill (EffectiveCost)"})
    EXPECT_NE(h->find(want), std::string::npos) << want;
  EXPECT_EQ(h->find("<script"), std::string::npos);
  EXPECT_EQ(h->find("price per hour &times;"), std::string::npos);  // not priced per hour
  auto csv = Options(path, 10, 14, {Fixture("aws-focus-1.0.csv")}, "aws-scad");
  csv.format = "csv";
  auto groups = RenderReport(csv, At(48));
  ASSERT_TRUE(groups) << groups.error().message;
  EXPECT_NE(groups->find("\na,"), std::string::npos) << *groups;  // namespace a's group
}

}  // namespace
}  // namespace gpumeter::app
