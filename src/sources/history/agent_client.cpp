#include "sources/history/agent_client.h"

namespace gpumeter::history {

Expected<AgentClient> AgentClient::Open(const std::string& url, const std::string& token,
                                        const std::string& ca_file, const http::Limits& limits) {
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  http::Endpoint e;
  e.what = "--agent";
  e.url = base;
  e.bearer_token = token;
  e.tls.ca_file = ca_file;
  auto client = http::Client::Open(std::move(e), limits);
  if (!client) return tl::unexpected(client.error());
  return AgentClient(base, std::move(*client));
}

Expected<nlohmann::json> AgentClient::GetJson(const std::string& path) const {
  auto body = client_.GetOk(path);
  if (!body) return tl::unexpected(body.error());
  auto j = nlohmann::json::parse(*body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return MakeError(
        ErrorCode::kInvalidInput,
        "--agent " + url_ + path + ": the reply is not a JSON object (is this a gpumeter agent?)");
  return j;
}

}  // namespace gpumeter::history
