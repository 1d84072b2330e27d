#include "app/report.h"

#include "app/rightsize.h"
#include "common/html.h"
#include "core/rightsize/render.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>

#include "app/node_config.h"
#include "sinks/report/prometheus_source.h"
#include "sinks/report/render_html.h"
#include "sinks/report/window.h"
#include "sinks/store/store.h"

namespace gpumeter::app {

namespace {

Error Bad(std::string message) { return Error{ErrorCode::kInvalidInput, std::move(message)}; }

}  // namespace

Expected<std::string> RenderReport(const ReportOptions& o, int64_t now) {
  cost::Policy policy;
  auto basis = cost::ParseBasis(o.policy, &policy.alpha);
  if (!basis) return tl::unexpected(Bad("--policy: " + basis.error().message));
  policy.basis = *basis;
  auto idle = cost::ParseIdleRule(o.idle);
  if (!idle) return tl::unexpected(Bad("--idle: " + idle.error().message));
  policy.idle = *idle;
  auto dims = report::ParseGroupBy(o.by);
  if (!dims) return tl::unexpected(dims.error());
  auto loaded_pricing = LoadPricing(o.pricing_file);
  if (!loaded_pricing) return tl::unexpected(loaded_pricing.error());
  const cost::Pricing pricing = std::move(*loaded_pricing);
  const bool from_store = o.source.rfind("sqlite:", 0) == 0,
             from_prometheus = o.source.rfind("prometheus:", 0) == 0;
  if (!from_store && !from_prometheus)
    return tl::unexpected(
        Bad("--source '" + o.source + "': expected sqlite:PATH or prometheus:URL"));
  const std::string where = o.source.substr(o.source.find(':') + 1);
  std::unique_ptr<store::Store> store;
  if (from_store) {
    auto opened = store::Store::OpenReadOnly(where);
    if (!opened) return tl::unexpected(opened.error());
    store = std::move(*opened);
  }

  report::Window w;
  if (!o.window.empty() && !o.from.empty())
    return tl::unexpected(Bad("--window and --from: give one of them"));
  auto end = [&]() -> Expected<int64_t> {
    if (o.to.empty()) return now;
    auto to = report::ParseTime(o.to);
    if (!to) return tl::unexpected(Bad("--to: " + to.error().message));
    return *to;
  };
  if (!o.from.empty()) {
    auto from = report::ParseTime(o.from);
    if (!from) return tl::unexpected(Bad("--from: " + from.error().message));
    auto to = end();
    if (!to) return tl::unexpected(to.error());
    w = {*from, *to};
  } else if (!o.window.empty() && o.window != "all") {
    auto d = report::ParseDuration(o.window);
    if (!d) return tl::unexpected(Bad("--window: " + d.error().message));
    auto to = end();
    if (!to) return tl::unexpected(to.error());
    w = {*to - *d, *to};
  } else if (from_store) {
    auto span = store->Span();
    if (!span) return tl::unexpected(span.error());
    if (!*span)
      return MakeError(ErrorCode::kNotFound,
                       "store " + where + ": empty (no interval recorded yet)");
    w = {(*span)->first, (*span)->second};
    if (!o.to.empty()) {  // everything up to --to
      auto to = end();
      if (!to) return tl::unexpected(to.error());
      w.to_unix_s = std::min(w.to_unix_s, *to);
    }
  } else {
    return tl::unexpected(Bad("--source prometheus: needs --window (e.g. 7d) or --from"));
  }
  if (w.to_unix_s <= w.from_unix_s)
    return tl::unexpected(
        Bad(fmt::format("window {} .. {} is empty: the end must be after the start",
                        report::Rfc3339(w.from_unix_s), report::Rfc3339(w.to_unix_s))));
  std::vector<store::UnitRecord> units;
  report::Labels labels;
  if (from_store) {
    auto usage = store->Usage(w.from_unix_s, w.to_unix_s);
    if (!usage) return tl::unexpected(usage.error());
    auto stored_labels = store->PodLabels();
    if (!stored_labels) return tl::unexpected(stored_labels.error());
    units = std::move(*usage);
    labels = std::move(*stored_labels);
  } else {
    std::vector<std::string> keys;
    for (const auto& d : *dims)
      if (d.rfind("label:", 0) == 0) keys.push_back(d.substr(6));
    auto usage = report::UsageFromPrometheus(where, w.from_unix_s, w.to_unix_s, keys);
    if (!usage) return tl::unexpected(usage.error());
    units = std::move(usage->units);
    labels = std::move(usage->labels);
  }
  if (units.empty())
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("{}: no usage between {} and {}", o.source,
                                 report::Rfc3339(w.from_unix_s), report::Rfc3339(w.to_unix_s)));
  const auto cb = report::BuildChargeback(units, labels, pricing, policy, *dims);
  if (o.format == "csv") return report::RenderCsv(cb);
  if (o.format == "json") return report::RenderJson(cb, w);
  if (o.format == "focus") return report::RenderFocus(cb, w, labels);
  if (o.format == "html") {
    // Over time from the store's hourly rows (from Prometheus: the window's totals only).
    std::vector<std::pair<int64_t, report::Chargeback>> over_time;
    if (store) {
      auto hourly = store->HourlyUsage(w.from_unix_s, w.to_unix_s);
      if (!hourly) return tl::unexpected(hourly.error());
      for (const auto& [hour, hu] : *hourly)
        over_time.emplace_back(hour, report::BuildChargeback(hu, labels, pricing, policy, *dims));
    }
    // From the store, the rightsizing of the same workloads follows the chargeback.
    std::string sections;
    if (store) {
      RightsizeOptions ro;
      ro.pricing_file = o.pricing_file;
      ro.to_s = w.to_unix_s;  // the history up to the report's end
      rightsize::RecommendOptions used;
      // The chargeback stands without it: a rightsizing that cannot be made is said, not fatal.
      auto rs = Rightsize(*store, ro, &used);  // the store this report has open
      sections = rs ? rightsize::RenderHtmlSection(*rs, used)
                    : "<h2>Rightsizing</h2><p class=\"note\">Not available: " +
                          HtmlEscape(rs.error().message) + "</p>";
    }
    return report::RenderHtml(cb, w, over_time, sections);
  }
  return report::RenderTable(cb, w);
}

int RunReport(const ReportOptions& o) {
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto text = RenderReport(o, now);
  return EmitText(text, o.output);
}

}  // namespace gpumeter::app
