#include "sinks/metrics/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <functional>

#include "common/secret_file.h"
#include "sinks/metrics/json_api.h"
#include "sinks/metrics/readiness.h"
#include "sinks/metrics/worker_pool.h"

namespace gpumeter::metrics {

namespace {
constexpr size_t kWorkerThreads = 16;
constexpr std::chrono::milliseconds kWorkerLinger{1000};
}  // namespace

Expected<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size())
    return MakeError(ErrorCode::kInvalidInput,
                     "--listen '" + listen + "': expected HOST:PORT, e.g. 127.0.0.1:9402");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  const auto p = listen.substr(colon + 1);
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || end != p.data() + p.size() || port < 0 || port > 65535)
    return MakeError(ErrorCode::kInvalidInput, "--listen '" + listen + "': port must be 0-65535");
  return std::make_pair(host, port);
}

HttpServer::HttpServer(const node::StateView& view, ExpositionOptions options)
    : view_(view), options_(std::move(options)) {}

HttpServer::~HttpServer() { Stop(); }

namespace {

// Constant-time comparison, so the token cannot be guessed byte by byte from response times.
// `expected` is never empty.
bool SameSecret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i < expected.size() ? i : 0]);
  return diff == 0;
}

bool AcceptsGzip(const httplib::Request& req) {
  return req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
}

// httplib compresses text/plain and application/json itself (gzip or brotli, as the client
// prefers); the OpenMetrics type is not on its list, so that body is compressed here.
void SetBody(const httplib::Request& req, httplib::Response& res, std::string body,
             const char* type, bool compress_here) {
  if (compress_here && AcceptsGzip(req)) {
    std::string gz;
    httplib::detail::gzip_compressor compressor;
    const bool ok =
        compressor.compress(body.data(), body.size(), true, [&](const char* d, size_t n) {
          gz.append(d, n);
          return true;
        });
    if (ok) {
      res.set_header("Content-Encoding", "gzip");
      body = std::move(gz);
    }
  }
  res.set_content(std::move(body), type);
}

// The server: HTTPS when a certificate and a key are given (both or neither).
Expected<std::unique_ptr<httplib::Server>> MakeServer(const HttpOptions& o) {
  if (o.tls_cert_file.empty() != o.tls_key_file.empty())
    return MakeError(ErrorCode::kInvalidInput, "--tls-cert and --tls-key go together");
  if (o.tls_cert_file.empty()) return std::make_unique<httplib::Server>();
  auto ssl = std::make_unique<httplib::SSLServer>(o.tls_cert_file.c_str(), o.tls_key_file.c_str());
  if (!ssl->is_valid())
    return MakeError(ErrorCode::kInvalidInput,
                     "--tls-cert " + o.tls_cert_file + " / --tls-key " + o.tls_key_file +
                         ": cannot load the certificate and key (PEM, matching)");
  return std::unique_ptr<httplib::Server>(std::move(ssl));
}

// The bearer token from --bearer-token-file; "" when there is none to check.
Expected<std::string> ReadToken(const HttpOptions& o) {
  if (o.bearer_token_file.empty()) return std::string();
  if (auto w = SecretFileWarning("--bearer-token-file", o.bearer_token_file); !w.empty())
    spdlog::warn("{}", w);
  return ReadSecretFile("--bearer-token-file", o.bearer_token_file);
}

// 401 for a request without the token, on every path but the probes (kubelet calls them).
void RequireToken(httplib::Server& server, const std::string& token) {
  server.set_pre_routing_handler([token](const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/healthz" || req.path == "/readyz")
      return httplib::Server::HandlerResponse::Unhandled;
    // The scheme is case-insensitive (RFC 9110 §11.1); the token is compared in constant time.
    const std::string given = req.get_header_value("Authorization");
    const auto space = given.find(' ');
    std::string scheme = given.substr(0, space);
    for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme == "bearer" && space != std::string::npos &&
        SameSecret(given.substr(space + 1), token))
      return httplib::Server::HandlerResponse::Unhandled;
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer");
    res.set_content("unauthorized: send Authorization: Bearer <token>\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
}

// /metrics, the JSON API and the probes; each request reads `view` (and `options`) anew.
void Route(httplib::Server& server, const node::StateView& view, const ExpositionOptions& options) {
  server.Get("/metrics", [&view, &options](const httplib::Request& req, httplib::Response& res) {
    const auto families =
        BuildFamilies(view.Health(), *view.State(), options, std::chrono::steady_clock::now());
    if (WantsOpenMetrics(req.get_header_value("Accept")))
      SetBody(req, res, RenderOpenMetrics(families),
              "application/openmetrics-text; version=1.0.0; charset=utf-8", true);
    else
      SetBody(req, res, RenderText(families), "text/plain; version=0.0.4; charset=utf-8", false);
  });
  auto json = [&server, &view](const char* path,
                               std::function<nlohmann::json(const node::NodeState&)> f) {
    server.Get(path, [&view, f](const httplib::Request& req, httplib::Response& res) {
      // Error texts from sources may hold cut UTF-8: replace it rather than fail the request.
      SetBody(req, res,
              f(*view.State()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
              "application/json", false);
    });
  };
  json("/api/v1/units", UnitsJson);
  json("/api/v1/ledger", LedgerJson);
  json("/api/v1/processes", ProcessesJson);
  json("/api/v1/findings", FindingsJson);
  json("/api/v1/sources", [&view, &options](const node::NodeState& s) {
    return SourcesJson(view.Health(), s, options.stale_after, std::chrono::steady_clock::now());
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/readyz", [&view, &options](const httplib::Request&, httplib::Response& res) {
    const auto r = CheckReadiness(view.Health(), *view.State(), options.stale_after,
                                  std::chrono::steady_clock::now());
    res.status = r.ready ? 200 : 503;
    res.set_content(r.why + "\n", "text/plain");
  });
}

// Socket options and worker threads.
void Tune(httplib::Server& server) {
  // httplib's default also sets SO_REUSEPORT, which lets a second agent bind the same port and
  // silently take half the scrapes. Keep SO_REUSEADDR (fast restarts) only.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    (void)setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // best effort
  });
  // httplib gives each open connection a worker thread until it closes. One request per connection
  // (answered with an honest `Connection: close`: httplib would not answer pipelined requests) and
  // a 2 s read timeout free a worker quickly; the probes have a listener of their own that idle
  // connections cannot starve (probe_server.h).
  // Threads that end when idle, not a fixed pool: their malloc caches go back (worker_pool.h).
  server.new_task_queue = [] { return new OnDemandPool(kWorkerThreads, kWorkerLinger); };
  server.set_keep_alive_max_count(1);
  server.set_read_timeout(2, 0);
  server.set_write_timeout(5, 0);
}

// Binds host:port (port 0: any free port); the port bound, or -1.
int Bind(httplib::Server& server, const std::string& host, int port) {
  if (port == 0) return server.bind_to_any_port(host);
  return server.bind_to_port(host, port) ? port : -1;
}

}  // namespace

Expected<void> HttpServer::Start(const HttpOptions& o) {
  auto hp = ParseListen(o.listen);
  if (!hp) return tl::unexpected(hp.error());
  auto& [host, port] = *hp;
  auto server = MakeServer(o);
  if (!server) return tl::unexpected(server.error());
  server_ = std::move(*server);
  auto token = ReadToken(o);
  if (!token) return tl::unexpected(token.error());
  if (!token->empty()) RequireToken(*server_, *token);
  Route(*server_, view_, options_);
  Tune(*server_);
  const int bound = Bind(*server_, host, port);
  if (bound < 0)
    return MakeError(ErrorCode::kUnavailable,
                     "--listen " + o.listen + ": cannot bind (address in use or not local?)");
  const bool tls = !o.tls_cert_file.empty(), v6 = host.find(':') != std::string::npos;
  url_ = std::string(tls ? "https" : "http") + "://" + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(bound);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the listen loop runs; wait for it so Stop() cannot miss it.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!server_->is_running())
    return MakeError(ErrorCode::kInternal, "--listen " + o.listen + ": HTTP server did not start");
  return {};
}

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpumeter::metrics
