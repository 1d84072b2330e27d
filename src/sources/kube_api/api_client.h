// The API server's client: the one HTTP client (common/http/client.h) set up from an
// ApiServerConfig: server verification with the configured CA file, a client certificate (files
// or PEM), and the bearer token, re-read from its file on every call (projected tokens rotate).
// One client per request sequence.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "common/error.h"
#include "common/http/client.h"
#include "sources/kube_api/kubeconfig.h"

namespace gpumeter::kube_api {

// A list request's bounds: the API server is outside the process, so a reply that never ends or
// never stops growing must cost a bounded time and memory (a node's pods list is a few MB).
struct ListLimits {
  std::chrono::milliseconds deadline{60000};  // the whole request, connect to last byte
  std::size_t max_bytes = 64u << 20;          // a larger reply is refused, not truncated
};

// `what` names the request in errors ("list pods"); `limits` bound each request. kInvalidInput:
// the server URL or TLS material cannot be used; kUnavailable: the token file cannot be read.
Expected<http::Client> MakeApiClient(const ApiServerConfig& config, const std::string& what,
                                     const http::Limits& limits);

// "HTTP 403: <body start>", for messages.
std::string Describe(const http::Reply& reply);

}  // namespace gpumeter::kube_api
