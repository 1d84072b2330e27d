#include "sinks/metrics/probe_server.h"

#include "sinks/metrics/readiness.h"

namespace gpumeter::metrics {

ProbeServer::ProbeServer(const node::StateView& view) : view_(view) {}

ProbeServer::~ProbeServer() { Stop(); }

// GET and HEAD only: the event server answers other methods itself.
HttpAnswer ProbeServer::Handle(const HttpRequest& request) const {
  if (request.path == "/healthz") return {200, "ok\n", "text/plain", {}};
  if (request.path == "/readyz") {
    const auto r = CheckReadiness(view_.Health(), *view_.State(), options_.stale_after,
                                  std::chrono::steady_clock::now());
    return {r.ready ? 200u : 503u, r.why + "\n", "text/plain", {}};
  }
  return {404, "not found: the probe listener serves /healthz and /readyz\n", "text/plain", {}};
}

Expected<void> ProbeServer::Start(const ProbeOptions& o) {
  options_ = o;
  EventServerOptions eo;
  eo.listen = o.listen;
  eo.flag = "--probe-listen";
  eo.max_connections = o.max_connections;
  eo.idle_timeout_s = o.idle_timeout_s;
  eo.header_deadline = std::chrono::seconds(o.idle_timeout_s);
  eo.threads = 1;
  server_ = std::make_unique<EventServer>([this](const HttpRequest& r) { return Handle(r); });
  if (auto started = server_->Start(eo); !started) {
    server_.reset();
    return tl::unexpected(started.error());
  }
  url_ = server_->url();
  return {};
}

void ProbeServer::Stop() {
  if (server_) server_->Stop();
}

}  // namespace gpumeter::metrics
