// The agent source: replies in docs/api.md's shape become a frame; replies that are not refuse
// (shapes, non-finite or out-of-range numbers, too many items); the HTTP client's size cap and
// deadline hold against a real server.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "sources/history/agent_client.h"
#include "sources/history/agent_source.h"
#include "support/loopback_server.h"
#include "support/trickle_server.h"

namespace gpumeter::history {
using top::SortKey;
using top::SumOwners;
namespace {

using nlohmann::json;

json Units() {
  return json::parse(R"({"node": "n1", "units": [
    {"uuid": "GPU-2", "gpu_uuid": "GPU-2", "gpu_index": 2, "model": "NVIDIA H100 80GB HBM3",
     "mig_profile": null, "sharing_mode": "time-slicing", "replicas": 4, "evidence": "",
     "memory_total_bytes": 80000000000, "gpu_fraction": 1.0, "busy_ratio": 0.8,
     "memory_used_bytes": 30000000000, "power_watts": 250.0, "interval_seconds": 1.0,
     "holders": [{"namespace": "search", "pod": "embedder-0", "container": "server", "share": 0.25},
                 {"namespace": "ads", "pod": "ctr-0", "container": "c", "share": 0.25}]}]})");
}

json Ledger() {
  return json::parse(R"({"node": "n1", "units": [{"uuid": "GPU-2", "owners": [
    {"kind": "container", "namespace": "search", "pod": "embedder-0", "container": "server",
     "memory_bytes": 10000000000, "compute_ratio": 0.5, "power_watts": 150.0},
    {"kind": "container", "namespace": "old", "pod": "gone", "container": "c",
     "memory_bytes": null, "compute_ratio": null, "power_watts": null},
    {"kind": "idle", "memory_bytes": 50000000000, "compute_ratio": 0.2, "power_watts": null},
    {"kind": "unattributed", "memory_bytes": 20000000000, "compute_ratio": 0.3, "power_watts": 100.0}
  ]}], "pod_labels": [{"namespace": "search", "pod": "embedder-0", "labels": {"team": "search"}}]})");
}

json Findings() { return json::parse(R"({"node": "n1", "checked": true, "findings": []})"); }

TEST(TopAgentSource, RepliesBecomeAFrame) {
  auto f = FrameFromAgentJson(Units(), Ledger(), Findings(), "agent x", 100);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->units.size(), 1u);
  const auto& u = f->units[0];
  EXPECT_EQ(u.label, "GPU2");
  EXPECT_EQ(*u.busy_ratio, 0.8);
  EXPECT_EQ(f->span_seconds, 1.0);
  // The holders first (embedder with its ledger row and its share; ctr-0 had no row: no use),
  // then the others of the latest interval; the row of the gone pod is not "now".
  ASSERT_EQ(u.owners.size(), 4u);
  EXPECT_EQ(u.owners[0].owner.pod, "embedder-0");
  EXPECT_EQ(*u.owners[0].held_share, 0.25);
  EXPECT_EQ(*u.owners[0].compute_ratio, 0.5);
  EXPECT_EQ(u.owners[1].owner.pod, "ctr-0");
  EXPECT_EQ(*u.owners[1].compute_ratio, 0.0);
  EXPECT_EQ(u.owners[2].owner.kind, domain::OwnerKind::kIdle);
  EXPECT_FALSE(u.owners[2].power_watts.has_value());
  EXPECT_NEAR(*SumOwners(u).compute_ratio, 1.0, 1e-12);
  EXPECT_EQ(GroupRows(*f, "label:team", SortKey::kCompute, {})[0].key,
            std::vector<std::string>{"search"});
  ASSERT_TRUE(f->findings.has_value());
  EXPECT_TRUE(f->findings->empty());
}

// The latest interval's bound and unknown flag reach the frame; an agent that sends neither (a
// version before bounds) reads as measured, as it claimed.
TEST(TopAgentSource, BoundsAndUnknownComputeReachTheFrame) {
  auto l = Ledger();
  l["units"][0]["owners"][0]["compute_bound_ratio"] = 0.25;
  l["units"][0]["owners"][0]["compute_unknown"] = true;
  auto f = FrameFromAgentJson(Units(), l, Findings(), "agent x", 100);
  ASSERT_TRUE(f) << f.error().message;
  const auto& o = f->units[0].owners[0];
  EXPECT_EQ(*o.compute_bound_ratio, 0.25);
  EXPECT_TRUE(o.compute_unknown);
  const auto rows = GroupRows(*f, "container", SortKey::kCompute, {});
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(*rows[0].compute_bound_gpus, 0.25);
  EXPECT_TRUE(rows[0].compute_unknown);
  f = FrameFromAgentJson(Units(), Ledger(), Findings(), "agent x", 100);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(*f->units[0].owners[0].compute_bound_ratio, 0.0);
  EXPECT_FALSE(f->units[0].owners[0].compute_unknown);
  // Wrong types are refused by name.
  l = Ledger();
  l["units"][0]["owners"][0]["compute_unknown"] = "yes";
  auto bad = FrameFromAgentJson(Units(), l, Findings(), "agent x", 100);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("compute_unknown"), std::string::npos);
  l = Ledger();
  l["units"][0]["owners"][0]["compute_bound_ratio"] = -1;
  bad = FrameFromAgentJson(Units(), l, Findings(), "agent x", 100);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("compute_bound_ratio"), std::string::npos);
}

// The ± of an owner's power where its energy was estimated (a DCGM collection's profile) reaches
// the frame and the pods' rows; an agent before energy bounds sends none: measured, as it claimed.
TEST(TopAgentSource, EnergyBoundsReachTheFrame) {
  auto l = Ledger();
  l["units"][0]["owners"][0]["power_bound_watts"] = 40.0;
  auto f = FrameFromAgentJson(Units(), l, Findings(), "agent x", 100);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(*f->units[0].owners[0].power_bound_watts, 40.0);
  const auto& o = f->units[0].owners[0];
  double bound = 0;  // over the pods' rows: the owner's row carries it, no other any
  for (const auto& r : GroupRows(*f, "container", SortKey::kCompute, {})) {
    ASSERT_TRUE(r.power_bound_watts.has_value());
    if (r.key == std::vector<std::string>{o.owner.ns, o.owner.pod, o.owner.container}) {
      EXPECT_EQ(*r.power_bound_watts, 40.0);
    }
    bound += *r.power_bound_watts;
  }
  EXPECT_EQ(bound, 40.0);
  f = FrameFromAgentJson(Units(), Ledger(), Findings(), "agent x", 100);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(*f->units[0].owners[0].power_bound_watts, 0.0);
  l = Ledger();
  l["units"][0]["owners"][0]["power_bound_watts"] = -3;
  const auto bad = FrameFromAgentJson(Units(), l, Findings(), "agent x", 100);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("power_bound_watts"), std::string::npos);
}

TEST(TopAgentSource, RefusesRepliesOfTheWrongShape) {
  auto expect_refused = [](const json& units, const json& ledger, const std::string& why) {
    auto f = FrameFromAgentJson(units, ledger, Findings(), "agent x", 100);
    ASSERT_FALSE(f) << why;
    EXPECT_NE(f.error().message.find(why), std::string::npos) << f.error().message;
  };
  auto u = Units();
  u["units"][0]["busy_ratio"] = 1.5;
  expect_refused(u, Ledger(), "busy_ratio");
  u = Units();
  u["units"][0]["power_watts"] = std::numeric_limits<double>::infinity();
  expect_refused(u, Ledger(), "power_watts");
  u = Units();
  u["units"][0]["memory_used_bytes"] = "30 GB";
  expect_refused(u, Ledger(), "memory_used_bytes is not a number");
  u = Units();
  u["units"] = json::object();
  expect_refused(u, Ledger(), "units is not an array");
  u = Units();
  u["units"][0]["holders"][0].erase("share");
  expect_refused(u, Ledger(), "holder");
  u = Units();
  u["units"][0]["sharing_mode"] = "Time-Slicing";  // a mode is spelt as the agent writes it
  expect_refused(u, Ledger(), "sharing_mode \"Time-Slicing\" is not exclusive");
  auto l = Ledger();
  l["units"][0]["owners"][0]["compute_ratio"] = -0.1;
  expect_refused(Units(), l, "compute_ratio");
  l = Ledger();
  l["pod_labels"][0]["labels"]["team"] = 7;
  expect_refused(Units(), l, "label team is not a string");
  u = Units();
  u["units"] = json::array();
  for (int i = 0; i < 1025; ++i) u["units"].push_back(Units()["units"][0]);
  expect_refused(u, Ledger(), "more than 1024");
}

// What `audit` reads of the agent goes through the same parser: the findings reply with its node
// and whether anything was checked, and the ledger's rows in the reply's order, each owner with a
// row in the latest interval only.
TEST(TopAgentSource, FindingsAndLedgerParseAlone) {
  auto f = ParseAgentFindings(Findings());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->node, "n1");
  EXPECT_TRUE(f->checked);
  EXPECT_TRUE(f->findings.empty());
  auto no_checked = Findings();
  no_checked.erase("checked");
  ASSERT_FALSE(ParseAgentFindings(no_checked));
  EXPECT_NE(ParseAgentFindings(no_checked).error().message.find("checked"), std::string::npos);
  auto bad_finding = Findings();
  bad_finding["findings"].push_back(json::object());
  EXPECT_FALSE(ParseAgentFindings(bad_finding));
  EXPECT_FALSE(FrameFromAgentJson(Units(), Ledger(), no_checked, "agent x", 100))
      << "top reads the findings as audit does";

  auto l = ParseAgentLedger(Ledger());
  ASSERT_TRUE(l) << l.error().message;
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ((*l)[0].uuid, "GPU-2");
  // The gone pod's row (nothing known) is no row of the latest interval.
  ASSERT_EQ((*l)[0].owners.size(), 3u);
  EXPECT_EQ((*l)[0].owners[0].owner.pod, "embedder-0");
  EXPECT_EQ(*(*l)[0].owners[0].compute_ratio, 0.5);
  EXPECT_EQ((*l)[0].owners[1].owner.kind, domain::OwnerKind::kIdle);
  EXPECT_EQ((*l)[0].owners[2].owner.kind, domain::OwnerKind::kUnattributed);
  auto bad = Ledger();
  bad["units"][0]["owners"][0]["compute_ratio"] = 2;
  EXPECT_FALSE(ParseAgentLedger(bad));

  auto u = ParseAgentUnits(Units());
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->node, "n1");
  ASSERT_EQ(u->units.size(), 1u);
  EXPECT_EQ(u->units[0].key.gpu_uuid, "GPU-2");
  EXPECT_TRUE(u->units[0].key.mig_profile.empty());
}

TEST(TopAgentClient, RefusesAReplyOverTheCapAndGivesUpAtTheDeadline) {
  testing::LoopbackServer server([](httplib::Server& s) {
    s.Get("/api/v1/big", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(std::string(2u << 20, 'x'), "application/json");
    });
    s.Get("/api/v1/slow", [](const httplib::Request&, httplib::Response& r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      r.set_content("{}", "application/json");
    });
    s.Get("/api/v1/overflow", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(R"({"node": "n", "units": [], "x": 1e400})", "application/json");
    });
    s.Get("/api/v1/ok", [](const httplib::Request& q, httplib::Response& r) {
      r.set_content(q.get_header_value("Authorization") == "Bearer t0ken" ? "{}" : "[]",
                    "application/json");
    });
  });
  const http::Limits limits{.connect_timeout = std::chrono::milliseconds(500),
                            .read_timeout = {},
                            .deadline = std::chrono::milliseconds(800),
                            .max_bytes = 1u << 20};
  auto client = *AgentClient::Open(server.url() + "/", "t0ken", "", limits);
  auto big = client.GetJson("/api/v1/big");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("larger than"), std::string::npos) << big.error().message;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(client.GetJson("/api/v1/slow"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1200));
  EXPECT_TRUE(client.GetJson("/api/v1/ok")) << "the token is sent";
  EXPECT_FALSE(client.GetJson("/api/v1/overflow")) << "a number beyond a double is refused";
  auto no_token = *AgentClient::Open(server.url(), "", "", limits);
  EXPECT_FALSE(no_token.GetJson("/api/v1/ok")) << "an array is not an agent's reply";
}

TEST(TopAgentClient, HeadersTrickledByteByByteAreCutAtTheDeadline) {
  // No read waits longer than 100 ms, so only the whole request's deadline can end it.
  testing::TrickleServer server;
  const http::Limits limits{.connect_timeout = std::chrono::milliseconds(500),
                            .read_timeout = {},
                            .deadline = std::chrono::milliseconds(800),
                            .max_bytes = 1u << 20};
  const auto start = std::chrono::steady_clock::now();
  auto r = AgentClient::Open(server.url(), "", "", limits)->GetJson("/api/v1/units");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no complete reply within 800 ms"), std::string::npos)
      << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(3));  // the server would trickle for as long as it runs
}

}  // namespace
}  // namespace gpumeter::history
