#include "sinks/report/render_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/html.h"
#include "sinks/report/render.h"

namespace gpumeter::report {
namespace {

std::string Esc(const std::string& s) { return HtmlEscape(s); }

// The idle owner's group is capacity nobody held; the page's "idle cost" is all unused time's.
// Named apart so the two never read as one.
constexpr const char* kNobody = "(held by nobody)";

std::string Name(const cost::GroupTotals& g) {
  std::string s;
  for (const auto& k : g.key) s += (s.empty() ? "" : " / ") + (k.idle() ? kNobody : k.label());
  return s;
}

// Pixels a label of `text` takes at font-size 12 in a sans-serif face, generously: a column this
// wide never clips it (7 px a character; the widest glyphs of such faces are about that).
int LabelWidth(const std::string& text) { return 7 * static_cast<int>(text.size()) + 12; }

const char* const kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
const char* Color(size_t i) { return kColors[i % std::size(kColors)]; }

using Bar = std::tuple<std::string, double, std::string>;  // (label, value, color)

// Horizontal bars, scaled to the largest.
std::string Bars(const std::vector<Bar>& bars, const std::string& unit) {
  double max = 0;
  int label_w = 120;  // as wide as the longest label, so none is cut at the left edge
  for (const auto& b : bars)
    max = std::max(max, std::get<1>(b)), label_w = std::max(label_w, LabelWidth(std::get<0>(b)));
  const int row = 22, bar_w = 420;
  std::string svg =
      fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img">)",
                  label_w + bar_w + 120, row * static_cast<int>(bars.size()) + 4);
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, v, color] = bars[i];
    const double w = max > 0 ? bar_w * v / max : 0;
    const int y = static_cast<int>(i) * row;
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" font-size="12">{}</text>)",
                       label_w - 6, y + 15, Esc(label));
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{:.1f}" height="{}" fill="{}"/>)", label_w,
                       y + 3, w, row - 6, color);
    svg += fmt::format(
        R"(<text x="{:.1f}" y="{}" font-size="12">{}</text>)", label_w + w + 4, y + 15,
        Esc(unit.empty() ? fmt::format("{:.1f}%", v) : fmt::format("{:.2f} {}", v, unit)));
  }
  return svg + "</svg>";
}

// " (data from A to B, N min)" where the data covers less than the window; "" otherwise.
std::string DataSpan(const Window& w, const std::optional<std::pair<int64_t, int64_t>>& data) {
  if (!data) return "";
  const int64_t from = std::max(w.from_unix_s, data->first);
  const int64_t to = std::min(w.to_unix_s, data->second + 60);  // the last minute's end
  if (to <= from || (from <= w.from_unix_s + 60 && to >= w.to_unix_s - 60)) return "";
  const int64_t s = to - from;
  return fmt::format(" (data from {} to {}: {})", Rfc3339(from), Rfc3339(to),
                     s < 7200 ? fmt::format("{} min", s / 60)
                              : fmt::format("{:.1f} h", static_cast<double>(s) / 3600));
}

// The page up to the first chart: style, title, window, the totals as KPIs and how cost is split.
std::string Head(const cost::Chargeback& c, const Window& w,
                 const std::optional<std::pair<int64_t, int64_t>>& data,
                 const std::string& cost_note) {
  std::string h =
      R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>GPU chargeback</title><style>
body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}.total td{font-weight:bold;border-top:2px solid #222}.note{color:#555;font-size:13px}
.kpi{display:inline-block;margin-right:2.5em}.kpi b{display:block;font-size:1.6em}</style></head><body>)";
  h += "<h1>GPU chargeback</h1>";
  h += fmt::format(
      "<p class=\"note\">{} to {}{} &middot; cost policy <code>{}</code> &middot; grouped by {} "
      "&middot; currency {}</p>",
      Rfc3339(w.from_unix_s), Rfc3339(w.to_unix_s), DataSpan(w, data), Esc(c.policy),
      Esc(fmt::format("{}", fmt::join(c.dimensions, ", "))), Esc(c.currency));
  h += fmt::format(
      "<div><span class=\"kpi\">Total cost<b id=\"total-cost\">{:.2f} {}</b></span><span "
      "class=\"kpi\">Cost of unused time<b>{:.2f} {}</b></span>"
      "<span class=\"kpi\">GPU-hours held<b>{:.2f}</b></span><span class=\"kpi\">Efficiency (used "
      "/ held)<b>{}</b></span></div>",
      c.total.cost, Esc(c.currency), c.total.idle_cost, Esc(c.currency), c.total.gpu_hours_held,
      FormatEfficiency(c.total));
  h += "<p class=\"note\">";
  h += cost_note.empty() ? "Every GPU's cost is its price per hour &times; the hours it was "
                           "accounted"
                         : cost_note;
  h += ", split between the containers that used or held it by the policy above. The "
       "cost of unused time is every GPU's time nobody used: the policy places it on the groups "
       "that held the GPU (their idle cost) or, for capacity nobody held, on &ldquo;";
  h += kNobody;
  h += "&rdquo;. The groups add up to the total.</p>";
  return h;
}

// One bucket's column of the cost-over-time chart, `left` pixels in: the `top` groups stacked
// bottom up, then the rest as "other"; `max` is the cost at the chart's full `height`.
std::string OverTimeColumn(const cost::Chargeback& hour, size_t i,
                           const std::vector<std::string>& top, double max, int col, int height,
                           int left) {
  std::string svg;
  double y = height;
  std::map<std::string, double> by;
  double other = 0;
  for (const auto& g : hour.groups) {
    const auto n = Name(g);
    if (std::find(top.begin(), top.end(), n) != top.end())
      by[n] += g.cost;
    else
      other += g.cost;
  }
  auto stack = [&](double v, const char* color, const std::string& title) {
    const double hgt = max > 0 ? height * v / max : 0;
    y -= hgt;
    svg += fmt::format(
        R"(<rect x="{}" y="{:.1f}" width="{}" height="{:.1f}" fill="{}"><title>{}</title></rect>)",
        left + col * static_cast<int>(i), y, col - 2, hgt, color, Esc(title));
  };
  for (size_t k = 0; k < top.size(); ++k) stack(by[top[k]], Color(k), top[k]);
  stack(other, "#cccccc", "other");
  return svg;
}

// Cost by group over time: stacked columns per bucket, the top groups by colour; "" without any.
std::string CostOverTime(const OverTime& over_time, const std::vector<std::string>& top,
                         const std::string& currency) {
  const auto& buckets = over_time.buckets;
  if (buckets.empty()) return "";
  const int64_t b = over_time.bucket_s;
  std::string h = "<h2>Cost by group over time (" +
                  (b == 60         ? std::string("per minute")
                   : b == 3600     ? std::string("per hour")
                   : b % 3600 == 0 ? fmt::format("per {} hours", b / 3600)
                                   : fmt::format("per {} min", b / 60)) +
                  ", " + Esc(currency) + ")</h2>";
  double max = 0;
  for (const auto& [t, cb] : buckets) max = std::max(max, cb.total.cost);
  const int n = static_cast<int>(buckets.size());
  const int col = std::max(6, std::min(60, 900 / n)), height = 220, left = 90;
  // Under the columns, UTC: the time of day every `every` columns (so that labels never
  // overlap), and on a second line the date under the first column and where a day starts.
  const int label = LabelWidth("12:43"), date = LabelWidth("2026-12-06");
  const int every = std::max(1, (label + col - 1) / col);
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img">)",
      std::max(left + col * n, left + col * ((n - 1) / every * every) + date) + 20, height + 44);
  for (size_t i = 0; i < buckets.size(); ++i)
    svg += OverTimeColumn(buckets[i].second, i, top, max, col, height, left);
  svg += fmt::format(R"(<text x="{}" y="12" font-size="11" text-anchor="end">{:.2f} {}</text>)"
                     R"(<text x="{}" y="{}" font-size="11" text-anchor="end">0 {}</text>)",
                     left - 6, max, Esc(currency), left - 6, height, Esc(currency));
  for (int i = 0; i < n; i += every) {
    const int64_t t = buckets[static_cast<size_t>(i)].first;
    const std::string when = Rfc3339(t);  // 2026-12-06T12:43:00Z
    svg += fmt::format(R"(<text x="{}" y="{}" font-size="11">{}</text>)", left + col * i,
                       height + 16, when.substr(11, 5));
    if (i == 0 || t % 86400 < b * every)
      svg += fmt::format(R"(<text x="{}" y="{}" font-size="11">{}</text>)", left + col * i,
                         height + 30, when.substr(0, 10));
  }
  svg += "</svg><p class=\"note\">";
  for (size_t k = 0; k < top.size(); ++k)
    svg +=
        fmt::format(R"(<span style="color:{}">&#9632;</span> {} &nbsp; )", Color(k), Esc(top[k]));
  return h + svg + "</p>";
}

std::string TopSpenders(const cost::Chargeback& c) {
  std::vector<Bar> spenders;
  for (size_t i = 0; i < c.groups.size() && i < 10; ++i)
    spenders.emplace_back(Name(c.groups[i]), c.groups[i].cost, Color(i));
  return "<h2>Top spenders</h2>" + Bars(spenders, c.currency);
}

// Used vs idle per GPU: cost placed on containers vs idle rows, per physical GPU.
std::string UsedVsIdle(const cost::Chargeback& c) {
  std::map<std::string, std::pair<double, double>> per_gpu;  // gpu → (used, idle)
  for (const auto& u : c.units)
    for (const auto& r : u.rows) {
      auto& p =
          per_gpu[u.unit.node + " " + u.unit.gpu_uuid.substr(0, 12) + " (" + u.unit.model + ")"];
      p.first += r.cost - r.idle_cost;
      p.second += r.idle_cost;
    }
  std::string h = "<h2>Used vs idle cost per GPU</h2>";
  std::vector<Bar> gpu_bars;
  for (const auto& [g, p] : per_gpu) {
    gpu_bars.emplace_back(g + " used", p.first, "#59a14f");
    gpu_bars.emplace_back(g + " idle", p.second, "#bab0ac");
  }
  return h + Bars(gpu_bars, c.currency);
}

// Efficiency of the first ten groups that held anything; under 30% in red.
std::string Efficiency(const cost::Chargeback& c) {
  std::vector<Bar> eff_bars;
  for (size_t i = 0; i < c.groups.size() && eff_bars.size() < 10; ++i)
    if (auto e = c.groups[i].efficiency())
      eff_bars.emplace_back(Name(c.groups[i]), 100 * *e, *e < 0.3 ? "#e15759" : "#4e79a7");
  std::string note;
  if (c.total.compute_unknown_hours > 0)
    note = fmt::format(
        "<p class=\"note\">Groups that ran where activity was not measured ({:.3f} GPU-h) have no "
        "bar: their efficiency is a range, in the table.</p>",
        c.total.compute_unknown_hours);
  if (c.total.compute_bound_hours > 0)
    note += fmt::format(
        "<p class=\"note\">{:.3f} GPU-h of compute are estimated splits of a shared unit's busy "
        "time: the table gives each group's compute-h ± the bound the truth lies within.</p>",
        c.total.compute_bound_hours);
  const std::string legend =
      "<p class=\"note\"><span style=\"color:#e15759\">&#9632;</span> under 30 % of the GPU time "
      "held was used &nbsp; <span style=\"color:#4e79a7\">&#9632;</span> 30 % or more (over 100 "
      "%: a time-sliced or MPS holder used more than its share)</p>";
  return "<h2>Efficiency: GPU time used / GPU time held</h2>" + Bars(eff_bars, "") + legend + note;
}

// Every group, then the total, as a table; then the notes on missing and default prices.
std::string GroupsTable(const cost::Chargeback& c) {
  std::string h =
      "<h2>All groups</h2><table><tr><th>" +
      Esc(fmt::format("{}", fmt::join(c.dimensions, " / "))) +
      "</th><th>GPU-h held</th><th>compute-h</th><th>memory busy h</th><th>memory "
      "GiB-h</th><th>kWh</th><th>efficiency</th><th>cost</th><th>idle cost</th><th>share</th></tr>";
  auto row = [&](const cost::GroupTotals& g, const std::string& name, const char* cls) {
    h += fmt::format(
        "<tr "
        "class=\"{}\"><td>{}</td><td>{:.3f}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</"
        "td><td>{}</td><td>{:.4f}</td><td>{:.4f}</td><td>{:.1f}%</td></tr>",
        cls, Esc(name), g.gpu_hours_held,
        g.compute_bound_hours > 0
            ? fmt::format("{:.3f} ± {:.3f}", g.compute_hours, g.compute_bound_hours)
            : fmt::format("{:.3f}", g.compute_hours),
        FormatMemoryBusy(g), g.memory_gib_hours, FormatEnergy(g), FormatEfficiency(g), g.cost,
        g.idle_cost, c.total.cost > 0 ? 100 * g.cost / c.total.cost : 0.0);
  };
  for (const auto& g : c.groups) row(g, Name(g), "");
  row(c.total, "Total", "total");
  h += "</table>";
  if (c.total.memory_busy_unknown_hours > 0 || c.total.memory_busy_bound_hours > 0)
    h += "<p class=\"note\">Memory busy h: the GPU memory's traffic (a second measure of use, "
         "docs/attribution.md); '+ x unknown' where it was not measured, '±' where it is an "
         "estimated split.</p>";
  for (const auto& m : c.unpriced_models)
    h += "<p class=\"note\">No price for " + Esc(m) +
         ": its hours are counted, its cost is not.</p>";
  for (const auto& f : c.flagged_prices)
    h +=
        "<p class=\"note\">Default price used: " + Esc(f) + ". Set your own in a pricing file.</p>";
  return h;
}

}  // namespace

std::string RenderHtml(const cost::Chargeback& c, const Window& w, const OverTime& over_time,
                       const std::string& extra_sections, const std::string& cost_note) {
  std::string h = Head(c, w, over_time.data_span, cost_note);
  std::vector<std::string> top;  // the groups the cost-over-time chart colours
  for (const auto& g : c.groups)
    if (top.size() < 8) top.push_back(Name(g));
  h += CostOverTime(over_time, top, c.currency);
  h += TopSpenders(c);
  h += UsedVsIdle(c);
  h += Efficiency(c);
  h += GroupsTable(c);
  return h + extra_sections + "</body></html>\n";
}

}  // namespace gpumeter::report
