#include "metrics/http_server.h"

#include <httplib.h>

#include <sys/socket.h>

#include <charconv>
#include <chrono>

namespace gpumeter::metrics {

Expected<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size())
    return MakeError(ErrorCode::kInvalidInput, "--listen '" + listen + "': expected HOST:PORT, e.g. 127.0.0.1:9400");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  const auto p = listen.substr(colon + 1);
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || end != p.data() + p.size() || port < 0 || port > 65535)
    return MakeError(ErrorCode::kInvalidInput, "--listen '" + listen + "': port must be 0-65535");
  return std::make_pair(host, port);
}

HttpServer::HttpServer(const sampler::Sampler& sampler, const node::NodePipeline& pipeline, ExpositionOptions options)
    : sampler_(sampler), pipeline_(pipeline), options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {}

HttpServer::~HttpServer() { Stop(); }

Expected<void> HttpServer::Start(const std::string& listen) {
  auto hp = ParseListen(listen);
  if (!hp) return tl::unexpected(hp.error());
  auto& [host, port] = *hp;

  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const auto families = BuildFamilies(sampler_.Health(), *pipeline_.Latest(), options_, std::chrono::steady_clock::now());
    res.set_content(RenderText(families), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server_->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ready = pipeline_.Latest()->last_good != nullptr;  // ready after the first full sample
    res.status = ready ? 200 : 503;
    res.set_content(ready ? "ready\n" : "waiting for the first sample\n", "text/plain");
  });

  // httplib's default also sets SO_REUSEPORT, which lets a second agent bind the same port and
  // silently take half the scrapes. Keep SO_REUSEADDR (fast restarts) only.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    (void)setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // best effort
  });
  int bound = port;
  if (port == 0) {
    bound = server_->bind_to_any_port(host);
  } else if (!server_->bind_to_port(host, port)) {
    bound = -1;
  }
  if (bound < 0)
    return MakeError(ErrorCode::kUnavailable, "--listen " + listen + ": cannot bind (address in use or not local?)");
  const bool v6 = host.find(':') != std::string::npos;
  url_ = "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(bound);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the listen loop runs; wait for it so Stop() cannot miss it.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!server_->is_running()) return MakeError(ErrorCode::kInternal, "--listen " + listen + ": HTTP server did not start");
  return {};
}

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpumeter::metrics
