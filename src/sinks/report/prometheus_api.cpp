#include "sinks/report/prometheus_api.h"

#include <httplib.h>

#include <cctype>
#include <chrono>

#include "common/request_deadline.h"
#include "common/secret_file.h"

namespace gpumeter::report {
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

Expected<PrometheusApi> PrometheusApi::Open(const PrometheusAccess& access) {
  PrometheusApi api(access);
  const auto& url = access.url;
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos ||
      (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0))
    return MakeError(ErrorCode::kInvalidInput,
                     "prometheus '" + url + "': not an http(s)://host:port URL");
  const auto path_start = url.find('/', scheme_end + 3);
  // user:password@host would be printed in every error: credentials go in the flags' files.
  if (url.substr(0, path_start).find('@') != std::string::npos)
    return MakeError(ErrorCode::kInvalidInput,
                     "prometheus URL: credentials in the URL are refused (use "
                     "--prometheus-user/--prometheus-password-file or --prometheus-token-file)");
  api.base_ = path_start == std::string::npos ? url : url.substr(0, path_start);
  api.prefix_ = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!api.prefix_.empty() && api.prefix_.back() == '/') api.prefix_.pop_back();
  if (!access.token_file.empty() && !access.user.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     "--prometheus-token-file and --prometheus-user: give one of them");
  if (!access.token_file.empty()) {
    auto t = ReadSecretFile("--prometheus-token-file", access.token_file);
    if (!t) return tl::unexpected(t.error());
    api.token_ = std::move(*t);
  }
  if (access.user.empty() != access.password_file.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     "--prometheus-user and --prometheus-password-file go together");
  if (!access.password_file.empty()) {
    auto p = ReadSecretFile("--prometheus-password-file", access.password_file);
    if (!p) return tl::unexpected(p.error());
    api.password_ = std::move(*p);
  }
  if (!access.ca_file.empty()) {
    auto ca = ReadBoundedFile(access.ca_file, 1 << 20);
    if (!ca)
      return MakeError(ErrorCode::kInvalidInput, "--prometheus-ca-file: " + ca.error().message);
  }
  for (const char c : access.tenant)
    if (!std::isprint(static_cast<unsigned char>(c)))
      return MakeError(ErrorCode::kInvalidInput,
                       "--prometheus-tenant: not a printable header value");
  httplib::Client probe(api.base_);
  if (!probe.is_valid())
    return MakeError(ErrorCode::kInvalidInput,
                     "prometheus '" + url + "': not an http(s)://host:port URL");
  return api;
}

Expected<PrometheusApi::Reply> PrometheusApi::Get(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
    const std::string& what) const {
  httplib::Client client(base_);
  client.set_connection_timeout(kConnectTimeout);
  client.set_read_timeout(access_.limits.deadline);
  if (!access_.ca_file.empty()) client.set_ca_cert_path(access_.ca_file.c_str());
  if (!token_.empty()) client.set_bearer_token_auth(token_.c_str());
  if (!access_.user.empty()) client.set_basic_auth(access_.user.c_str(), password_.c_str());
  httplib::Headers headers;
  if (!access_.tenant.empty()) headers.emplace("X-Scope-OrgID", access_.tenant);
  httplib::Params query(params.begin(), params.end());
  Reply reply;
  bool too_big = false, too_slow = false;
  const auto& limits = access_.limits;
  const auto deadline = std::chrono::steady_clock::now() + limits.deadline;
  const RequestDeadline watch(client, deadline);  // headers too: the receiver sees only the body
  auto r = client.Get(prefix_ + path, query, headers, [&](const char* d, size_t n) {
    too_big = reply.body.size() + n > limits.max_bytes;
    too_slow = std::chrono::steady_clock::now() > deadline;
    if (too_big || too_slow) return false;
    reply.body.append(d, n);
    return true;
  });
  if (too_big)
    return MakeError(ErrorCode::kUnavailable,
                     what + ": reply over the cap of " + std::to_string(limits.max_bytes) +
                         " bytes (raise it with --prometheus-max-reply-mb)");
  if (!r && (too_slow || watch.fired() || r.error() == httplib::Error::Read))
    return MakeError(ErrorCode::kUnavailable, what + ": no complete reply within " +
                                                  std::to_string(limits.deadline.count() / 1000) +
                                                  " s");
  if (!r)
    return MakeError(ErrorCode::kUnavailable, "prometheus " + access_.url + ": unreachable (" +
                                                  httplib::to_string(r.error()) + ")");
  if (r->status == 401 || r->status == 403)
    return MakeError(ErrorCode::kUnavailable,
                     what + ": HTTP " + std::to_string(r->status) +
                         (token_.empty() && access_.user.empty()
                              ? " (needs credentials: --prometheus-token-file or --prometheus-user)"
                              : " (the credentials were refused)"));
  reply.status = r->status;
  return reply;
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

}  // namespace gpumeter::report
