#include "app/usage/usage_reader.h"

#include <utility>

#include "store/store.h"

namespace gpumeter::app {

Expected<std::unique_ptr<usage::UsageReader>> OpenUsageReader(const UsageSource& source,
                                                              const PrometheusFlags& flags,
                                                              history::PrometheusReadOptions read) {
  switch (source.kind) {
    case UsageSource::Kind::kStore: {
      auto store = store::Store::OpenReadOnly(source.where);
      if (!store) return tl::unexpected(store.error());
      return std::unique_ptr<usage::UsageReader>(std::move(*store));
    }
    case UsageSource::Kind::kPrometheus: {
      auto api = OpenPrometheus(source.where, flags);
      if (!api) return tl::unexpected(api.error());
      return std::unique_ptr<usage::UsageReader>(
          std::make_unique<history::PrometheusUsageReader>(std::move(*api), std::move(read)));
    }
    case UsageSource::Kind::kAgent:
    case UsageSource::Kind::kFile:
      break;
  }
  return MakeError(ErrorCode::kInvalidInput, "--source " + ToString(source) +
                                                 ": not a record of usage (a store or Prometheus)");
}

}  // namespace gpumeter::app
