// HTTP endpoints of the agent and the demo: /metrics (OpenMetrics 1.0 when the scraper asks for
// it, else text 0.0.4; gzip when accepted), the JSON API /api/v1/{units,ledger,processes,sources}
// (docs/api.md), /healthz and /readyz (ready once a good sample went through the pipeline).
// Handlers read the latest NodeState and the sampler's health through a StateView only; a scrape
// never waits on the driver, the kubelet or /proc. Optional TLS and a bearer token (required on
// every path but /healthz and /readyz, which kubelet probes call). Start() binds (port 0 picks a
// free port) and serves on its own threads; Stop() or the destructor shuts it down.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "common/error.h"
#include "node/state/state_view.h"
#include "sinks/metrics/exposition.h"

namespace httplib {
class Server;
}

namespace gpumeter::metrics {

struct HttpOptions {
  std::string listen = "127.0.0.1:9402";    // HOST:PORT
  std::string tls_cert_file, tls_key_file;  // both or neither: HTTPS
  std::string bearer_token_file;            // read once at Start; empty: no auth
};

class HttpServer {
 public:
  // `view` must outlive the server.
  HttpServer(const node::StateView& view, ExpositionOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Errors name the flag and the problem (bad address, port in use, unreadable certificate or
  // token).
  Expected<void> Start(const HttpOptions& options);
  Expected<void> Start(const std::string& listen) { return Start(HttpOptions{listen, {}, {}, {}}); }
  void Stop();
  // "http(s)://HOST:PORT" actually bound; valid after Start().
  const std::string& url() const { return url_; }

 private:
  const node::StateView& view_;
  ExpositionOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
};

// Splits "HOST:PORT" (also "[::1]:PORT"); the error names the flag value.
Expected<std::pair<std::string, int>> ParseListen(const std::string& listen);

}  // namespace gpumeter::metrics
