// Every format of the chargeback (table, CSV, JSON, FOCUS, HTML) says the same totals (FOCUS: per
// resource the allocated rows add up to the unit's charge), neutralises cells a spreadsheet would
// run, and shows unknown use, estimated splits and memory traffic with their unknown hours and
// bounds. What BuildChargeback computes is tested in core/cost/tests/chargeback_test.cpp, on the
// same usage (core/cost/tests/chargeback_usage.h).
#include "core/cost/chargeback.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "core/cost/tests/chargeback_usage.h"
#include "sinks/report/render.h"
#include "sinks/report/render_html.h"

namespace gpumeter::report {
namespace {

using cost::test_support::FilePrices;
using cost::test_support::Group;
using cost::test_support::Usage;
using domain::OwnerKind;

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

// The page for someone from finance: minutes of data are minute columns with times and the
// currency on the axes; the header says how much of the window has data; every bar label has
// room; idle capacity is named apart from the cost of unused time; the efficiency colours have a
// legend.
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

// search/c's compute on its MIG instance was never measured: efficiency is a range in every
// format, with the unknown hours beside it; without unknowns there is no such column or note.
TEST(Chargeback, UnknownComputeIsARangeInEveryFormat) {
  const auto pricing = FilePrices();
  const auto cb =
      cost::BuildChargeback(cost::test_support::UnknownComputeUsage(), {}, pricing,
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
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

// Memory traffic with its unknown and its bound in every format (the hand computation is
// cost::test_support::MemoryTrafficUsage's).
TEST(Chargeback, MemoryTrafficInEveryFormatWithItsUnknownAndBound) {
  const auto cb =
      cost::BuildChargeback(cost::test_support::MemoryTrafficUsage(), {}, FilePrices(),
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
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

// The time-sliced H100's split was an estimate for its first hour (a's and b's ±0.3 h): each
// group and the total show their ± in every format; units without an estimate show none.
TEST(Chargeback, EstimatedSplitsCarryTheirBoundInEveryFormat) {
  const auto pricing = FilePrices();
  const auto cb =
      cost::BuildChargeback(cost::test_support::EstimatedSplitUsage(), {}, pricing,
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
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

// Energy estimated inside DCGM collections carries its ± into every format.
TEST(Chargeback, EstimatedEnergyCarriesItsBoundInEveryFormat) {
  const auto pricing = FilePrices();
  const auto cb =
      cost::BuildChargeback(cost::test_support::EstimatedEnergyUsage(), {}, pricing,
                            {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  ASSERT_NE(a, nullptr);
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

}  // namespace
}  // namespace gpumeter::report
