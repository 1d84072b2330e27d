#include "sources/history/prometheus_usage_reader.h"

#include "sources/history/prometheus_source.h"
#include "sources/history/recorded_coverage.h"

namespace gpumeter::history {

PrometheusUsageReader::PrometheusUsageReader(PrometheusApi api, PrometheusReadOptions options)
    : history_(std::move(api), std::move(options.scope), options.now_unix_s, options.lookback_s,
               options.minute_horizon_s),
      label_keys_(std::move(options.label_keys)),
      recorded_(options.recorded) {}

Expected<usage::WindowUsage> PrometheusUsageReader::ReadWindow(int64_t from, int64_t to) const {
  auto read = UsageFromPrometheus(history_.api(), from, to, label_keys_, recorded_);
  if (!read) return tl::unexpected(read.error());
  usage::WindowUsage out;
  out.units = std::move(read->units);
  out.labels = std::move(read->labels);
  out.sources.push_back("prometheus " + history_.api().url() + ": " +
                        DescribeSegments(read->segments));
  return out;
}

Expected<usage::BucketUsage> PrometheusUsageReader::ReadBuckets(int64_t from, int64_t to,
                                                                int64_t bucket_s) const {
  // Other buckets would be a query per bucket over the network, and no report asks for them.
  if (bucket_s != 3600 || from % 3600 != 0 || to % 3600 != 0)
    return MakeError(ErrorCode::kInvalidInput,
                     HistoryName() + ": usage over time is read per whole hour only");
  usage::BucketUsage out;
  auto hourly = HourlyUsageFromPrometheus(history_.api(), from, to, label_keys_, out.labels);
  if (!hourly) return tl::unexpected(hourly.error());
  out.buckets = std::move(*hourly);
  return out;
}

Expected<std::vector<attribution::NodeRecord>> PrometheusUsageReader::ReadNodes(int64_t from,
                                                                                int64_t to) const {
  return ReadNodeIdentities(history_.api(), to, to - from);
}

}  // namespace gpumeter::history
