// The frame model: rows per group add the units' owners (GPU-equivalents by the unit's fraction),
// unknown stays unknown, sorting and filtering, prices split like the report's, the JSON round
// trip, and what the keys do.
#include <gtest/gtest.h>

#include <functional>

#include "core/top/frame.h"
#include "sinks/top/frame_json.h"
#include "sinks/top/keys.h"

namespace gpumeter::top {
namespace {

using domain::OwnerKind;

OwnerNow Container(std::string ns, std::string pod, Amount held, Amount compute, Amount memory) {
  return {{OwnerKind::kContainer, std::move(ns), std::move(pod), "c"},
          held,
          compute,
          memory,
          100.0,
          std::nullopt};
}

OwnerNow Special(OwnerKind kind, double compute, double memory) {
  return {{kind, "", "", ""}, std::nullopt, compute, memory, 10.0, std::nullopt};
}

// Two units: a whole H100 shared by two pods, and a 3/7 MIG instance of an H200 held by one.
FrameData TwoUnits() {
  FrameData f;
  f.source = "test";
  f.at_unix_s = 1700000000;
  f.span_seconds = 1;
  UnitNow a;
  a.key = {"n1", "GPU-a", "GPU-a", "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kTimeSlicing,
           1.0};
  a.label = "GPU0";
  a.memory_total_bytes = 80e9;
  a.power_watts = 300;
  a.owners = {Container("ml", "train", 0.5, 0.6, 30e9), Container("web", "infer", 0.5, 0.1, 10e9),
              Special(OwnerKind::kIdle, 0.3, 40e9)};
  UnitNow b;
  b.key = {"n1", "MIG-b", "GPU-b", "NVIDIA H200", "3g.71gb", domain::SharingMode::kMig, 3.0 / 7};
  b.label = "GPU1 3g.71gb";
  b.memory_total_bytes = 70e9;
  b.power_watts = 120;
  b.owners = {Container("ml", "train", 1.0, 0.5, 20e9), Special(OwnerKind::kIdle, 0.5, 50e9)};
  f.units = {a, b};
  f.findings =
      std::vector<FindingNow>{{"warning", "idle-allocation", "n1", "ml/train/c", "", "", 10},
                              {"critical", "host-process", "n1", "host process x", "", "", 20},
                              {"info", "oom-risk", "n1", "web/infer/c", "", "", 30}};
  return f;
}

TEST(TopFrame, GroupsAddTheUnitsOwnersInGpuEquivalents) {
  const auto rows = GroupRows(TwoUnits(), "namespace", SortKey::kCompute, {});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, std::vector<std::string>{"ml"});
  EXPECT_NEAR(*rows[0].compute_gpus, 0.6 + 0.5 * 3 / 7, 1e-12);
  EXPECT_NEAR(*rows[0].held_gpus, 0.5 + 3.0 / 7, 1e-12);
  EXPECT_NEAR(*rows[0].waste_gpus, (0.5 + 3.0 / 7) - (0.6 + 0.5 * 3 / 7), 1e-12);
  EXPECT_NEAR(*rows[0].memory_bytes, 50e9, 1);
  EXPECT_EQ(rows[0].units, (std::vector<std::string>{"GPU0", "GPU1 3g.71gb"}));
  EXPECT_EQ(rows[1].key, std::vector<std::string>{"web"});
}

TEST(TopFrame, UnknownIsNotZeroAndSortsLast) {
  auto f = TwoUnits();
  f.units[0].owners[1].memory_bytes = std::nullopt;  // web's memory unknown
  const auto rows = GroupRows(f, "pod", SortKey::kMemory, {});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, (std::vector<std::string>{"ml", "train"}));
  EXPECT_FALSE(rows[1].memory_bytes.has_value());
  EXPECT_FALSE(SumOwners(f.units[0]).memory_bytes.has_value());
}

TEST(TopFrame, SortKeysAndNamespaceFilter) {
  auto f = TwoUnits();
  f.units[0].owners[1].held_share = 3.0;  // web holds much and uses little: the most waste
  EXPECT_EQ(GroupRows(f, "container", SortKey::kWaste, {})[0].key[0], "web");
  EXPECT_EQ(GroupRows(f, "container", SortKey::kCompute, {})[0].key[0], "ml");
  const auto only_web = GroupRows(f, "container", SortKey::kCompute, {"web", ""});
  ASSERT_EQ(only_web.size(), 1u);
  EXPECT_EQ(FilteredUnits(f, {"web", ""}).size(), 1u);
  EXPECT_EQ(FilteredUnits(f, {"ml", ""}).size(), 2u);
  EXPECT_EQ(FilteredUnits(f, {}).size(), 2u);
  const auto findings = SortedFindings(f, {"web", ""});  // web's, and the host's; critical first
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].kind, "host-process");
  EXPECT_EQ(findings[1].kind, "oom-risk");
  // By severity whatever the time (the info is newest, the warning oldest); newest first within.
  f.findings->push_back({"warning", "mig-oversized", "n1", "ml/train/c", "", "", 15});
  std::vector<std::string> kinds;
  for (const auto& x : SortedFindings(f, {})) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"host-process", "mig-oversized", "idle-allocation",
                                             "oom-risk"}));
  // The typed filter: a substring of namespace, pod or container ("rai" is ml/train's pod;
  // "in" is also web/infer's), with --namespace still exact.
  EXPECT_EQ(GroupRows(f, "container", SortKey::kCompute, {"", "rai"}).size(), 1u);
  EXPECT_EQ(GroupRows(f, "container", SortKey::kCompute, {"", "in"}).size(), 2u);
  EXPECT_EQ(GroupRows(f, "container", SortKey::kCompute, {"m", ""}).size(), 0u) << "exact";
  EXPECT_EQ(FilteredUnits(f, {"", "infer"}).size(), 1u);
  kinds.clear();
  for (const auto& x : SortedFindings(f, {"", "rai"})) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"host-process", "mig-oversized", "idle-allocation"}))
      << "ml/train's findings, and the host's";
}

TEST(TopFrame, LabelsGroupAndUnknownLabelsShowAsQuestionMarks) {
  auto f = TwoUnits();
  f.labels[{"ml", "train"}]["team"] = "research";
  const auto rows = GroupRows(f, "label:team", SortKey::kCompute, {});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, std::vector<std::string>{"research"});
  EXPECT_EQ(rows[1].key, std::vector<std::string>{"?"});
}

TEST(TopFrame, PricesSplitTheUnitsCostAndAddUp) {
  auto f = TwoUnits();
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  PriceFrame(f, pricing, cost::Policy{});
  ASSERT_TRUE(f.units[0].cost_per_hour && f.units[1].cost_per_hour);
  EXPECT_NEAR(*f.units[0].cost_per_hour, 4.0, 1e-9);
  EXPECT_NEAR(*f.units[1].cost_per_hour, 7.0 * 3 / 7, 1e-9);
  for (const auto& u : f.units) EXPECT_NEAR(*SumOwners(u).cost_per_hour, *u.cost_per_hour, 1e-9);
  // Memory policy, idle shared by use: train 30 of the 40 GB in use on the H100.
  EXPECT_NEAR(*f.units[0].owners[0].cost_per_hour, 3.0, 1e-9);
  const auto no_price =
      *cost::Pricing::Parse("gpu_models: {A100: 2.0}\ndefaults: false\n", "p.yaml");
  PriceFrame(f, no_price, cost::Policy{});
  EXPECT_FALSE(f.units[0].cost_per_hour.has_value());
  EXPECT_FALSE(f.units[0].owners[0].cost_per_hour.has_value());
}

TEST(TopFrame, JsonRoundTrips) {
  auto f = TwoUnits();
  f.units[1].busy_ratio = std::nullopt;
  f.units[0].busy_ratio = 0.7;
  f.units[0].owners[0].power_watts = std::nullopt;
  f.units[1].key.mode = std::nullopt;  // a unit read from counters alone: its mode is unknown
  f.labels[{"ml", "train"}]["team"] = "research";
  f.currency = "USD";
  const auto back = FrameFromJson(FrameToJson(f));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, f);
  EXPECT_EQ(FrameToJson(*back).dump(), FrameToJson(f).dump());
  EXPECT_TRUE(FrameToJson(f)["units"][1]["sharing_mode"].is_null());
  auto earlier = FrameToJson(f);  // frames saved before the mode was typed said "" for unknown
  earlier["units"][1]["sharing_mode"] = "";
  ASSERT_TRUE(FrameFromJson(earlier));
  EXPECT_FALSE(FrameFromJson(earlier)->units[1].key.mode.has_value());
  EXPECT_EQ(FrameToJson(f)["units"][0]["sharing_mode"], "time-slicing");
  f.findings.reset();  // a source without findings stays without, not "none open"
  EXPECT_FALSE(FrameFromJson(FrameToJson(f))->findings.has_value());
  EXPECT_FALSE(FrameFromJson(nlohmann::json::parse(R"({"units": [{"busy_ratio": "x"}]})")));
}

// top's output is camelCase (a label key keeps its spelling) and reads back as the same frame.
TEST(TopFrame, TheOutputIsCamelCaseAndReadsBack) {
  auto f = TwoUnits();
  f.labels[{"ml", "train"}]["cost_center"] = "research";
  const auto out = FrameOutputJson(f, "pod", SortKey::kCost, Filter{});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_TRUE(out->contains("atUnixS") && !out->contains("at_unix_s"));
  EXPECT_TRUE((*out)["units"][0].contains("sharingMode"));
  EXPECT_TRUE((*out)["pods"][0].contains("costPerHour"));
  EXPECT_EQ((*out)["podLabels"][0]["labels"]["cost_center"], "research");
  const auto back = FrameFromJson(*out);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, f);
}

// A saved frame (top --source file:PATH) is whatever the file holds: every wrong type or
// out-of-range key is an error that names what is wrong, never an exception out of the reader.
TEST(TopFrame, AHostileSavedFrameIsAnErrorNotACrash) {
  auto unit = FrameToJson(TwoUnits())["units"][0];
  const std::pair<std::function<void(nlohmann::json&)>, std::string> cases[] = {
      {[](nlohmann::json& u) { u["node"] = 7; }, "node: expected a string"},
      {[](nlohmann::json& u) { u.erase("sharing_mode"); },
       "sharing_mode: expected a string or null"},
      {[](nlohmann::json& u) { u["sharing_mode"] = "vgpu"; },
       "sharing_mode: \"vgpu\" is not exclusive, time-slicing, mps or mig"},
      {[](nlohmann::json& u) { u["gpu_fraction"] = 7; },
       "gpu_fraction: expected a number in (0, 1]"},
      {[](nlohmann::json& u) { u["gpu_fraction"] = "half"; }, "gpu_fraction"},
      {[](nlohmann::json& u) { u["label"] = 5; }, "frame: "},
      {[](nlohmann::json& u) { u["owners"] = nlohmann::json::array({3}); }, "frame: "},
      {[](nlohmann::json& u) { u["owners"][0]["kind"] = nlohmann::json::object(); }, "frame: "},
  };
  for (const auto& [edit, want] : cases) {
    auto u = unit;
    edit(u);
    const auto back = FrameFromJson(nlohmann::json{{"units", nlohmann::json::array({u})}});
    ASSERT_FALSE(back) << want;
    EXPECT_NE(back.error().message.find(want), std::string::npos) << back.error().message;
  }
  for (const char* frame :
       {R"({"units": [], "findings": [3]})", R"({"units": [], "at_unix_s": "now"})",
        R"({"units": [], "pod_labels": [{"labels": {"team": 1}}]})"}) {
    const auto back = FrameFromJson(nlohmann::json::parse(frame));
    EXPECT_FALSE(back) << frame;
  }
}

TEST(TopKeys, ViewsSortFilterPauseQuit) {
  Interaction s;
  ApplyKey(s, {Key::kChar, 'p'}, 10);
  EXPECT_EQ(s.view.view, View::kPods);
  ApplyKey(s, {Key::kTab}, 10);
  EXPECT_EQ(s.view.view, View::kFindings);
  ApplyKey(s, {Key::kChar, 's'}, 10);
  EXPECT_EQ(s.view.sort, SortKey::kMemory);
  ApplyKey(s, {Key::kChar, '/'}, 10);
  for (char c : std::string("ml Q")) ApplyKey(s, {Key::kChar, c}, 10);  // typing: no command
  EXPECT_FALSE(s.quit);
  EXPECT_EQ(*s.view.editing, "ml");
  ApplyKey(s, {Key::kEnter}, 10);
  EXPECT_EQ(s.view.filter.text, "ml");
  EXPECT_FALSE(s.view.editing);
  ApplyKey(s, {Key::kChar, '/'}, 10);
  ApplyKey(s, {Key::kBackspace}, 10);
  ApplyKey(s, {Key::kEscape}, 10);  // cancelled: the filter stays
  EXPECT_EQ(s.view.filter.text, "ml");
  ApplyKey(s, {Key::kEscape}, 10);  // not editing: clears it
  EXPECT_EQ(s.view.filter.text, "");
  ApplyKey(s, {Key::kChar, ' '}, 10);
  EXPECT_TRUE(s.view.paused);
  ApplyKey(s, {Key::kPageDown}, 10);  // the findings view: the keys move the selected row
  ApplyKey(s, {Key::kUp}, 10);
  EXPECT_EQ(s.view.selected, 9);
  EXPECT_EQ(s.scroll, 0);
  ApplyKey(s, {Key::kChar, 'u'}, 10);  // the units view: they scroll
  ApplyKey(s, {Key::kPageDown}, 10);
  ApplyKey(s, {Key::kUp}, 10);
  EXPECT_EQ(s.scroll, 9);
  ApplyKey(s, {Key::kChar, 'q'}, 10);
  EXPECT_TRUE(s.quit);
  Interaction typing;
  ApplyKey(typing, {Key::kChar, '/'}, 10);
  ApplyKey(typing, {Key::kInterrupt}, 10);  // Ctrl-C quits while a filter is typed
  EXPECT_TRUE(typing.quit);
}

TEST(TopKeys, HelpAndSidewaysScrolling) {
  Interaction s;
  ApplyKey(s, {Key::kRight}, 10);
  ApplyKey(s, {Key::kRight}, 10);
  EXPECT_EQ(s.hscroll, 2 * kColumnStep);
  ApplyKey(s, {Key::kLeft}, 10);
  ApplyKey(s, {Key::kLeft}, 10);
  ApplyKey(s, {Key::kLeft}, 10);
  EXPECT_EQ(s.hscroll, 0) << "never left of the first column";
  ApplyKey(s, {Key::kChar, '?'}, 10);
  EXPECT_TRUE(s.view.help);
  ApplyKey(s, {}, 10);  // no key within the wait: the help stays
  EXPECT_TRUE(s.view.help);
  ApplyKey(s, {Key::kChar, 'q'}, 10);  // any key closes it, q included: no surprise quit
  EXPECT_FALSE(s.view.help);
  EXPECT_FALSE(s.quit);
  ApplyKey(s, {Key::kChar, '?'}, 10);
  ApplyKey(s, {Key::kInterrupt}, 10);  // Ctrl-C still quits
  EXPECT_TRUE(s.quit);
  // The help names every key the view reacts to and the unit of each view's percentages.
  const auto text = PlainText(HelpView());
  for (const char* word : {"u p f, Tab", "/", "Escape", "space", "Left Right", "?", "q, Ctrl-C",
                           "% of the unit", "% of one GPU", "30+-25%", ">=12.0%"})
    EXPECT_NE(text.find(word), std::string::npos) << word;
}

}  // namespace
}  // namespace gpumeter::top
