#include "sinks/report/prometheus_source.h"

#include <httplib.h>

#include <cctype>
#include <map>
#include <tuple>

namespace gpumeter::report {
namespace {

using Sample = PromSample;

// Reads are bounded: a connection timeout, a per-read timeout and a deadline for the whole reply,
// and the body is capped while it arrives (a hostile or broken server cannot exhaust memory).
constexpr auto kConnectTimeout = std::chrono::seconds(5);

class Api {
 public:
  Api(const std::string& url, const ReplyLimits& limits) : url_(url), limits_(limits) {
    const auto scheme_end = url.find("://");
    const auto path_start = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
    base_ = path_start == std::string::npos ? url : url.substr(0, path_start);
    prefix_ = path_start == std::string::npos ? "" : url.substr(path_start);
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  }

  // An instant query at `at`; every sample of the vector result.
  Expected<std::vector<Sample>> Query(const std::string& promql, int64_t at) {
    httplib::Client client(base_);
    if (!client.is_valid())
      return MakeError(ErrorCode::kInvalidInput,
                       "prometheus '" + url_ + "': not an http(s)://host:port URL");
    client.set_connection_timeout(kConnectTimeout);
    client.set_read_timeout(limits_.deadline);
    const httplib::Params params{{"query", promql}, {"time", std::to_string(at)}};
    std::string body;
    bool too_big = false, too_slow = false;
    const auto deadline = std::chrono::steady_clock::now() + limits_.deadline;
    auto r = client.Get(prefix_ + "/api/v1/query", params, {}, [&](const char* d, size_t n) {
      too_big = body.size() + n > limits_.max_bytes;
      too_slow = std::chrono::steady_clock::now() > deadline;
      if (too_big || too_slow) return false;
      body.append(d, n);
      return true;
    });
    const std::string what = "prometheus " + url_ + ", query " + promql;
    if (too_big)
      return MakeError(ErrorCode::kUnavailable,
                       what + ": reply over the cap of " + std::to_string(limits_.max_bytes) +
                           " bytes (raise it with --prometheus-max-reply-mb)");
    if (too_slow || (!r && r.error() == httplib::Error::Read))
      return MakeError(ErrorCode::kUnavailable,
                       what + ": no complete reply within " +
                           std::to_string(limits_.deadline.count() / 1000) + " s");
    if (!r)
      return MakeError(ErrorCode::kUnavailable, "prometheus " + url_ + ": unreachable (" +
                                                    httplib::to_string(r.error()) + ")");
    return ParseVectorReply(body, r->status, what, limits_);
  }

 private:
  std::string url_, base_, prefix_;
  ReplyLimits limits_;
};

std::string Get(const Sample& s, const std::string& k) {
  auto it = s.labels.find(k);
  return it == s.labels.end() ? "" : it->second;
}

// The window the queries cover: each is evaluated at `to`, over the `to - from` seconds before.
struct Span {
  int64_t from, to;

  std::string Range() const { return "[" + std::to_string(to - from) + "s]"; }

  // What a counter grew by in the window. A series that had samples before the window:
  // increase() (extrapolated only across the gap to each boundary). A series born in the window
  // (the agent started, or the pod, inside it): its last value, as gpumeter's counters start at
  // 0; increase() would drop what it counted before its first scrape.
  std::string Grown(const std::string& metric, const std::string& by) const {
    const std::string range = Range();
    const std::string before =
        "(last_over_time(" + metric + "[5m] offset " + std::to_string(to - from) + "s))";
    return "sum by (" + by + ") ((increase(" + metric + range + ") and " + before +
           ") or (last_over_time(" + metric + range + ") unless " + before + "))";
  }
};

using Units = std::map<std::pair<std::string, std::string>, store::UnitRecord>;  // (node, unit)

// Unit identity: the latest info in the window, then each unit's fraction of its GPU. No unit is
// an error (kNotFound), before the fraction is asked for.
Expected<void> ReadUnits(Api& api, const std::string& url, const Span& span, Units& units) {
  auto info = api.Query(
      "max by (node, unit, gpu_uuid, model, mig_profile, sharing_mode) "
      "(last_over_time(gpumeter_unit_info" +
          span.Range() + "))",
      span.to);
  if (!info) return tl::unexpected(info.error());
  for (const auto& s : *info) {
    auto& u = units[{Get(s, "node"), Get(s, "unit")}];
    u.unit = {Get(s, "node"),
              Get(s, "unit"),
              Get(s, "gpu_uuid"),
              Get(s, "model"),
              Get(s, "mig_profile"),
              Get(s, "sharing_mode"),
              1.0};
  }
  if (units.empty())
    return MakeError(
        ErrorCode::kNotFound,
        "prometheus " + url + ": no gpumeter_unit_info in the window (is it scraping the agents?)");
  auto fraction = api.Query(
      "max by (node, unit) (last_over_time(gpumeter_unit_gpu_share_ratio" + span.Range() + "))",
      span.to);
  if (!fraction) return tl::unexpected(fraction.error());
  for (const auto& s : *fraction)
    if (auto it = units.find({Get(s, "node"), Get(s, "unit")}); it != units.end())
      it->second.unit.fraction = s.value;
  return {};
}

// Unit capacities over the window, onto the units already known.
Expected<void> ReadUnitCounters(Api& api, const Span& span, Units& units) {
  const std::pair<const char*, double store::UnitRecord::*> unit_counters[] = {
      {"gpumeter_unit_seconds_total", &store::UnitRecord::seconds},
      {"gpumeter_unit_memory_capacity_byte_seconds_total",
       &store::UnitRecord::memory_capacity_byte_seconds},
      {"gpumeter_unit_energy_joules_total", &store::UnitRecord::energy_joules}};
  for (const auto& [metric, field] : unit_counters) {
    auto r = api.Query(span.Grown(metric, "node, unit"), span.to);
    if (!r) return tl::unexpected(r.error());
    for (const auto& s : *r)
      if (auto it = units.find({Get(s, "node"), Get(s, "unit")}); it != units.end())
        it->second.*field = s.value;
  }
  return {};
}

// Owners: one query per counter, joined on (node, unit, owner), then added to their units.
Expected<void> ReadOwners(Api& api, const Span& span, Units& units) {
  using OwnerKey =
      std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;
  std::map<OwnerKey, store::OwnerAmounts> owners;
  const std::pair<const char*, double store::OwnerAmounts::*> owner_counters[] = {
      {"gpumeter_memory_byte_seconds_total", &store::OwnerAmounts::memory_byte_seconds},
      {"gpumeter_compute_seconds_total", &store::OwnerAmounts::compute_seconds},
      {"gpumeter_energy_joules_total", &store::OwnerAmounts::energy_joules},
      {"gpumeter_requested_share_seconds_total", &store::OwnerAmounts::requested_share_seconds}};
  for (const auto& [metric, field] : owner_counters) {
    auto r =
        api.Query(span.Grown(metric, "node, unit, namespace, pod, container, owner_kind"), span.to);
    if (!r) return tl::unexpected(r.error());
    for (const auto& s : *r) {
      auto& o = owners[{Get(s, "node"), Get(s, "unit"), Get(s, "owner_kind"), Get(s, "namespace"),
                        Get(s, "pod"), Get(s, "container")}];
      o.owner = {domain::OwnerKindFromString(Get(s, "owner_kind")), Get(s, "namespace"),
                 Get(s, "pod"), Get(s, "container")};
      o.*field = s.value;
    }
  }
  for (auto& [k, o] : owners)
    if (auto it = units.find({std::get<0>(k), std::get<1>(k)}); it != units.end())
      it->second.owners.push_back(o);
  return {};
}

// The pods' values of each label key, from the label_KEY label of the containers' series.
Expected<void> ReadLabels(Api& api, const Span& span, const std::vector<std::string>& label_keys,
                          Labels& labels) {
  for (const auto& key : label_keys) {
    std::string name = "label_" + key;  // as the agent names it (metrics/exposition.h)
    for (auto& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    auto r = api.Query(
        "group by (namespace, pod, " + name +
            ") (last_over_time(gpumeter_requested_share_seconds_total{owner_kind=\"container\"}" +
            span.Range() + "))",
        span.to);
    if (!r) return tl::unexpected(r.error());
    for (const auto& s : *r) {
      const std::string v = Get(s, name);
      if (!v.empty()) labels[{Get(s, "namespace"), Get(s, "pod")}][key] = v;
    }
  }
  return {};
}

}  // namespace

Expected<std::vector<PromSample>> QueryPrometheus(const std::string& url, const std::string& promql,
                                                  int64_t at_unix_s, const ReplyLimits& limits) {
  Api api(url, limits);
  return api.Query(promql, at_unix_s);
}

Expected<PrometheusUsage> UsageFromPrometheus(const std::string& url, int64_t from, int64_t to,
                                              const std::vector<std::string>& label_keys,
                                              const ReplyLimits& limits) {
  Api api(url, limits);
  const Span span{from, to};
  Units units;
  if (auto r = ReadUnits(api, url, span, units); !r) return tl::unexpected(r.error());
  if (auto r = ReadUnitCounters(api, span, units); !r) return tl::unexpected(r.error());
  if (auto r = ReadOwners(api, span, units); !r) return tl::unexpected(r.error());
  PrometheusUsage out;
  for (auto& [k, u] : units)
    if (u.seconds > 0) out.units.push_back(std::move(u));
  if (auto r = ReadLabels(api, span, label_keys, out.labels); !r) return tl::unexpected(r.error());
  return out;
}

}  // namespace gpumeter::report
