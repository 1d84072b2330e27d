#include "sinks/top/agent_client.h"

#include <httplib.h>

#include "common/request_deadline.h"

namespace gpumeter::top {

Expected<std::string> HttpGet(const std::string& what, const std::string& url,
                              const std::string& path, const std::string& token,
                              const std::string& ca_file, const HttpLimits& limits) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return MakeError(ErrorCode::kInvalidInput, what + " '" + url + "': not an http(s):// URL");
  const auto path_start = url.find('/', scheme_end + 3);
  const std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  httplib::Client client(origin);
  if (!client.is_valid())
    return MakeError(ErrorCode::kInvalidInput, what + " '" + url + "': not an http(s):// URL");
  client.set_connection_timeout(limits.connect_timeout);
  client.set_read_timeout(limits.read_timeout);
  client.set_write_timeout(limits.connect_timeout);
  if (!token.empty()) client.set_bearer_token_auth(token);
  if (!ca_file.empty()) client.set_ca_cert_path(ca_file);
  // `path` goes under the URL's own path (an agent behind a prefix); without one, the URL's path
  // (or /metrics) is the target.
  const std::string base_path = path_start == std::string::npos ? "" : url.substr(path_start);
  const std::string target =
      path.empty() ? (base_path.empty() ? "/metrics" : base_path) : base_path + path;
  const std::string where = what + " " + origin + target;
  std::string body;
  bool too_large = false;
  const RequestDeadline deadline(client, std::chrono::steady_clock::now() + limits.deadline);
  // The body is read in pieces so that an oversized reply is dropped as it arrives, never held.
  auto r = client.Get(target, [&](const char* data, size_t n) {
    if (body.size() + n > limits.max_reply_bytes) return !(too_large = true);
    body.append(data, n);
    return true;
  });
  if (too_large)
    return MakeError(ErrorCode::kUnavailable, where + ": reply larger than " +
                                                  std::to_string(limits.max_reply_bytes) +
                                                  " bytes, refused");
  if (!r && deadline.fired())  // a reply that completed as the deadline passed still counts
    return MakeError(ErrorCode::kUnavailable, where + ": no complete reply within " +
                                                  std::to_string(limits.deadline.count()) + " ms");
  if (!r)
    return MakeError(ErrorCode::kUnavailable,
                     where + ": unreachable (" + httplib::to_string(r.error()) + ")");
  if (r->status != 200)
    return MakeError(ErrorCode::kUnavailable, where + ": HTTP " + std::to_string(r->status));
  return body;
}

AgentClient::AgentClient(std::string url, std::string token, std::string ca_file, HttpLimits limits)
    : url_(std::move(url)),
      token_(std::move(token)),
      ca_file_(std::move(ca_file)),
      limits_(limits) {
  while (!url_.empty() && url_.back() == '/') url_.pop_back();
}

Expected<nlohmann::json> AgentClient::GetJson(const std::string& path) const {
  auto body = HttpGet("--agent", url_, path, token_, ca_file_, limits_);
  if (!body) return tl::unexpected(body.error());
  auto j = nlohmann::json::parse(*body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return MakeError(
        ErrorCode::kInvalidInput,
        "--agent " + url_ + path + ": the reply is not a JSON object (is this a gpumeter agent?)");
  return j;
}

}  // namespace gpumeter::top
