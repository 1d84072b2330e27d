// A client of the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`) — only the standard
// API, so Prometheus, Thanos Query, Mimir and Cortex answer it alike. How to reach it: a base URL
// (http(s)://host:port[/prefix]), a bearer token file or basic auth (user, password file), a CA
// file for https, and a tenant sent as X-Scope-OrgID (Mimir/Cortex). Secrets are read once, at
// Open, from files (regular files only, at most 64 KiB, surrounding whitespace dropped), and never
// appear in errors. Every request goes through the one HTTP client (common/http/client.h): 5 s to
// connect, `limits.deadline` for the whole reply, `limits.max_bytes` of body after decompression
// (refused as it arrives), then parsed by prometheus_reply.h.
// Errors name the URL and the query. Blocking; one object per thread (it holds no connection).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/http/client.h"
#include "sources/history/prometheus_reply.h"

namespace gpumeter::history {

// How many queries one reader sends to Prometheus at once. Each is evaluated on a core of its own
// there and holds its samples in memory: at 100 nodes a 30-day report's five counters all at once
// took Prometheus's peak to 2.5 GB, two at a time to 1.1 GB, in about the same time (3.7 s;
// docs/fleet.md, "Scale").
inline constexpr size_t kQueriesAtOnce = 2;

struct PrometheusAccess {
  std::string url;
  std::string token_file;     // Authorization: Bearer <the file's content>
  std::string user;           // basic auth, with password_file
  std::string password_file;  // basic auth's password
  std::string ca_file;        // PEM bundle to verify an https server with (default: the system's)
  std::string tenant;         // X-Scope-OrgID
  // Ask for gzip-compressed replies: 4x fewer bytes, but Prometheus spends ~2.4x a range query's
  // evaluation CPU compressing it (docs/fleet.md), so only for a slow link.
  bool gzip = false;
  ReplyLimits limits;
};

class PrometheusApi {
 public:
  // Reads the secret files and checks the URL. kInvalidInput names the flag's file or the URL.
  static Expected<PrometheusApi> Open(const PrometheusAccess& access);

  const std::string& url() const { return access_.url; }
  const ReplyLimits& limits() const { return access_.limits; }

  // An instant query evaluated at `at_unix_s`: its vector result.
  Expected<std::vector<PromSample>> Query(const std::string& promql, int64_t at_unix_s) const;
  // An instant query of a range selector (e.g. `m[1d]`) at `at_unix_s`: each series' raw samples.
  Expected<std::vector<PromSeries>> QueryRaw(const std::string& promql, int64_t at_unix_s) const;
  // A range query: evaluated at start, start + step, …, end (seconds).
  Expected<std::vector<PromSeries>> QueryRange(const std::string& promql, int64_t start_unix_s,
                                               int64_t end_unix_s, int64_t step_s) const;

 private:
  PrometheusApi(PrometheusAccess access, http::Client client)
      : access_(std::move(access)), client_(std::move(client)) {}
  Expected<http::Reply> Get(const std::string& path, const http::Pairs& params,
                            const std::string& what) const;

  PrometheusAccess access_;
  http::Client client_;  // the URL's path (Mimir's prefix) goes before /api/v1
};

// A PromQL string literal holding `value` (quotes and backslashes escaped), for label matchers.
std::string PromQuote(const std::string& value);
// `text` matched literally inside a PromQL regular expression (RE2).
std::string RegexLiteral(const std::string& text);
// A regular expression matching exactly the `values` ("a|b|c"), each taken literally.
std::string AnyOfRegex(const std::set<std::string>& values);

// When each series of the info gauge `metric` (gpumeter_pod_labels_info, …) of the `pods`
// (namespace, name) was last scraped in the `range_s` before `at_unix_s`, aggregated `by` the
// labels given ("namespace, pod, …"): the latest timestamp() of its samples through a subquery
// of steps of at most a minute (longer past 11,000 steps), and an instant read for a series born
// after the last step. For a pod with more than one series in a range (relabelled, its workload
// changed): the latest is the one it has now.
Expected<std::vector<PromSample>> LastSeen(
    const PrometheusApi& api, const std::string& metric, const std::string& by,
    const std::set<std::pair<std::string, std::string>>& pods, int64_t range_s, int64_t at_unix_s);

// Per pod (namespace, name), each value it was seen with in a window (a label set, a workload)
// and the last time it was seen, in Unix seconds (0: not known yet).
template <class Value>
using PodCandidates = std::map<std::pair<std::string, std::string>, std::map<Value, double>>;

// Times the values of each pod that has more than one by LastSeen over `metric`; `value_of` gives
// the value a LastSeen sample names. Values LastSeen does not name keep their time.
template <class Value, class ValueOf>
Expected<void> TimeAmbiguousPods(const PrometheusApi& api, const std::string& metric,
                                 const std::string& by, int64_t range_s, int64_t at_unix_s,
                                 PodCandidates<Value>& pods, const ValueOf& value_of) {
  std::set<std::pair<std::string, std::string>> ambiguous;
  for (const auto& [pod, values] : pods)
    if (values.size() > 1) ambiguous.insert(pod);
  if (ambiguous.empty()) return {};
  auto seen = LastSeen(api, metric, by, ambiguous, range_s, at_unix_s);
  if (!seen) return tl::unexpected(seen.error());
  for (const auto& s : *seen)
    if (auto it = pods.find({LabelValue(s, "namespace"), LabelValue(s, "pod")}); it != pods.end())
      if (auto v = it->second.find(value_of(s)); v != it->second.end()) v->second = s.value;
  return {};
}

// Calls `take(pod, value)` with each pod's latest value (the first of equally late ones).
template <class Value, class Take>
void ForEachLatest(const PodCandidates<Value>& pods, const Take& take) {
  for (const auto& [pod, values] : pods) {
    const auto latest =
        std::max_element(values.begin(), values.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (latest != values.end()) take(pod, latest->first);
  }
}

}  // namespace gpumeter::history
