// The one HTTP server for every port the agent listens on (/metrics and the JSON API, the probes):
// libmicrohttpd's event loop (epoll), so that a connection costs a slot and a few KiB, never a
// thread. A client cannot starve a port:
//   - connections are bounded in number (`max_connections`; the listener refuses more), and the
//     process's open-file soft limit is raised to its hard limit at start (RaiseOpenFileLimit);
//   - a connection silent for `idle_timeout_s` is closed (libmicrohttpd's timeout, which every
//     byte resets);
//   - a request's line and headers (and, over TLS, the handshake before them) must all arrive
//     within `header_deadline`, however slowly they trickle: libmicrohttpd has no such deadline,
//     so a sweeper thread shuts the socket of a connection past it (its number is checked to
//     still name the same socket), and counts it;
//   - TLS is libmicrohttpd's (GnuTLS), under the same bounds.
// Handlers run on the event loop's threads (`threads`), read only what they are given, and must
// be quick and thread-safe. Start() once; Stop() or the destructor ends it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"

struct MHD_Daemon;

namespace gpumeter::metrics {

struct EventServerOptions {
  std::string listen;                               // HOST:PORT (port 0 picks one)
  std::string flag = "--listen";                    // names the flag in errors
  std::string tls_cert_pem, tls_key_pem;            // both or neither: HTTPS
  unsigned max_connections = 1000;                  // open at once; more are refused
  unsigned idle_timeout_s = 2;                      // silent this long: closed
  std::chrono::milliseconds header_deadline{5000};  // line + headers (+ handshake) in all
  unsigned threads = 2;                             // event-loop threads
};

struct HttpRequest {
  std::string method, path;
  std::function<std::string(const char* name)> header;  // "" when absent
};

struct HttpAnswer {
  unsigned status = 200;
  std::string body;
  std::string content_type = "text/plain";
  std::vector<std::pair<std::string, std::string>> headers;
};

using HttpHandler = std::function<HttpAnswer(const HttpRequest&)>;

class EventServer {
 public:
  explicit EventServer(HttpHandler handler);
  ~EventServer();
  EventServer(const EventServer&) = delete;
  EventServer& operator=(const EventServer&) = delete;

  // Errors name the flag: a bad address, a port in use, a certificate GnuTLS refuses.
  Expected<void> Start(const EventServerOptions& options);
  void Stop();
  // "http(s)://HOST:PORT" actually bound; valid after Start().
  const std::string& url() const { return url_; }
  // Connections closed for missing the header deadline, since Start. Thread-safe.
  uint64_t cut() const { return cut_.load(); }

  // For the C callbacks only.
  struct Conn;
  void Opened(Conn* c);
  void Closed(Conn* c);
  HttpAnswer Handle(const HttpRequest& request) const { return handler_(request); }

 private:
  void Sweep();

  HttpHandler handler_;
  EventServerOptions options_;
  std::unique_ptr<MHD_Daemon, void (*)(MHD_Daemon*)> daemon_;
  std::string url_;
  std::mutex mu_;
  std::vector<Conn*> conns_;  // open connections (owned by libmicrohttpd's socket context)
  bool stop_ = false;
  std::atomic<uint64_t> cut_{0};
  std::thread sweeper_;
};

// Raises RLIMIT_NOFILE's soft limit to the hard limit (a server that holds many connections must
// not run out of descriptors at the distribution's default of 1024). The limit now in force.
uint64_t RaiseOpenFileLimit();

// Splits "HOST:PORT" (also "[::1]:PORT"); the error names the flag value.
Expected<std::pair<std::string, int>> ParseListen(const std::string& listen);

}  // namespace gpumeter::metrics
