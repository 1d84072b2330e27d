// An HTTP(S) client for the API server from an ApiServerConfig: server verification with the
// configured CA (file or PEM), client certificate (files or PEM), and the bearer token, re-read
// from its file on every call (projected tokens rotate). One client per request sequence.
#pragma once

#include <chrono>
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

// "HTTP 403: <body start>" or "request failed: <transport error>", for messages.
std::string Describe(const httplib::Result& result);

}  // namespace gpumeter::kube_api
