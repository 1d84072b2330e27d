// HTTP endpoints of the agent and the demo: /metrics (OpenMetrics 1.0 when the scraper asks for
// it, else text 0.0.4; gzip when accepted), the JSON API
// /api/v2/{units,ledger,processes,findings,sources} (camelCase; /api/v1 the same in snake_case,
// deprecated: docs/api.md), /healthz and /readyz (ready once a good sample went through the
// pipeline). Handlers read the latest NodeState and the sampler's health through a StateView only;
// a scrape never waits on the driver, the kubelet or /proc. Optional TLS and a bearer token
// (required on every path but /healthz and /readyz, which kubelet probes call). Served by the
// event-driven server (event_server.h): idle, dribbling or half-sent connections cannot starve the
// port. Start() binds (port 0 picks a free port) and serves on its own threads; Stop() or the
// destructor shuts it down.
#pragma once

#include <memory>
#include <string>

#include "common/error.h"
#include "node/state/state_view.h"
#include "sinks/metrics/event_server.h"
#include "sinks/metrics/exposition.h"

namespace gpumeter::metrics {

struct HttpOptions {
  std::string listen = "127.0.0.1:9402";    // HOST:PORT
  std::string tls_cert_file, tls_key_file;  // both or neither: HTTPS
  std::string bearer_token_file;            // read once at Start; empty: no auth
  unsigned max_connections = 1000;          // open at once (the 500 a hostile client holds fit)
  std::chrono::milliseconds header_deadline{5000};  // a request's line and headers, in all
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
  Expected<void> Start(const std::string& listen) {
    HttpOptions o;
    o.listen = listen;
    return Start(o);
  }
  void Stop();
  // "http(s)://HOST:PORT" actually bound; valid after Start().
  const std::string& url() const;
  // Connections closed for sending their headers too slowly, since Start.
  uint64_t cut_connections() const;

  // One request, as the event loop hands it over (public for tests of the routes).
  HttpAnswer Handle(const HttpRequest& request) const;

 private:
  const node::StateView& view_;
  ExpositionOptions options_;
  std::string token_;  // empty: no auth
  std::unique_ptr<EventServer> server_;
  std::string url_;
};

}  // namespace gpumeter::metrics
