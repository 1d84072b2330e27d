// The one HTTP client for every request gpumeter makes of another server: Prometheus, the agent's
// JSON API (`top`, `audit`), a dcgm-exporter page (the agent's source and `audit`), the Kubernetes
// API server. Everything outside the process is hostile until proven otherwise, so every request
//   - has an overall deadline, connect to last byte (httplib's own timeouts are per read: a server
//     that trickles a header byte a second held a request for as long as it liked), enforced by
//     RequestDeadline (request_deadline.h), TLS handshakes included;
//   - has a cap on the body, counted after decompression and refused as it arrives, never held;
//   - asks for gzip only when the endpoint says so (a compressed reply that was not asked for is
//     refused: a 1 MB gzip page can unpack to gigabytes);
//   - follows no redirect (a 3xx is a reply like any other status: the caller decides);
//   - names the source (`Endpoint::what`) and the URL in every error, with the server's words
//     quoted through Excerpt (no control character reaches a terminal or a log).
// Secrets arrive as values: the callers read them from files (common/secret_file.h) and they
// never appear in an error.
//
// Thread-safety: requests may be made from several threads at once (each is a connection of its
// own); Cancel() may be called from any thread, at any time (it ends every request in flight and
// every later one at once). Copies share the cancellation.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace gpumeter::http {

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct Limits {
  std::chrono::milliseconds connect_timeout{5000};
  // Per socket read; zero: the deadline. A long watch sets it apart from the deadline.
  std::chrono::milliseconds read_timeout{0};
  std::chrono::milliseconds deadline{10000};  // the whole request, connect to last byte
  std::size_t max_bytes = 16u << 20;          // body bytes after decompression; more is refused
};

struct Tls {
  std::string ca_file;  // PEM bundle to verify the server with ("": the system's trust store)
  bool verify = true;   // false only where the user said so (kubeconfig's insecure-skip-tls-verify)
  std::string client_cert_file, client_key_file;  // mutual TLS from files, or
  std::string client_cert_pem, client_key_pem;    // from PEM text (kubeconfig's *-data)
};

struct Endpoint {
  std::string what;  // names the source or flag in errors: "--dcgm-metrics", "prometheus"
  std::string url;   // http(s)://host:port[/path]; the path prefixes every request's path
  std::string bearer_token;
  std::string user, password;  // basic auth
  Pairs headers;               // sent with every request (e.g. X-Scope-OrgID)
  Tls tls;
  bool accept_gzip = false;
  std::string default_path = "/";  // requested when the URL has no path and the caller gives none
  std::string
      cap_hint;  // how to raise the cap, appended to its error ("--prometheus-max-reply-mb")
  std::string deadline_hint;  // how to raise the deadline, appended to its error ("--timeout")
};

struct Reply {
  int status = 0;
  std::string body;
  std::string content_type;
};

// How a streamed request ended, when it did not fail.
struct StreamEnd {
  int status = 0;                // 0: no status line arrived
  bool cut_at_deadline = false;  // the deadline ended it (status says whether headers came)
  bool stopped = false;          // a callback returned false, or Cancel()
};

class Client {
 public:
  // Checks the URL (http or https, a host, no credentials in it) and the TLS material's shape.
  // Errors: kInvalidInput naming `what` and the URL.
  static Expected<Client> Open(Endpoint endpoint, Limits limits);

  // GET the URL's path + `path` (+ `?params`). Any HTTP status is a reply. `what` replaces the
  // endpoint's name in errors when not empty (e.g. "prometheus URL, query Q"). Errors
  // (kUnavailable): unreachable, TLS failures, the deadline, the cap, an unasked encoding, Cancel.
  Expected<Reply> Get(const std::string& path, const Pairs& params = {},
                      const std::string& what = "") const;
  // As Get, and a status other than 200 is an error: "WHAT: HTTP 503: <the body's start>".
  Expected<std::string> GetOk(const std::string& path, const Pairs& params = {},
                              const std::string& what = "") const;
  // As GetOk, with the body handed to `on_chunk` piece by piece as it arrives (unpacked, where
  // gzip was asked for) instead of kept: memory does not grow with the body, the caller keeps
  // what it needs. The cap counts the bytes handed over, the deadline is the whole request's;
  // the body of a status other than 200 is not handed over (its start is GetOk's error).
  Expected<void> GetOkChunked(const std::string& path,
                              const std::function<void(std::string_view)>& on_chunk,
                              const Pairs& params = {}, const std::string& what = "") const;
  // A streamed GET (a watch): `on_status` sees the status line once (false: stop; the body of a
  // refused request is not streamed), `on_data` each piece of the body (false: stop). The cap
  // is the caller's (it knows what a unit of the stream is). Transport failures are errors; the
  // deadline, a stop and the server's end are a StreamEnd.
  Expected<StreamEnd> Stream(const std::string& path, const std::function<bool(int)>& on_status,
                             const std::function<bool(const char*, std::size_t)>& on_data) const;

  // Ends the requests in flight (from any thread) and refuses every later one. Thread-safe.
  void Cancel() const;

  const Endpoint& endpoint() const { return endpoint_; }
  const Limits& limits() const { return limits_; }
  // scheme://host:port and the URL's path (no trailing /), as parsed by Open.
  const std::string& origin() const { return origin_; }
  const std::string& prefix() const { return prefix_; }

  struct Shared;  // the request in flight, for Cancel()

 private:
  Client(Endpoint endpoint, Limits limits);
  std::string Target(const std::string& path, const Pairs& params) const;
  // "WHAT ORIGIN/PATH", or `what` when given: how errors name a request.
  std::string Where(const std::string& target, const std::string& what) const;
  // The request behind Get and GetOkChunked: the body, within the cap, goes to `on_body` with
  // the reply's status; the Reply has no body.
  using OnBody = std::function<void(int status, const char* data, std::size_t size)>;
  Expected<Reply> Fetch(const std::string& path, const Pairs& params, const std::string& what,
                        const OnBody& on_body) const;

  Endpoint endpoint_;
  Limits limits_;
  std::string origin_, prefix_;
  std::shared_ptr<Shared> shared_;
};

// "1 s" for whole seconds, else "800 ms": how errors state a deadline.
std::string FormatDuration(std::chrono::milliseconds d);
// A query parameter's value, percent-encoded.
std::string EncodeQueryValue(const std::string& value);

}  // namespace gpumeter::http
