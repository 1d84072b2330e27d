// A client of a gpumeter agent's JSON API (docs/api.md), shared by `gpumeter top` and
// `gpumeter audit`: a bearer token, an optional CA file for an agent with a self-signed
// certificate, through the one HTTP client (common/http/client.h): an overall deadline per
// request and a cap on the reply's size, so that a slow, hostile or mistaken server can neither
// hang a caller for long nor fill its memory. Blocking; one client per thread.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/http/client.h"

namespace gpumeter::history {

class AgentClient {
 public:
  // `url`: the agent's base URL, e.g. http://127.0.0.1:9402 (a trailing / is dropped). `token`:
  // "" for none; `ca_file`: "" for the system's trust store. kInvalidInput: not a usable URL.
  static Expected<AgentClient> Open(const std::string& url, const std::string& token,
                                    const std::string& ca_file, const http::Limits& limits);

  // GET `path` (e.g. "/api/v1/units") and parse it; a reply that is not a JSON object is
  // kInvalidInput ("is this a gpumeter agent?"); unreachable, slow, too large or not 200:
  // kUnavailable.
  Expected<nlohmann::json> GetJson(const std::string& path) const;
  const std::string& url() const { return url_; }

 private:
  AgentClient(std::string url, http::Client client)
      : url_(std::move(url)), client_(std::move(client)) {}
  std::string url_;
  http::Client client_;
};

}  // namespace gpumeter::history
