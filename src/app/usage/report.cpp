#include "app/usage/report.h"

#include "app/usage/bill_report.h"

#include "app/usage/rightsize.h"
#include "common/html.h"
#include "sinks/report/render_rightsize.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <vector>

#include "app/config_files.h"
#include "app/usage/output.h"
#include "app/usage/usage_reader.h"
#include "common/duration_format.h"
#include "sinks/report/render_html.h"
#include "sinks/report/window.h"

namespace gpumeter::app {

namespace {

Error Bad(std::string message) { return Error{ErrorCode::kInvalidInput, std::move(message)}; }

// What the flags ask for, parsed: how usage is priced, split and grouped, and where it is read.
struct Request {
  cost::Policy policy;
  std::vector<std::string> dims;
  cost::Pricing pricing;
  std::unique_ptr<usage::UsageReader> reader;  // the store, open read-only, or Prometheus
};

// The pod label keys the label:KEY groupings ask for (Prometheus exports only those asked for).
std::vector<std::string> LabelKeys(const std::vector<std::string>& dims) {
  std::vector<std::string> keys;
  for (const auto& d : dims)
    if (d.rfind("label:", 0) == 0) keys.push_back(d.substr(6));
  return keys;
}

Expected<Request> ParseRequest(const ReportOptions& o) {
  Request r;
  r.policy = o.policy;
  if (o.by.empty()) return tl::unexpected(Bad("--by: no dimension to group by"));
  r.dims = o.by;
  auto loaded_pricing = LoadPricing(o.pricing_file);
  if (!loaded_pricing) return tl::unexpected(loaded_pricing.error());
  r.pricing = std::move(*loaded_pricing);
  if (o.source.kind != UsageSource::Kind::kStore && o.source.kind != UsageSource::Kind::kPrometheus)
    return tl::unexpected(
        Bad("--source " + ToString(o.source) + ": report reads a store or Prometheus"));
  history::PrometheusReadOptions read;
  read.label_keys = LabelKeys(r.dims);
  read.recorded = o.prometheus.recorded_series;
  auto reader = OpenUsageReader(o.source, o.prometheus, std::move(read));
  if (!reader) return tl::unexpected(reader.error());
  r.reader = std::move(*reader);
  return r;
}

// Neither --from nor --window: the reader's whole span, up to --to when given.
Expected<report::Window> WholeSpan(const ReportOptions& o, const usage::UsageReader& reader) {
  auto span = reader.HistorySpan();
  if (!span) return tl::unexpected(span.error());
  if (!*span)
    return MakeError(ErrorCode::kNotFound,
                     reader.HistoryName() + ": empty (no interval recorded yet)");
  report::Window w = {(*span)->first, (*span)->second};
  if (o.to_s) w.to_unix_s = std::min(w.to_unix_s, *o.to_s);  // everything up to --to
  return w;
}

// The window from --from or --window (each up to --to or now), or the reader's whole span where
// it has one (a store); not empty.
Expected<report::Window> ResolveWindow(const ReportOptions& o, int64_t now,
                                       const usage::UsageReader& reader) {
  report::Window w;
  const int64_t to = o.to_s.value_or(now);
  if ((o.window || o.window_all) && o.from_s)
    return tl::unexpected(Bad("--window and --from: give one of them"));
  if (o.from_s) {
    w = {*o.from_s, to};
  } else if (o.window) {
    w = {to - WholeSeconds(*o.window), to};
  } else if (reader.SpanIsWhole()) {
    auto span = WholeSpan(o, reader);
    if (!span) return tl::unexpected(span.error());
    w = *span;
  } else {
    return tl::unexpected(Bad("--source " + std::string(PrefixOf(o.source.kind)) +
                              " needs --window (e.g. 7d) or --from"));
  }
  if (w.to_unix_s <= w.from_unix_s)
    return tl::unexpected(
        Bad(fmt::format("window {} .. {} is empty: the end must be after the start",
                        Rfc3339(w.from_unix_s), Rfc3339(w.to_unix_s))));
  return w;
}

// Where the read ends. A store books usage to whole minutes and reads the minutes that end by the
// window's end; a window that ends now (no --to) also takes the minute in progress, whose
// intervals are already written, or a report right after a short run finds nothing.
int64_t ReadEnd(const ReportOptions& o, const report::Window& w, const usage::UsageReader& reader) {
  const int64_t booked = reader.BookedSeconds();
  if (o.to_s || booked <= 0) return w.to_unix_s;
  // Unix seconds after 1970: no negative rounding to mind
  return (w.to_unix_s + booked - 1) / booked * booked;
}

// The usage over the window, the pods' labels and what it was read from; no usage at all is an
// error.
Expected<usage::WindowUsage> ReadUsage(const ReportOptions& o, const Request& r,
                                       const report::Window& w) {
  auto out = r.reader->ReadWindow(w.from_unix_s, ReadEnd(o, w, *r.reader));
  if (!out) return tl::unexpected(out.error());
  if (out->units.empty())
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("{}: no usage between {} and {}", ToString(o.source),
                                 Rfc3339(w.from_unix_s), Rfc3339(w.to_unix_s)));
  return out;
}

// Seconds per column of the chart over `span_s`: the fewest whole minutes that keep it within 72
// columns, up to an hour; hours beyond.
int64_t ChartBucket(int64_t span_s) {
  for (const int64_t b : {60, 300, 900, 1800})
    if (span_s <= 72 * b) return b;
  for (int64_t hours = 1;; hours *= 2)
    if (span_s <= 72 * 3600 * hours) return 3600 * hours;
}

Expected<std::string> RenderHtmlReport(const ReportOptions& o, const Request& r,
                                       const report::Window& w, const cost::Chargeback& cb,
                                       const cost::Labels& labels) {
  // Over time where reads over time are cheap (a store; from Prometheus: the window's totals
  // only), in buckets that suit the span the data covers: a demo's minutes are not one hourly
  // column.
  const usage::UsageReader& reader = *r.reader;
  report::OverTime over_time;
  if (reader.ReadsOverTime()) {
    auto span = reader.HistorySpan();
    if (!span) return tl::unexpected(span.error());
    const int64_t end = ReadEnd(o, w, reader);
    if (*span) over_time.data_span = **span;
    const int64_t from = *span ? std::max(w.from_unix_s, (*span)->first) : w.from_unix_s;
    const int64_t to = *span ? std::min(end, (*span)->second + 60) : end;
    over_time.bucket_s = ChartBucket(to - from);
    auto buckets = reader.ReadBuckets(w.from_unix_s, end, over_time.bucket_s);
    if (!buckets) return tl::unexpected(buckets.error());
    for (const auto& [t, bu] : buckets->buckets)
      over_time.buckets.emplace_back(
          t, cost::BuildChargeback(bu, labels, r.pricing, r.policy, r.dims));
  }
  // Likewise, the rightsizing of the same workloads follows the chargeback.
  std::string sections;
  if (reader.ReadsOverTime()) {
    RightsizeOptions ro;
    ro.pricing_file = o.pricing_file;
    ro.to_s = ReadEnd(o, w, reader);  // the history up to the report's end
    rightsize::RecommendOptions used;
    // The chargeback stands without it: a rightsizing that cannot be made is said, not fatal.
    auto rs = Rightsize(reader, ro, &used);  // the reader this report has open
    sections = rs ? rightsize::RenderHtmlSection(*rs, used)
                  : "<h2>Rightsizing</h2><p class=\"note\">Not available: " +
                        HtmlEscape(rs.error().message) + "</p>";
  }
  return report::RenderHtml(cb, w, over_time, sections);
}

// --bill: the nodes and their hours through the reader.
Expected<std::string> RenderBilled(const ReportOptions& o, const Request& r, report::Window w) {
  const BillReportRequest bill{o.bill_files, o.bill_split, o.format, o.bill_unmatched};
  // The default window, a store's span, starts and ends mid-hour; a bill's lines start on the hour
  // and count by their part in the window: it takes the whole hours the data touches, and so their
  // lines whole.
  if (!o.from_s && !o.window) {
    w.from_unix_s -= w.from_unix_s % 3600;
    w.to_unix_s = (w.to_unix_s + 3599) / 3600 * 3600;
  }
  return RenderBillReport(bill, *r.reader, r.pricing, r.policy, r.dims, w);
}

}  // namespace

Expected<std::string> RenderReport(const ReportOptions& o, int64_t now) {
  const auto request = ParseRequest(o);
  if (!request) return tl::unexpected(request.error());
  const auto w = ResolveWindow(o, now, *request->reader);
  if (!w) return tl::unexpected(w.error());
  if (!o.bill_files.empty()) return RenderBilled(o, *request, *w);
  const auto usage = ReadUsage(o, *request, *w);
  if (!usage) return tl::unexpected(usage.error());
  auto cb = cost::BuildChargeback(usage->units, usage->labels, request->pricing, request->policy,
                                  request->dims);
  cb.sources = usage->sources;
  if (o.format == "csv") return report::RenderCsv(cb);
  if (o.format == "json") return report::RenderJson(cb, *w);
  if (o.format == "focus") return report::RenderFocus(cb, *w, usage->labels);
  if (o.format == "html") return RenderHtmlReport(o, *request, *w, cb, usage->labels);
  return report::RenderTable(cb, *w);
}

int RunReport(const ReportOptions& o) {
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto text = RenderReport(o, now);
  return EmitText(text, o.output);
}

}  // namespace gpumeter::app
