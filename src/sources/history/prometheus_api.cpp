#include "sources/history/prometheus_api.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <string_view>

#include "common/secret_file.h"

namespace gpumeter::history {
namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(5);

}  // namespace

std::string PromQuote(const std::string& value) {
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string RegexLiteral(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string AnyOfRegex(const std::set<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : "|") + RegexLiteral(v);
  return out;
}

Expected<std::vector<PromSample>> LastSeen(
    const PrometheusApi& api, const std::string& metric, const std::string& by,
    const std::set<std::pair<std::string, std::string>>& pods, int64_t range_s, int64_t at_unix_s) {
  std::set<std::string> ns, names;
  for (const auto& [n, p] : pods) ns.insert(n), names.insert(p);
  const std::string selector = metric + "{namespace=~" + PromQuote(AnyOfRegex(ns)) + ",pod=~" +
                               PromQuote(AnyOfRegex(names)) + "}";
  // Steps of at most a minute: Prometheus aligns a subquery's steps to multiples of the step, and
  // a step longer than its 5-minute lookback would miss a series that lived between two. Past
  // 11,000 steps (a range over 7.6 days, read raw only with the recorded series off), longer
  // steps, so that a year's read stays within Prometheus' sample limit.
  const int64_t step =
      std::max<int64_t>(std::clamp<int64_t>(range_s / 1000, 1, 60), (range_s + 10'999) / 11'000);
  auto over_range = api.Query("max by (" + by + ") (max_over_time(timestamp(" + selector + ")[" +
                                  std::to_string(range_s) + "s:" + std::to_string(step) + "s]))",
                              at_unix_s);
  if (!over_range) return over_range;
  // A series born after the last step (within a step of `at`) is only in an instant read.
  auto now = api.Query("max by (" + by + ") (timestamp(" + selector + "))", at_unix_s);
  if (!now) return now;
  std::map<std::map<std::string, std::string>, double> latest;
  for (const auto* reply : {&*over_range, &*now})
    for (const auto& s : *reply) {
      auto [it, fresh] = latest.emplace(s.labels, s.value);
      if (!fresh) it->second = std::max(it->second, s.value);
    }
  std::vector<PromSample> out;
  for (auto& [labels, value] : latest) out.push_back({labels, value});
  return out;
}

Expected<PrometheusApi> PrometheusApi::Open(const PrometheusAccess& access) {
  http::Endpoint e;
  e.what = "prometheus";
  e.url = access.url;
  if (!access.token_file.empty() && !access.user.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     "--prometheus-token-file and --prometheus-user: give one of them");
  if (!access.token_file.empty()) {
    auto t = ReadSecretFile("--prometheus-token-file", access.token_file);
    if (!t) return tl::unexpected(t.error());
    e.bearer_token = std::move(*t);
  }
  if (access.user.empty() != access.password_file.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     "--prometheus-user and --prometheus-password-file go together");
  if (!access.password_file.empty()) {
    auto p = ReadSecretFile("--prometheus-password-file", access.password_file);
    if (!p) return tl::unexpected(p.error());
    e.user = access.user;
    e.password = std::move(*p);
  }
  if (!access.ca_file.empty()) {
    auto ca = ReadBoundedFile(access.ca_file, 1 << 20);
    if (!ca)
      return MakeError(ErrorCode::kInvalidInput, "--prometheus-ca-file: " + ca.error().message);
    e.tls.ca_file = access.ca_file;
  }
  for (const char c : access.tenant)
    if (!std::isprint(static_cast<unsigned char>(c)))
      return MakeError(ErrorCode::kInvalidInput,
                       "--prometheus-tenant: not a printable header value");
  if (!access.tenant.empty()) e.headers.emplace_back("X-Scope-OrgID", access.tenant);
  e.accept_gzip = access.gzip;  // the cap counts a reply unpacked
  e.cap_hint = "--prometheus-max-reply-mb";
  auto client = http::Client::Open(std::move(e), {.connect_timeout = kConnectTimeout,
                                                  .read_timeout = {},
                                                  .deadline = access.limits.deadline,
                                                  .max_bytes = access.limits.max_bytes});
  if (!client) return tl::unexpected(client.error());
  return PrometheusApi(access, std::move(*client));
}

Expected<http::Reply> PrometheusApi::Get(const std::string& path, const http::Pairs& params,
                                         const std::string& what) const {
  auto r = client_.Get(path, params, what);
  if (!r) return tl::unexpected(r.error());
  if (r->status == 401 || r->status == 403)
    return MakeError(ErrorCode::kUnavailable,
                     what + ": HTTP " + std::to_string(r->status) +
                         (access_.token_file.empty() && access_.user.empty()
                              ? " (needs credentials: --prometheus-token-file or --prometheus-user)"
                              : " (the credentials were refused)"));
  return r;
}

Expected<std::vector<PromSample>> PrometheusApi::Query(const std::string& promql,
                                                       int64_t at) const {
  const std::string what = "prometheus " + access_.url + ", query " + promql;
  auto r = Get("/api/v1/query", {{"query", promql}, {"time", std::to_string(at)}}, what);
  if (!r) return tl::unexpected(r.error());
  return ParseVectorReply(r->body, r->status, what, access_.limits);
}

Expected<std::vector<PromSeries>> PrometheusApi::QueryRaw(const std::string& promql,
                                                          int64_t at) const {
  const std::string what = "prometheus " + access_.url + ", query " + promql;
  auto r = Get("/api/v1/query", {{"query", promql}, {"time", std::to_string(at)}}, what);
  if (!r) return tl::unexpected(r.error());
  return ParseMatrixReply(r->body, r->status, what, access_.limits);
}

Expected<std::vector<PromSeries>> PrometheusApi::QueryRange(const std::string& promql,
                                                            int64_t start, int64_t end,
                                                            int64_t step) const {
  const std::string what = "prometheus " + access_.url + ", range query " + promql;
  auto r = Get("/api/v1/query_range",
               {{"query", promql},
                {"start", std::to_string(start)},
                {"end", std::to_string(end)},
                {"step", std::to_string(step)}},
               what);
  if (!r) return tl::unexpected(r.error());
  return ParseMatrixReply(r->body, r->status, what, access_.limits);
}

}  // namespace gpumeter::history
