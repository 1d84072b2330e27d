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

Expected<std::vector<rightsize::Recommendation>> Rightsize(const RightsizeOptions& o,
                                                           rightsize::RecommendOptions* used) {
  const auto bad = [](const std::string& m) { return MakeError(ErrorCode::kInvalidInput, m); };
  if (o.source.rfind("sqlite:", 0) != 0)
    return bad("--source '" + o.source +
               "': expected sqlite:PATH (histories need the store's per-minute rows)");
  const auto window = ParseDurationSeconds(o.window);
  if (!window) return bad("--window " + window.error().message);
  const auto min_history = ParseDurationSeconds(o.min_history);
  if (!min_history) return bad("--min-history " + min_history.error().message);
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return tl::unexpected(pricing.error());
  const std::string path = o.source.substr(7);
  auto store = store::Store::OpenReadOnly(path);
  if (!store) return tl::unexpected(store.error());
  auto span = (*store)->Span();
  if (!span) return tl::unexpected(span.error());
  if (!*span)
    return MakeError(ErrorCode::kNotFound, "store " + path + ": empty (no interval recorded yet)");
  const int64_t to = o.to_s ? std::min((*span)->second, *o.to_s) : (*span)->second;
  const int64_t from = std::max((*span)->first, to - *window);
  auto histories = rightsize::BuildHistories(**store, from, to);
  if (!histories) return tl::unexpected(histories.error());
  rightsize::RecommendOptions ro;
  ro.margin = o.margin;
  ro.min_history_s = static_cast<double>(*min_history);
  if (used) *used = ro;
  return rightsize::Recommend(*histories, *pricing, ro);
}

Expected<std::string> RenderRightsize(const RightsizeOptions& o) {
  rightsize::RecommendOptions ro;
  auto rs = Rightsize(o, &ro);
  if (!rs) return tl::unexpected(rs.error());
  if (o.format == "json") return rightsize::ToJson(*rs, ro).dump(2) + "\n";
  return rightsize::RenderTable(*rs, ro);
}

int RunRightsize(const RightsizeOptions& o) {
  auto text = RenderRightsize(o);
  return EmitText(text, o.output);
}

}  // namespace gpumeter::app
