#include "app/usage/rightsize.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "app/config_files.h"
#include "app/usage/output.h"
#include "app/usage/usage_reader.h"
#include "common/duration.h"
#include "common/duration_format.h"
#include "core/rightsize/history.h"
#include "sinks/report/render.h"
#include "sinks/report/render_rightsize.h"
#include "sinks/report/window.h"

namespace gpumeter::app {

namespace {

// What the options ask for, checked before any history is read.
struct Plan {
  int64_t window_s = 0;
  rightsize::RecommendOptions recommend;
  cost::Pricing pricing;
};

Error Bad(const std::string& message) { return {ErrorCode::kInvalidInput, message}; }

Expected<Plan> PlanOf(const RightsizeOptions& o) {
  if (o.window <= Seconds(0))
    return tl::unexpected(Bad("--window " + FormatDuration(o.window) + ": must be longer than 0"));
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return tl::unexpected(pricing.error());
  Plan plan{WholeSeconds(o.window), {}, std::move(*pricing)};
  plan.recommend.margin = o.margin;
  plan.recommend.min_history_s = o.min_history.count();
  return plan;
}

Expected<std::vector<rightsize::Recommendation>> RightsizeWith(
    const usage::UsageHistorySource& history, const RightsizeOptions& o, const Plan& plan,
    rightsize::RecommendOptions* used) {
  auto span = history.HistorySpan();
  if (!span) return tl::unexpected(span.error());
  if (!*span)  // a window that ended in the past says so: the data may lie elsewhere
    return MakeError(
        ErrorCode::kNotFound,
        history.HistoryName() + (o.to_s ? ": no usage recorded in the " + FormatDuration(o.window) +
                                              " before --to " + Rfc3339(*o.to_s)
                                        : ": empty (no interval recorded yet)"));
  const int64_t to = o.to_s ? std::min((*span)->second, *o.to_s) : (*span)->second;
  const int64_t from = std::max((*span)->first, to - plan.window_s);
  auto histories = usage::BuildHistories(history, from, to);
  if (!histories) return tl::unexpected(histories.error());
  const size_t read = histories->size();
  // --namespace, --node: the others are not resized and not packed with.
  std::erase_if(*histories, [&](const auto& kv) {
    const auto& h = kv.second;
    if (!o.ns.empty() && h.key.ns != o.ns) return true;
    return !o.node.empty() && std::none_of(h.held.begin(), h.held.end(), [&](const auto& held) {
      return held.unit.node == o.node;
    });
  });
  if (o.require_workloads && histories->empty())
    return MakeError(
        ErrorCode::kNotFound,
        history.HistoryName() + ": no workload in the usage from " + Rfc3339(from) + " to " +
            Rfc3339(to) +
            (read > 0 ? " on --node/--namespace (" + std::to_string(read) + " elsewhere)"
                      : " (no container usage with a workload: for data that ended in the past, "
                        "give --to; from Prometheus, gpumeter_pod_workload_info must be "
                        "scraped)"));
  if (used) *used = plan.recommend;
  return rightsize::Recommend(*histories, plan.pricing, plan.recommend);
}

Expected<std::string> Render(const Expected<std::vector<rightsize::Recommendation>>& rs,
                             const rightsize::RecommendOptions& used, const std::string& format) {
  if (!rs) return tl::unexpected(rs.error());
  if (format == "json") return rightsize::ToJson(*rs, used).dump(2) + "\n";
  return rightsize::RenderTable(*rs, used);
}

}  // namespace

Expected<std::vector<rightsize::Recommendation>> Rightsize(const usage::UsageHistorySource& history,
                                                           const RightsizeOptions& o,
                                                           rightsize::RecommendOptions* used) {
  auto plan = PlanOf(o);
  if (!plan) return tl::unexpected(plan.error());
  return RightsizeWith(history, o, *plan, used);
}

Expected<std::vector<rightsize::Recommendation>> Rightsize(const RightsizeOptions& o,
                                                           rightsize::RecommendOptions* used) {
  if (!o.source) return tl::unexpected(Bad("--source: required (sqlite:PATH or prometheus:URL)"));
  if (o.source->kind != UsageSource::Kind::kStore &&
      o.source->kind != UsageSource::Kind::kPrometheus)
    return tl::unexpected(
        Bad("--source " + ToString(*o.source) + ": rightsizing reads a store or Prometheus"));
  // The options before the source, as the command always did: bad input is said first.
  auto plan = PlanOf(o);
  if (!plan) return tl::unexpected(plan.error());
  const int64_t now = o.to_s.value_or(std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  // Prometheus: without the recorded series every day is read per minute, a horizon of the whole
  // window.
  history::PrometheusReadOptions read;
  read.scope = {o.node, o.ns};
  read.now_unix_s = now;
  read.lookback_s = plan->window_s;
  read.minute_horizon_s =
      o.prometheus.recorded_series ? WholeSeconds(o.minute_history) : plan->window_s + 86400;
  auto reader = OpenUsageReader(*o.source, o.prometheus, std::move(read));
  if (!reader) return tl::unexpected(reader.error());
  auto rs = RightsizeWith(**reader, o, *plan, used);
  if (used) used->read_from = (*reader)->ReadFrom();  // Prometheus: which series; a store: ""
  return rs;
}

Expected<std::string> RenderRightsize(const usage::UsageHistorySource& history,
                                      const RightsizeOptions& o) {
  rightsize::RecommendOptions used;
  return Render(Rightsize(history, o, &used), used, o.format);
}

Expected<std::string> RenderRightsize(const RightsizeOptions& o) {
  rightsize::RecommendOptions used;
  return Render(Rightsize(o, &used), used, o.format);
}

int RunRightsize(const RightsizeOptions& options) {
  auto o = options;
  o.require_workloads = true;
  auto text = RenderRightsize(o);
  return EmitText(text, o.output);
}

Expected<int64_t> ParseTimeFlag(const std::string& flag, const std::string& text) {
  auto t = report::ParseTime(text);
  if (!t) return tl::unexpected(Bad(flag + " " + t.error().message));
  return t;
}

}  // namespace gpumeter::app
