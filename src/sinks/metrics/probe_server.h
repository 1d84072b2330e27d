// The probe listener (--probe-listen): /healthz and /readyz on a port of their own, served by the
// same event-driven server as the main port (event_server.h), so that the kubelet's probes are
// answered while any number of clients hold idle or half-sent connections, on this port or on
// the main one, and whatever a scrape costs. Connections are bounded in number
// (--probe-max-connections) and in time (an idle one is closed after 2 s, one whose headers have
// not all arrived after 2 s). A per-address bound alone would not do: with hostNetwork the probes
// come from the node's own address, shared by every pod on it.
//
// Handlers read only the StateView (cheap copies), on the event loop's thread. Thread-safe;
// Start() once, Stop() or the destructor ends it.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/error.h"
#include "node/state/state_view.h"
#include "sinks/metrics/event_server.h"

namespace gpumeter::metrics {

struct ProbeOptions {
  std::string listen;                        // HOST:PORT (port 0 picks one); empty: no listener
  std::chrono::milliseconds stale_after{0};  // see readiness.h
  unsigned max_connections = 1000;           // open at once; more are refused by the listener
  unsigned idle_timeout_s = 2;               // a connection silent this long is closed
};

class ProbeServer {
 public:
  // `view` must outlive the server.
  explicit ProbeServer(const node::StateView& view);
  ~ProbeServer();
  ProbeServer(const ProbeServer&) = delete;
  ProbeServer& operator=(const ProbeServer&) = delete;

  // Errors name the flag (bad address, port in use).
  Expected<void> Start(const ProbeOptions& options);
  void Stop();
  // "http://HOST:PORT" actually bound; valid after Start().
  const std::string& url() const { return url_; }

  // Answers one request; what the event loop calls.
  HttpAnswer Handle(const HttpRequest& request) const;

 private:
  const node::StateView& view_;
  ProbeOptions options_;
  std::unique_ptr<EventServer> server_;
  std::string url_;
};

}  // namespace gpumeter::metrics
