#include "sinks/metrics/probe_server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstring>

#include "sinks/metrics/http_server.h"
#include "sinks/metrics/readiness.h"

namespace gpumeter::metrics {
namespace {

MHD_Result OnRequest(void* cls, MHD_Connection* connection, const char* url, const char* method,
                     const char* /*version*/, const char* /*upload_data*/,
                     size_t* /*upload_data_size*/, void** /*req_cls*/) {
  const auto answer = static_cast<const ProbeServer*>(cls)->Handle(method, url);
  std::unique_ptr<MHD_Response, void (*)(MHD_Response*)> response(
      MHD_create_response_from_buffer(answer.body.size(), const_cast<char*>(answer.body.data()),
                                      MHD_RESPMEM_MUST_COPY),
      MHD_destroy_response);
  if (!response) return MHD_NO;  // out of memory: MHD closes the connection
  if (MHD_add_response_header(response.get(), "Content-Type", "text/plain") != MHD_YES)
    return MHD_NO;
  return MHD_queue_response(connection, answer.status, response.get());
}

// The numeric address to bind; the error names the flag value.
Expected<sockaddr_storage> Address(const std::string& listen, const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0 || found == nullptr)
    return MakeError(ErrorCode::kInvalidInput, "--probe-listen '" + listen +
                                                   "': HOST must be a numeric address (" +
                                                   ::gai_strerror(rc) + ")");
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, ::freeaddrinfo);
  sockaddr_storage out{};
  std::memcpy(&out, found->ai_addr, found->ai_addrlen);
  return out;
}

}  // namespace

ProbeServer::ProbeServer(const node::StateView& view)
    : view_(view), daemon_(nullptr, MHD_stop_daemon) {}

ProbeServer::~ProbeServer() { Stop(); }

ProbeServer::Answer ProbeServer::Handle(const std::string& method, const std::string& path) const {
  if (method != "GET" && method != "HEAD") return {405, "only GET\n"};
  if (path == "/healthz") return {200, "ok\n"};
  if (path == "/readyz") {
    const auto r = CheckReadiness(view_.Health(), *view_.State(), options_.stale_after,
                                  std::chrono::steady_clock::now());
    return {r.ready ? 200u : 503u, r.why + "\n"};
  }
  return {404, "not found: the probe listener serves /healthz and /readyz\n"};
}

Expected<void> ProbeServer::Start(const ProbeOptions& o) {
  options_ = o;
  auto hp = ParseListen(o.listen);
  if (!hp) return MakeError(ErrorCode::kInvalidInput, "--probe-listen: " + hp.error().message);
  const auto& [host, port] = *hp;
  auto addr = Address(o.listen, host, port);
  if (!addr) return tl::unexpected(addr.error());
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
  if (addr->ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  daemon_.reset(MHD_start_daemon(
      flags, static_cast<uint16_t>(port), nullptr, nullptr, &OnRequest, this, MHD_OPTION_SOCK_ADDR,
      reinterpret_cast<sockaddr*>(&*addr), MHD_OPTION_CONNECTION_LIMIT, o.max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, o.idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      static_cast<size_t>(16 << 10), MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u, MHD_OPTION_END));
  if (!daemon_)
    return MakeError(ErrorCode::kUnavailable,
                     "--probe-listen " + o.listen + ": cannot bind (address in use or not local?)");
  const auto* info = MHD_get_daemon_info(daemon_.get(), MHD_DAEMON_INFO_BIND_PORT);
  const int bound = info ? info->port : port;
  const bool v6 = addr->ss_family == AF_INET6;
  url_ = "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(bound);
  return {};
}

void ProbeServer::Stop() { daemon_.reset(); }

}  // namespace gpumeter::metrics
