#include "sinks/report/render_rightsize.h"

#include <fmt/format.h>

#include <map>

#include "common/html.h"
#include "common/text_cell.h"

namespace gpumeter::rightsize {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A history length for people: minutes, hours or days.
std::string Span(double days) {
  if (days >= 1) return fmt::format("{:.1f} d", days);
  if (days * 24 >= 1) return fmt::format("{:.1f} h", days * 24);
  return fmt::format("{:.0f} min", days * 1440);
}

std::string Money(const Recommendation& r) {
  return r.monthly_savings ? fmt::format("{:.2f} {}", *r.monthly_savings, r.currency)
                           : "? (no price)";
}

nlohmann::json Opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string RenderTable(const std::vector<Recommendation>& rs, const RecommendOptions& o) {
  const std::string min_history =
      o.min_history_s >= 86400  ? fmt::format("{:.1f} days", o.min_history_s / 86400)
      : o.min_history_s >= 3600 ? fmt::format("{:.1f} h", o.min_history_s / 3600)
                                : fmt::format("{:.0f} min", o.min_history_s / 60);
  std::string out = fmt::format(
      "GPU rightsizing: margin {:.0f} %, minimum history {}; savings per month ({:.0f} h)\n",
      100 * o.margin, min_history, o.hours_per_month);
  out += fmt::format("{:<8} {:<46} {:<26} {:<44} {:>15} {:>13} {:>8} {:>16}\n", "action",
                     "workload (namespace/controller/container)", "now", "recommended",
                     "memory pk/tgt", "compute p90", "history", "saves/month");
  std::map<std::string, double> total;  // by currency
  for (const auto& r : rs) {
    out += fmt::format(
        "{:<8} {:<46} {:<26} {:<44} {:>15} {:>13} {:>8} {:>16}\n", ToString(r.action),
        TerminalCell(r.key.Name()),
        r.replicas > 1 ? fmt::format("{} ×{}", r.current, r.replicas) : r.current, r.recommended,
        fmt::format("{:.1f}/{:.1f}G", r.memory_peak_bytes / kGiB, r.memory_target_bytes / kGiB),
        r.compute_p90 ? fmt::format("{:.1f} %", 100 * *r.compute_p90) : "?", Span(r.days),
        Money(r));
    out += "         " + TerminalCell(r.reason) + "\n";
    if (r.monthly_savings) total[r.currency] += *r.monthly_savings;
  }
  for (const auto& [currency, v] : total)
    out += fmt::format("total savings per month: {:.2f} {}\n", v, currency);
  if (!o.read_from.empty()) out += "read from " + o.read_from + "\n";
  return out;
}

nlohmann::json ToJson(const std::vector<Recommendation>& rs, const RecommendOptions& o) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& r : rs)
    items.push_back(
        {{"action", ToString(r.action)},
         {"namespace", r.key.ns},
         {"workload", r.key.workload},
         {"container", r.key.container},
         {"pods", r.pods},
         {"node", r.node},
         {"model", r.model},
         {"current", r.current},
         {"currentGpu", r.current_gpu},
         {"replicas", r.replicas},
         {"recommended", r.recommended},
         {"recommendedGpu", r.recommended_gpu},
         {"shareWith", r.share_with},
         {"evidence",
          {{"days", r.days},
           {"samples", r.samples},
           {"confidence", r.confidence},
           {"memoryP95DailyPeakBytes", Opt(r.memory_p95_bytes)},
           {"memoryPeakBytes", r.memory_peak_bytes},
           {"memoryTargetBytes", r.memory_target_bytes},
           {"computeP90", Opt(r.compute_p90)},
           {"computePeak", r.compute_peak},
           {"computeTarget", r.compute_target},
           {"memoryTrafficP90", Opt(r.traffic_p90)},
           {"memoryTrafficTarget", r.traffic_p90 ? nlohmann::json(r.traffic_target) : nullptr}}},
         {"monthlySavings", Opt(r.monthly_savings)},
         {"currency", r.monthly_savings ? nlohmann::json(r.currency) : nlohmann::json(nullptr)},
         {"priceSource",
          r.monthly_savings ? nlohmann::json(r.price_source) : nlohmann::json(nullptr)},
         {"reason", r.reason}});
  return {{"margin", o.margin},
          {"minHistorySeconds", o.min_history_s},
          {"hoursPerMonth", o.hours_per_month},
          {"readFrom", o.read_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.read_from)},
          {"recommendations", items}};
}

std::string RenderHtmlSection(const std::vector<Recommendation>& rs, const RecommendOptions& o) {
  std::string h = "<h2>Rightsizing</h2>";
  h += fmt::format(
      "<p class=\"note\">From the usage history of each workload: memory target = the highest of "
      "its daily peaks "
      "(P95) and the highest seen, compute target = P90 of its per-minute use, each +{:.0f} %. "
      "Minimum history {:.1f} "
      "h; savings per month of {:.0f} h (docs/rightsizing.md).</p>",
      100 * o.margin, o.min_history_s / 3600, o.hours_per_month);
  h += "<table><tr><th>action</th><th>workload</th><th>now</th><th>recommended</th><th>memory peak "
       "/ target</th><th>compute P90</th>"
       "<th>history</th><th>saves per month</th><th>why</th></tr>";
  std::map<std::string, double> total;
  for (const auto& r : rs) {
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f} / {:.1f} "
        "GiB</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        ToString(r.action), HtmlEscape(r.key.Name()),
        HtmlEscape(r.replicas > 1 ? fmt::format("{} ×{}", r.current, r.replicas) : r.current),
        HtmlEscape(r.recommended), r.memory_peak_bytes / kGiB, r.memory_target_bytes / kGiB,
        r.compute_p90 ? fmt::format("{:.1f} %", 100 * *r.compute_p90) : "?", Span(r.days),
        HtmlEscape(Money(r)), HtmlEscape(r.reason));
    if (r.monthly_savings) total[r.currency] += *r.monthly_savings;
  }
  h += "</table>";
  for (const auto& [currency, v] : total)
    h += fmt::format("<p>Total savings per month: {:.2f} {}</p>", v, HtmlEscape(currency));
  return h;
}

}  // namespace gpumeter::rightsize
