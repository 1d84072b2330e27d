// A client of a gpumeter agent's JSON API (docs/api.md), shared by `gpumeter top` and
// `gpumeter audit`: a bearer token from a file, an optional CA file for an agent with a
// self-signed certificate, a deadline per request and a cap on the reply's size, so that a slow,
// hostile or mistaken server can neither hang a caller for long nor fill its memory.
// Blocking; one client per thread (it holds no connection between requests).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace gpumeter::top {

struct HttpLimits {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds read_timeout{5000};  // per read, as httplib applies it
  std::size_t max_reply_bytes = 16u << 20;       // a larger reply is refused, not truncated
  std::chrono::milliseconds deadline{10000};     // the whole request, connect to last byte
};

// GET `path` under `url` (http(s)://host:port[/prefix]; `path` empty: the URL's own path, or
// /metrics). `what` names the flag in errors ("--agent"). `token`: "" for none. `ca_file`: "" for
// the system's trust store. Errors: kInvalidInput (not a URL), kUnavailable (unreachable, HTTP
// status other than 200, too large, not complete within the deadline).
Expected<std::string> HttpGet(const std::string& what, const std::string& url,
                              const std::string& path, const std::string& token,
                              const std::string& ca_file, const HttpLimits& limits = {});

class AgentClient {
 public:
  // `url`: the agent's base URL, e.g. http://127.0.0.1:9402 (a trailing / is dropped).
  AgentClient(std::string url, std::string token, std::string ca_file, HttpLimits limits = {});

  // GET `path` (e.g. "/api/v1/units") and parse it; a reply that is not a JSON object is
  // kInvalidInput ("is this a gpumeter agent?").
  Expected<nlohmann::json> GetJson(const std::string& path) const;
  const std::string& url() const { return url_; }

 private:
  std::string url_, token_, ca_file_;
  HttpLimits limits_;
};

}  // namespace gpumeter::top
