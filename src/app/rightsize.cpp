#include "app/rightsize.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>

#include "app/node_config.h"
#include "common/duration.h"
#include "core/rightsize/history.h"
#include "core/rightsize/render.h"
#include "sinks/store/store.h"

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
  const auto window = ParseDurationSeconds(o.window);
  if (!window) return tl::unexpected(Bad("--window " + window.error().message));
  const auto min_history = ParseDurationSeconds(o.min_history);
  if (!min_history) return tl::unexpected(Bad("--min-history " + min_history.error().message));
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return tl::unexpected(pricing.error());
  Plan plan{*window, {}, std::move(*pricing)};
  plan.recommend.margin = o.margin;
  plan.recommend.min_history_s = static_cast<double>(*min_history);
  return plan;
}

Expected<std::vector<rightsize::Recommendation>> RightsizeWith(
    const rightsize::UsageHistorySource& history, const RightsizeOptions& o, const Plan& plan,
    rightsize::RecommendOptions* used) {
  auto span = history.HistorySpan();
  if (!span) return tl::unexpected(span.error());
  if (!*span)
    return MakeError(ErrorCode::kNotFound,
                     history.HistoryName() + ": empty (no interval recorded yet)");
  const int64_t to = o.to_s ? std::min((*span)->second, *o.to_s) : (*span)->second;
  const int64_t from = std::max((*span)->first, to - plan.window_s);
  auto histories = rightsize::BuildHistories(history, from, to);
  if (!histories) return tl::unexpected(histories.error());
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

Expected<std::vector<rightsize::Recommendation>> Rightsize(
    const rightsize::UsageHistorySource& history, const RightsizeOptions& o,
    rightsize::RecommendOptions* used) {
  auto plan = PlanOf(o);
  if (!plan) return tl::unexpected(plan.error());
  return RightsizeWith(history, o, *plan, used);
}

Expected<std::vector<rightsize::Recommendation>> Rightsize(const RightsizeOptions& o,
                                                           rightsize::RecommendOptions* used) {
  if (o.source.rfind("sqlite:", 0) != 0)
    return tl::unexpected(
        Bad("--source '" + o.source +
            "': expected sqlite:PATH (histories need the store's per-minute rows)"));
  // The options before the file, as the command always did: bad input is said first.
  auto plan = PlanOf(o);
  if (!plan) return tl::unexpected(plan.error());
  auto store = store::Store::OpenReadOnly(o.source.substr(7));
  if (!store) return tl::unexpected(store.error());
  return RightsizeWith(**store, o, *plan, used);
}

Expected<std::string> RenderRightsize(const rightsize::UsageHistorySource& history,
                                      const RightsizeOptions& o) {
  rightsize::RecommendOptions used;
  return Render(Rightsize(history, o, &used), used, o.format);
}

Expected<std::string> RenderRightsize(const RightsizeOptions& o) {
  rightsize::RecommendOptions used;
  return Render(Rightsize(o, &used), used, o.format);
}

int RunRightsize(const RightsizeOptions& o) {
  auto text = RenderRightsize(o);
  return EmitText(text, o.output);
}

}  // namespace gpumeter::app
