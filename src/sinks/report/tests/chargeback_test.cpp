// The chargeback from stored usage: groups add up to Σ unit cost under every policy, MIG units
// cost their fraction, unpriced models are counted in hours but not cost, and every format says
// the same totals (FOCUS: per resource the allocated rows add up to the unit's charge).
#include "core/cost/chargeback.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "sinks/report/render.h"
#include "sinks/report/render_html.h"

namespace gpumeter::report {
namespace {

using domain::Owner;
using domain::OwnerKind;

Owner C(const std::string& ns, const std::string& pod) {
  return {OwnerKind::kContainer, ns, pod, "c"};
}

// Two hours of: an H100 time-sliced by search/a and ads/b; a 3g MIG instance of an H200 held by
// search/c; and a GPU of a model with no price.
std::vector<attribution::UnitRecord> Usage() {
  const double s = 7200, gib = 1024.0 * 1024 * 1024;
  attribution::UnitRecord ts{{"node-a", "GPU-1", "GPU-1", "NVIDIA H100 80GB HBM3", "",
                              domain::SharingMode::kTimeSlicing, 1.0},
                             s,
                             80 * gib * s,
                             0,
                             0,
                             {}};
  ts.owners = {{C("search", "a"), 30 * gib * s, 0.5 * s, 1000, 0.5 * s},
               {C("ads", "b"), 10 * gib * s, 0.2 * s, 400, 0.5 * s},
               {{OwnerKind::kIdle, {}, {}, {}}, 36 * gib * s, 0.3 * s, 600, 0},
               {{OwnerKind::kSystem, {}, {}, {}}, 4 * gib * s, 0, 0, 0}};
  attribution::UnitRecord mig{
      {"node-a", "MIG-1", "GPU-2", "NVIDIA H200", "3g.71gb", domain::SharingMode::kMig, 3.0 / 7},
      s,
      71 * gib * s,
      0,
      0,
      {}};
  mig.owners = {{C("search", "c"), 71 * gib * s, 0.9 * s, 2000, 1.0 * s}};
  attribution::UnitRecord odd{
      {"node-b", "GPU-9", "GPU-9", "Future GPU X", "", domain::SharingMode::kExclusive, 1.0},
      s,
      10 * gib * s,
      0,
      0,
      {}};
  odd.owners = {{C("ads", "d"), 10 * gib * s, 1.0 * s, 0, 1.0 * s}};
  return {ts, mig, odd};
}

const cost::GroupTotals* Group(const cost::Chargeback& c, const std::vector<std::string>& key) {
  for (const auto& g : c.groups)
    if (g.key == key) return &g;
  return nullptr;
}

TEST(Chargeback, HandComputedByNamespace) {
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  const auto c = cost::BuildChargeback(
      Usage(), {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kSeparate}, {"namespace"});
  // H100: 2 h × $4 = $8: search 30/80 → 3, ads 10/80 → 1, idle (idle 36 + system 4) → 4.
  // H200 MIG 3/7: 2 h × $7 × 3/7 = $6, all search/c (memory full).
  ASSERT_NE(Group(c, {"search"}), nullptr);
  EXPECT_NEAR(Group(c, {"search"})->cost, 3 + 6, 1e-9);
  EXPECT_NEAR(Group(c, {"ads"})->cost, 1, 1e-9);
  EXPECT_NEAR(Group(c, {"__idle__"})->cost, 4, 1e-9);
  EXPECT_NEAR(c.total.cost, 14, 1e-9);
  // Hours held are GPU-equivalents: search 0.5 × 2 h + 1 × 2 h × 3/7.
  EXPECT_NEAR(Group(c, {"search"})->gpu_hours_held, 1 + 6.0 / 7, 1e-9);
  EXPECT_NEAR(Group(c, {"search"})->compute_hours, 0.5 * 2 + 0.9 * 2 * 3 / 7, 1e-9);
  EXPECT_NEAR(Group(c, {"ads"})->gpu_hours_held, 1 + 2, 1e-9)
      << "the unpriced GPU's hours still count";
  ASSERT_EQ(c.unpriced_models, std::vector<std::string>{"Future GPU X"});
  EXPECT_NEAR(Group(c, {"search"})->energy_kwh, 3000 / 3.6e6, 1e-15);
}

TEST(Chargeback, GroupsAddUpUnderEveryPolicyAndGrouping) {
  const auto pricing = cost::Pricing::Defaults();
  const cost::Labels labels{{{"search", "a"}, {{"team", "blue"}}},
                            {{"ads", "b"}, {{"team", "red"}}}};
  for (auto basis :
       {cost::Basis::kMemory, cost::Basis::kCompute, cost::Basis::kBlend, cost::Basis::kRequest})
    for (auto idle : {cost::IdleRule::kShare, cost::IdleRule::kOwner, cost::IdleRule::kSeparate})
      for (const auto& by : std::vector<std::vector<std::string>>{{"namespace"},
                                                                  {"pod"},
                                                                  {"container"},
                                                                  {"label:team"},
                                                                  {"gpu_model"},
                                                                  {"node"},
                                                                  {"namespace", "gpu_model"}}) {
        const cost::Policy p{basis, 0.3, idle};
        const auto c = cost::BuildChargeback(Usage(), labels, pricing, p, by);
        double sum = 0;
        for (const auto& g : c.groups) sum += g.cost;
        EXPECT_NEAR(sum, c.total.cost, 1e-9 * c.total.cost) << p.Name();
        EXPECT_NEAR(c.total.cost, 2 * 6.88 + 2 * 7.91 * 3 / 7, 1e-9)
            << p.Name() << ": Σ unit cost = price × time";
      }
}

TEST(Chargeback, FormatsCarryTheSameTotals) {
  const auto pricing = cost::Pricing::Defaults();
  const cost::Labels labels{{{"search", "a"}, {{"team", "blue"}}}};
  const auto c = cost::BuildChargeback(Usage(), labels, pricing,
                                       {cost::Basis::kCompute, 0.5, cost::IdleRule::kShare},
                                       {"namespace", "label:team"});
  const Window w{1'796'083'200, 1'796'083'200 + 7200};
  const auto json = nlohmann::json::parse(RenderJson(c, w));
  EXPECT_NEAR(json["total"]["cost"].get<double>(), c.total.cost, 1e-12);
  EXPECT_EQ(json["window"]["start"], "2026-12-01T00:00:00Z");
  EXPECT_EQ(json["policy"], "compute/idle=share");
  EXPECT_EQ(json["groups"][0]["group"].size(), 2u);
  ASSERT_FALSE(json["units"].empty());
  EXPECT_TRUE(json["units"][0]["unit"].contains("gpuUuid") &&
              json["units"][0]["unit"].contains("sharingMode"))
      << "camelCase throughout: " << json["units"][0]["unit"].dump();
  EXPECT_TRUE(json["groups"][0]["group"].contains("label:team")) << "a group's keys are data";

  const auto csv = RenderCsv(c);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "namespace,label:team,gpu_hours_held,compute_hours,memory_gib_hours,energy_kwh,"
            "efficiency,cost,idle_cost,share,currency,policy,compute_unknown_hours,efficiency_min,"
            "efficiency_max,compute_bound_hours,memory_busy_hours,memory_busy_unknown_hours,"
            "memory_busy_bound_hours,energy_bound_kwh");
  EXPECT_NE(csv.find("\nTOTAL,,"), std::string::npos);

  const auto table = RenderTable(c, w);
  EXPECT_NE(table.find("TOTAL"), std::string::npos);
  EXPECT_NE(table.find("default price used: NVIDIA H100 80GB HBM3"), std::string::npos) << table;
  EXPECT_NE(table.find("no price for Future GPU X"), std::string::npos);

  // FOCUS: per ResourceId, BilledCost adds up to the unit's cost; every row names the method.
  const auto focus = RenderFocus(c, w, labels);
  std::istringstream in(focus);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.substr(0, 31), "BilledCost,EffectiveCost,ListCo");
  EXPECT_NE(header.find("AllocatedMethodId,AllocatedMethodDetails,AllocatedResourceId,"
                        "AllocatedResourceName,AllocatedTags"),
            std::string::npos);
  std::map<std::string, double> by_resource;
  size_t rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    const double billed = std::stod(line.substr(0, line.find(',')));
    for (const auto& u : c.units)
      if (line.find("," + u.unit.uuid + ",") != std::string::npos)
        by_resource[u.unit.uuid] += billed;
    EXPECT_NE(line.find("gpumeter:compute/idle=share"), std::string::npos);
  }
  EXPECT_GT(rows, 0u);
  for (const auto& u : c.units)
    if (u.price) {
      EXPECT_NEAR(by_resource[u.unit.uuid], u.cost, 1e-9 * u.cost) << u.unit.uuid;
    }
  EXPECT_NE(focus.find(R"(""k8s/label/team"":""blue"")"), std::string::npos)
      << "labels in AllocatedTags";

  const auto html = RenderHtml(c, w, {3600, {{w.from_unix_s, c}, {w.from_unix_s + 3600, c}}, {}});
  EXPECT_NE(html.find(fmt::format("{:.2f} USD", c.total.cost)), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"))
      << "no network reference but the SVG namespace";
}

// The page for someone from finance (issue 35 item 3): minutes of data are minute columns with
// times and the currency on the axes; the header says how much of the window has data; every bar
// label has room; idle capacity is named apart from the cost of unused time; the efficiency
// colours have a legend.
TEST(Chargeback, HtmlSaysWhatItShowsAndLeavesRoomForItsLabels) {
  const auto pricing = cost::Pricing::Defaults();
  auto usage = Usage();
  usage[0].owners.push_back({{OwnerKind::kIdle, {}, {}, {}}, 0, 0, 0, 0});
  const auto c = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kCompute, 0.5, cost::IdleRule::kShare}, {"namespace"});
  const Window w{1'796'083'200, 1'796'083'200 + 3600};  // an hour asked for
  report::OverTime t;
  t.bucket_s = 300;
  for (int i = 0; i < 3; ++i) t.buckets.emplace_back(w.from_unix_s + 2400 + 300 * i, c);
  t.data_span = std::pair<int64_t, int64_t>{w.from_unix_s + 2400, w.from_unix_s + 3240};
  const auto html = RenderHtml(c, w, t);
  EXPECT_NE(html.find("Cost by group over time (per 5 min, USD)"), std::string::npos);
  EXPECT_NE(html.find(fmt::format("{:.2f} USD</text>", c.total.cost)), std::string::npos)
      << "the axis's top carries the currency";
  EXPECT_NE(html.find(">00:40</text>"), std::string::npos) << "each column's time, whole";
  EXPECT_NE(html.find(">00:45</text>"), std::string::npos);
  EXPECT_NE(html.find(">00:50</text>"), std::string::npos);
  EXPECT_NE(html.find(">2026-12-01</text>"), std::string::npos) << "and the date under the first";
  EXPECT_NE(html.find("(data from 2026-12-01T00:40:00Z to 2026-12-01T00:55:00Z: 15 min)"),
            std::string::npos)
      << "the header tells the data's span within the hour asked for";
  EXPECT_NE(html.find("Cost of unused time"), std::string::npos);
  EXPECT_EQ(html.find(">Idle cost<"), std::string::npos) << "one meaning of idle";
  EXPECT_NE(html.find("(held by nobody)"), std::string::npos);
  EXPECT_EQ(html.find("__idle__"), std::string::npos);
  EXPECT_NE(html.find("under 30 % of the GPU time held was used"), std::string::npos);
  // Every right-aligned bar label starts inside its chart: x minus its width is not negative.
  size_t labels = 0;
  for (size_t at = html.find(R"(text-anchor="end" font-size="12">)"); at != std::string::npos;
       at = html.find(R"(text-anchor="end" font-size="12">)", at + 1)) {
    const size_t x_at = html.rfind("x=\"", at) + 3;
    const int x = std::stoi(html.substr(x_at));
    const size_t text_at = at + std::string(R"(text-anchor="end" font-size="12">)").size();
    const std::string text = html.substr(text_at, html.find('<', text_at) - text_at);
    EXPECT_GE(x - 7 * static_cast<int>(text.size()), 0) << text;
    ++labels;
  }
  EXPECT_GT(labels, 5u);
}

// Names reach CSV and FOCUS cells from a pods file or a non-validating API server: a cell that a
// spreadsheet would run as a formula is neutralised; the table escapes control characters.
TEST(Chargeback, CellsThatWouldBeFormulasAreNeutralised) {
  const auto pricing = cost::Pricing::Defaults();
  const cost::Labels labels{{{"search", "a"}, {{"team", "=cmd|' -C calc'!A0"}}}};
  const auto c =
      cost::BuildChargeback(Usage(), labels, pricing,
                            {cost::Basis::kCompute, 0.5, cost::IdleRule::kShare}, {"label:team"});
  const auto csv = RenderCsv(c);
  EXPECT_NE(csv.find("\n'=cmd|' -C calc'!A0,"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\n=cmd"), std::string::npos) << csv;
  const Window w{1'796'083'200, 1'796'083'200 + 7200};
  auto with_name = c;
  with_name.groups[0].key[0] = "team\x1b[2J\xe2\x80\xae";
  const auto table = RenderTable(with_name, w);
  EXPECT_NE(table.find("team\\x1b[2J\\u{202e}"), std::string::npos) << table;
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
}

TEST(Chargeback, FocusListCostIsBeforeTheDiscountAndQuantitiesAddUp) {
  const auto pricing = *cost::Pricing::Parse("discount: 0.5\n", "p.yaml");
  const auto c = cost::BuildChargeback(
      Usage(), {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kSeparate}, {"namespace"});
  const Window w{1'796'083'200, 1'796'083'200 + 7200};
  std::istringstream in(RenderFocus(c, w, {}));
  std::string line;
  std::getline(in, line);
  const auto consumed_col = [&] {  // the header's position of ConsumedQuantity
    size_t col = 0, pos = 0;
    while (line.substr(pos, line.find(',', pos) - pos) != "ConsumedQuantity")
      pos = line.find(',', pos) + 1, ++col;
    return col;
  }();
  std::map<std::string, double> consumed;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    size_t pos = 0;
    while (f.size() <= consumed_col) {  // the leading columns hold no quoted commas
      const size_t comma = line.find(',', pos);
      f.push_back(line.substr(pos, comma - pos));
      pos = comma + 1;
    }
    EXPECT_NEAR(std::stod(f[2]), 2 * std::stod(f[0]), 1e-12)
        << "ListCost is BilledCost before the 50 % discount";
    for (const auto& u : c.units)
      if (line.find("," + u.unit.uuid + ",") != std::string::npos)
        consumed[u.unit.uuid] += std::stod(f[consumed_col]);
  }
  for (const auto& u : c.units)
    if (u.price) {
      EXPECT_NEAR(consumed[u.unit.uuid], u.hours * u.unit.fraction, 1e-9)
          << u.unit.uuid << ": quantities add up to the unit's GPU-hours";
    }
}

TEST(Chargeback, GroupByTexts) {
  EXPECT_EQ(*cost::ParseGroupBy("namespace,label:team"),
            (std::vector<std::string>{"namespace", "label:team"}));
  for (const char* bad : {"team", "namespace,", "label:", ""}) {
    const auto g = cost::ParseGroupBy(bad);
    ASSERT_FALSE(g) << bad;
    EXPECT_NE(g.error().message.find("--by"), std::string::npos);
  }
}

// An A100 MIG instance without DCGM: search/c ran on it for the two hours but its activity was
// never measured. Its compute is unknown, not 0: efficiency is a range in every format.
TEST(Chargeback, UnknownComputeIsARangeNeverZeroEfficiency) {
  auto usage = Usage();
  auto& c = usage[1].owners[0];
  c.compute_seconds = 0;
  c.compute_unknown_seconds = 7200;
  // The unknown time itself is unattributed's (attribution).
  usage[1].owners.push_back({{OwnerKind::kUnattributed, {}, {}, {}}, 0, 7200, 0, 0});
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  const auto cb = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
  const cost::GroupTotals* g = nullptr;
  for (const auto& x : cb.groups)
    if (x.key == std::vector<std::string>{"search/c"}) g = &x;
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->efficiency().has_value());
  ASSERT_TRUE(g->efficiency_bounds().has_value());
  EXPECT_DOUBLE_EQ(g->efficiency_bounds()->first, 0.0);
  EXPECT_DOUBLE_EQ(g->efficiency_bounds()->second, 1.0);
  EXPECT_NEAR(g->compute_unknown_hours, 2 * 3.0 / 7, 1e-12) << "GPU-equivalents, as compute";
  EXPECT_NEAR(cb.total.compute_unknown_hours, 2 * 3.0 / 7, 1e-12);
  EXPECT_FALSE(cb.total.efficiency().has_value()) << "the total hides the same unknown";

  const auto table = RenderTable(cb, {0, 7200});
  EXPECT_NE(table.find("unknown-h"), std::string::npos) << table;
  EXPECT_NE(table.find("0.0-100.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("compute unknown for 0.857 GPU-h"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(RenderJson(cb, {0, 7200}));
  for (const auto& j : json["groups"])
    if (j["group"]["pod"] == "search/c") {
      EXPECT_TRUE(j["efficiency"].is_null());
      EXPECT_EQ(j["efficiencyBounds"], nlohmann::json::array({0.0, 1.0}));
      EXPECT_NEAR(j["computeUnknownHours"].get<double>(), 2 * 3.0 / 7, 1e-12);
    } else if (j["group"]["pod"] == "search/a") {
      EXPECT_NEAR(j["efficiency"].get<double>(), 1.0, 1e-12) << "0.5 used of 0.5 held";
      EXPECT_EQ(j["computeUnknownHours"], 0.0);
    }
  // CSV: efficiency empty, then the unknown hours and the bounds at the end of the row.
  std::vector<std::string> fields;
  {
    const auto csv = RenderCsv(cb);
    const auto at = csv.find("\nsearch/c,");
    ASSERT_NE(at, std::string::npos) << csv;
    std::stringstream row(csv.substr(at + 1, csv.find('\n', at + 1) - at - 1));
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
  }
  ASSERT_EQ(fields.size(), 19u);  // one column per header field
  EXPECT_EQ(fields[14], "0") << "no estimate, no bound";
  EXPECT_EQ(fields[5], "") << "efficiency";
  EXPECT_NEAR(std::stod(fields[11]), 2 * 3.0 / 7, 1e-9);
  EXPECT_EQ(fields[12], "0");
  EXPECT_EQ(fields[13], "1");
  // Without unknowns the table has no extra column and no note.
  const auto known = RenderTable(
      cost::BuildChargeback(Usage(), {}, pricing,
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"}),
      {0, 7200});
  EXPECT_EQ(known.find("unknown"), std::string::npos) << known;
  EXPECT_NE(RenderHtml(cb, {0, 7200}, report::OverTime{}).find("0.0-100.0%"), std::string::npos);
}

// The time-sliced H100's split was an estimate (an even split, no per-process samples) for the
// first hour: a's 0.5 h ± 0.3 h and b's 0.2 h ± 0.3 h. Each group and the total carry their ±, in
// every format, and efficiency's range widens by it; units without an estimate show none.
// The cell of a CSV's row whose first field is `first`, in the column named `column`; "" if none.
std::string CsvCell(const std::string& csv, const std::string& first, const std::string& column) {
  auto fields = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line);
    for (std::string f; std::getline(in, f, ',');) out.push_back(f);
    return out;
  };
  std::stringstream in(csv);
  std::string line;
  std::getline(in, line);
  const auto header = fields(line);
  const auto col = std::find(header.begin(), header.end(), column);
  EXPECT_NE(col, header.end()) << column << " not in " << line;
  while (std::getline(in, line)) {
    const auto f = fields(line);
    if (!f.empty() && f[0] == first && col != header.end() &&
        static_cast<size_t>(col - header.begin()) < f.size())
      return f[static_cast<size_t>(col - header.begin())];
  }
  ADD_FAILURE() << "no row " << first << " in\n" << csv;
  return "";
}

// Memory traffic (hand-computed): search/a moved memory 40 % of 2 h on the whole H100 (0.8 GPU-h),
// ads/b 10 % (0.2), the rest idle; search/c 60 % of 2 h on a 3/7 instance (0.514 GPU-h), 20 % of
// it estimated (± 0.4 × 3/7 h); the unpriced GPU's traffic was not measured (2 h unknown).
TEST(Chargeback, MemoryTrafficInEveryFormatWithItsUnknownAndBound) {
  auto usage = Usage();
  const double s = 7200;
  usage[0].owners[0].memory_busy_seconds = 0.4 * s;
  usage[0].owners[1].memory_busy_seconds = 0.1 * s;
  usage[0].owners[2].memory_busy_seconds = 0.5 * s;
  usage[1].owners[0].memory_busy_seconds = 0.6 * s;
  usage[1].owners[0].memory_busy_bound_seconds = 0.2 * s;
  usage[1].owners.push_back({{OwnerKind::kIdle, {}, {}, {}}, 0, 0.1 * s, 0, 0});
  usage[1].owners.back().memory_busy_seconds = 0.4 * s;
  usage[2].owners[0].memory_busy_unknown_seconds = s;
  usage[2].owners.push_back({{OwnerKind::kUnattributed, {}, {}, {}}, 0, 0, 0, 0});
  usage[2].owners.back().memory_busy_seconds = s;
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  const auto cb = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  const auto* c = Group(cb, {"search/c"});
  const auto* d = Group(cb, {"ads/d"});
  ASSERT_TRUE(a && c && d);
  EXPECT_NEAR(a->memory_busy_hours, 0.8, 1e-12);
  EXPECT_NEAR(c->memory_busy_hours, 1.2 * 3 / 7, 1e-12);
  EXPECT_NEAR(c->memory_busy_bound_hours, 0.4 * 3 / 7, 1e-12);
  EXPECT_EQ(d->memory_busy_hours, 0.0);
  EXPECT_NEAR(d->memory_busy_unknown_hours, 2.0, 1e-12) << "unknown, not 0";
  EXPECT_NEAR(cb.total.memory_busy_hours, 0.8 + 0.2 + 1.2 * 3 / 7, 1e-12) << "containers only";
  EXPECT_NEAR(cb.total.memory_busy_unknown_hours, 2.0, 1e-12);

  const auto table = RenderTable(cb, {0, 7200});
  EXPECT_NE(table.find("membusy-h"), std::string::npos) << table;
  EXPECT_NE(table.find("memory traffic unknown for 2.000 GPU-h"), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("estimated: ±{:.3f} GPU-h of membusy-h", 0.4 * 3 / 7)),
            std::string::npos)
      << table;
  const auto json = nlohmann::json::parse(RenderJson(cb, {0, 7200}));
  EXPECT_NEAR(json["total"]["memoryBusyUnknownHours"].get<double>(), 2.0, 1e-12);
  for (const auto& j : json["groups"])
    if (j["group"]["pod"] == "search/c") {
      EXPECT_NEAR(j["memoryBusyHours"].get<double>(), 1.2 * 3 / 7, 1e-12);
      EXPECT_NEAR(j["memoryBusyBoundHours"].get<double>(), 0.4 * 3 / 7, 1e-12);
    }
  const auto csv = RenderCsv(cb);
  EXPECT_EQ(CsvCell(csv, "search/a", "memory_busy_hours"), "0.8");
  EXPECT_EQ(CsvCell(csv, "ads/d", "memory_busy_unknown_hours"), "2");
  const auto html = RenderHtml(cb, {0, 7200}, report::OverTime{});
  EXPECT_NE(html.find("<th>memory busy h</th>"), std::string::npos);
  EXPECT_NE(html.find("0.000 + 2.000 unknown"), std::string::npos);
  EXPECT_NE(html.find(fmt::format("{:.3f} ± {:.3f}", 1.2 * 3 / 7, 0.4 * 3 / 7)), std::string::npos);
}

TEST(Chargeback, EstimatedSplitsCarryTheirBoundInEveryFormat) {
  auto usage = Usage();
  usage[0].owners[0].compute_bound_seconds = 1080;  // search/a
  usage[0].owners[1].compute_bound_seconds = 1080;  // ads/b
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  const auto cb = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  const auto* c = Group(cb, {"search/c"});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(a->compute_bound_hours, 0.3, 1e-12);
  EXPECT_EQ(c->compute_bound_hours, 0.0);
  EXPECT_NEAR(cb.total.compute_bound_hours, 0.6, 1e-12) << "a sum's bound is its parts'";
  ASSERT_TRUE(a->efficiency().has_value()) << "an estimate is still a value";
  EXPECT_NEAR(*a->efficiency(), 1.0, 1e-12);
  EXPECT_NEAR(a->efficiency_bounds()->first, 0.7, 1e-12);   // (1 - 0.3) / 1 GPU-h held
  EXPECT_NEAR(a->efficiency_bounds()->second, 1.3, 1e-12);  // (1 + 0.3) / 1
  const auto* b = Group(cb, {"ads/b"});
  ASSERT_NE(b, nullptr);
  EXPECT_NEAR(b->efficiency_bounds()->first, 0.1, 1e-12);  // (0.4 - 0.3) / 1 GPU-h held

  const auto table = RenderTable(cb, {0, 7200});
  EXPECT_NE(table.find("± est-h"), std::string::npos) << table;
  EXPECT_NE(table.find("±0.300"), std::string::npos) << table;
  EXPECT_NE(table.find("estimated: ±0.600 GPU-h"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(RenderJson(cb, {0, 7200}));
  EXPECT_NEAR(json["total"]["computeBoundHours"].get<double>(), 0.6, 1e-12);
  for (const auto& j : json["groups"])
    if (j["group"]["pod"] == "search/a") {
      EXPECT_NEAR(j["computeBoundHours"].get<double>(), 0.3, 1e-12);
      EXPECT_NEAR(j["efficiencyBounds"][0].get<double>(), 0.7, 1e-12);
    }
  EXPECT_EQ(CsvCell(RenderCsv(cb), "search/a", "compute_bound_hours"), "0.3");
  EXPECT_NE(RenderHtml(cb, {0, 7200}, report::OverTime{}).find("1.000 ± 0.300"), std::string::npos);
  // Without estimates: no ± column, no note.
  const auto exact = RenderTable(
      cost::BuildChargeback(Usage(), {}, pricing,
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"}),
      {0, 7200});
  EXPECT_EQ(exact.find("±"), std::string::npos) << exact;
}

// Energy estimated inside DCGM collections carries its ± into every format; the total, the
// units' measured energy, has none (the busy rows' and idle's bounds cancel).
TEST(Chargeback, EstimatedEnergyCarriesItsBoundInEveryFormat) {
  auto usage = Usage();
  usage[0].owners[0].energy_bound_joules = 1.8e6;  // search/a: ±0.5 kWh
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  const auto cb = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  const auto* c = Group(cb, {"search/c"});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(a->energy_bound_kwh, 0.5, 1e-12);
  EXPECT_EQ(c->energy_bound_kwh, 0.0);
  EXPECT_EQ(cb.total.energy_bound_kwh, 0.0);

  const auto table = RenderTable(cb, {0, 7200});
  EXPECT_NE(table.find("± est-kWh"), std::string::npos) << table;
  EXPECT_NE(table.find("±0.500"), std::string::npos) << table;
  EXPECT_NE(table.find("energy inside DCGM collections"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(RenderJson(cb, {0, 7200}));
  for (const auto& j : json["groups"])
    if (j["group"]["pod"] == "search/a") {
      EXPECT_NEAR(j["energyBoundKWh"].get<double>(), 0.5, 1e-12);
    }
  EXPECT_EQ(CsvCell(RenderCsv(cb), "search/a", "energy_bound_kwh"), "0.5");
  EXPECT_NE(RenderHtml(cb, {0, 7200}, report::OverTime{})
                .find(fmt::format("{:.3f} ± 0.500", a->energy_kwh)),
            std::string::npos);
  const auto exact = RenderTable(
      cost::BuildChargeback(Usage(), {}, pricing,
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"}),
      {0, 7200});
  EXPECT_EQ(exact.find("est-kWh"), std::string::npos) << exact;
}

// Two tenants of a time-sliced GPU whose split went unmeasured for half an hour: each one's use
// is unknown for that half hour, but the GPU had only one half hour: a group holding both, and
// the total, count it once; each alone may have used it all (its bound is not capped at 1).
TEST(Chargeback, OneUnknownTimeSharedByTenantsIsCountedOnce) {
  auto usage = Usage();
  auto& ts = usage[0];
  ts.owners[0].compute_unknown_seconds = 1800;  // search/a
  ts.owners[1].compute_unknown_seconds = 1800;  // ads/b
  ts.owners.push_back({{OwnerKind::kUnattributed, {}, {}, {}}, 0, 1800, 0, 0});
  ts.owners[2].compute_seconds -= 1800;  // idle gives the half hour up
  const auto pricing =
      *cost::Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
  const auto by_pod = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
  EXPECT_NEAR(by_pod.total.compute_unknown_hours, 0.5, 1e-12) << "not 1.0";
  for (const auto& g : by_pod.groups)
    if (g.key[0] == "search/a" || g.key[0] == "ads/b") {
      EXPECT_NEAR(g.compute_unknown_hours, 0.5, 1e-12) << g.key[0];
      // Held 0.5 × 2 h = 1 GPU-h; used ≥ 1 h (a) or 0.4 h (b), and up to half an hour more.
      ASSERT_TRUE(g.efficiency_bounds()) << g.key[0];
      EXPECT_NEAR(g.efficiency_bounds()->second - g.efficiency_bounds()->first, 0.5, 1e-12);
    }
  for (const auto& g : by_pod.groups)
    if (g.key[0] == "search/a") {
      EXPECT_NEAR(g.efficiency_bounds()->second, 1.5, 1e-12) << "above 1";
    }
  // Both tenants in one group (the node): once.
  const auto by_node = cost::BuildChargeback(
      usage, {}, pricing, {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"node"});
  for (const auto& g : by_node.groups)
    if (g.key[0] == "node-a") {
      EXPECT_NEAR(g.compute_unknown_hours, 0.5, 1e-12);
    }
}

}  // namespace
}  // namespace gpumeter::report
