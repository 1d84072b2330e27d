// An HTTP(S) client for the API server from an ApiServerConfig: server verification with the
// configured CA (file or PEM), client certificate (files or PEM), and the bearer token, re-read
// from its file on every call (projected tokens rotate). One client per request sequence.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "common/error.h"
#include "sources/kube_api/kubeconfig.h"

namespace httplib {
class Client;
class Result;
}  // namespace httplib

namespace gpumeter::kube_api {

Expected<std::unique_ptr<httplib::Client>> MakeApiClient(const ApiServerConfig& config,
                                                         std::chrono::milliseconds connect_timeout,
                                                         std::chrono::seconds read_timeout);

// A list request's bounds: the API server is outside the process, so a reply that never ends or
// never stops growing must cost a bounded time and memory (a node's pods list is a few MB).
struct ListLimits {
  std::chrono::milliseconds deadline{60000};  // the whole request, connect to last byte
  std::size_t max_bytes = 64u << 20;          // a larger reply is refused, not truncated
};

struct ListReply {
  int status = 0;
  std::string body;  // up to ListLimits::max_bytes
};

// "HTTP 403: <body start>" or "request failed: <transport error>", for messages.
std::string Describe(const httplib::Result& result);
std::string Describe(const ListReply& reply);  // "HTTP 403: <body start>"

// GET `path` within `limits`; any status is a reply (the caller decides what a 404 means).
// Errors (kUnavailable) start with `what`: transport failures (Describe), the deadline, the cap.
// Blocking; `client` may be stopped from another thread meanwhile (the request then fails).
Expected<ListReply> GetBounded(httplib::Client& client, const std::string& path,
                               const ListLimits& limits, const std::string& what);

}  // namespace gpumeter::kube_api
