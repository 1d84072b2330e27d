#include "sinks/metrics/event_server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace gpumeter::metrics {

// One connection, from libmicrohttpd's "started" notice to its "closed" one.
// `since` and `headers_done` are written on the event loop's threads and read by the sweeper.
struct EventServer::Conn {
  int fd = -1;
  ino_t ino = 0;
  dev_t dev = 0;
  std::atomic<int64_t> since_ns{0};       // the pending request's start (accept, or the last end)
  std::atomic<bool> headers_done{false};  // the pending request's headers all arrived
  bool cut = false;                       // under the server's mutex
};

namespace {

using Clock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

void OnConnection(void* cls, MHD_Connection* connection, void** socket_context,
                  MHD_ConnectionNotificationCode code) {
  auto* server = static_cast<EventServer*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    auto* c = new EventServer::Conn();
    if (const auto* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD)) {
      c->fd = info->connect_fd;
      struct stat st {};
      if (::fstat(c->fd, &st) == 0) c->ino = st.st_ino, c->dev = st.st_dev;
    }
    c->since_ns = NowNs();
    *socket_context = c;
    server->Opened(c);
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
    auto* c = static_cast<EventServer::Conn*>(*socket_context);
    server->Closed(c);
    delete c;
    *socket_context = nullptr;
  }
}

EventServer::Conn* ConnOf(MHD_Connection* connection) {
  const auto* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? static_cast<EventServer::Conn*>(info->socket_context) : nullptr;
}

// A request completed: the connection's next request gets a deadline of its own.
void OnCompleted(void*, MHD_Connection* connection, void**, MHD_RequestTerminationCode) {
  if (auto* c = ConnOf(connection)) {
    c->since_ns = NowNs();
    c->headers_done = false;
  }
}

MHD_Result OnRequest(void* cls, MHD_Connection* connection, const char* url, const char* method,
                     const char*, const char*, size_t* upload_size, void** req_cls) {
  static int first_call_marker = 0;
  if (*req_cls == nullptr) {  // the headers are in: the deadline no longer applies
    if (auto* c = ConnOf(connection)) c->headers_done = true;
    *req_cls = &first_call_marker;
  }
  *upload_size = 0;  // a body is not read: every route is a GET
  HttpRequest request{method, url, [connection](const char* name) {
                        const char* v =
                            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
                        return std::string(v ? v : "");
                      }};
  const HttpAnswer answer =
      (std::strcmp(method, "GET") == 0 || std::strcmp(method, "HEAD") == 0)
          ? static_cast<EventServer*>(cls)->Handle(request)
          : HttpAnswer{405, "only GET\n", "text/plain", {{"Allow", "GET, HEAD"}}};
  std::unique_ptr<MHD_Response, void (*)(MHD_Response*)> response(
      MHD_create_response_from_buffer(answer.body.size(), const_cast<char*>(answer.body.data()),
                                      MHD_RESPMEM_MUST_COPY),
      MHD_destroy_response);
  if (!response) return MHD_NO;  // out of memory: libmicrohttpd closes the connection
  if (MHD_add_response_header(response.get(), "Content-Type", answer.content_type.c_str()) !=
      MHD_YES)
    return MHD_NO;
  for (const auto& [name, value] : answer.headers)
    if (MHD_add_response_header(response.get(), name.c_str(), value.c_str()) != MHD_YES)
      return MHD_NO;
  return MHD_queue_response(connection, answer.status, response.get());
}

// The numeric address to bind; the error names the flag and its value.
Expected<sockaddr_storage> Address(const std::string& flag, const std::string& listen,
                                   const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0 || found == nullptr)
    return MakeError(
        ErrorCode::kInvalidInput,
        flag + " '" + listen + "': HOST must be a numeric address (" + ::gai_strerror(rc) + ")");
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, ::freeaddrinfo);
  sockaddr_storage out{};
  std::memcpy(&out, found->ai_addr, found->ai_addrlen);
  return out;
}

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

uint64_t RaiseOpenFileLimit() {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) != 0) return 0;
  if (l.rlim_cur < l.rlim_max) {
    rlimit raised = l;
    raised.rlim_cur = l.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) l = raised;
  }
  return l.rlim_cur;
}

EventServer::EventServer(HttpHandler handler)
    : handler_(std::move(handler)), daemon_(nullptr, MHD_stop_daemon) {}

EventServer::~EventServer() { Stop(); }

void EventServer::Opened(Conn* c) {
  std::lock_guard lock(mu_);
  conns_.push_back(c);
}

void EventServer::Closed(Conn* c) {
  std::lock_guard lock(mu_);
  std::erase(conns_, c);
}

void EventServer::Sweep() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    const int64_t now = NowNs();
    const int64_t deadline_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.header_deadline).count();
    for (auto* c : conns_) {
      if (c->headers_done || c->cut || now - c->since_ns < deadline_ns) continue;
      // Only while the number still names the socket accepted (a closed one may be reused).
      struct stat st {};
      if (c->fd >= 0 && ::fstat(c->fd, &st) == 0 && st.st_ino == c->ino && st.st_dev == c->dev) {
        ++cut_;  // before the client can see its end: whoever sees it sees it counted
        ::shutdown(c->fd, SHUT_RDWR);  // libmicrohttpd sees the end and closes it
      }
      c->cut = true;
    }
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    lock.lock();
  }
}

Expected<void> EventServer::Start(const EventServerOptions& o) {
  options_ = o;
  auto hp = ParseListen(o.listen);
  if (!hp) return MakeError(ErrorCode::kInvalidInput, o.flag + ": " + hp.error().message);
  const auto& [host, port] = *hp;
  auto addr = Address(o.flag, o.listen, host, port);
  if (!addr) return tl::unexpected(addr.error());
  const bool tls = !o.tls_cert_pem.empty();
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
  if (addr->ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  if (tls) flags |= MHD_USE_TLS;
  std::vector<MHD_OptionItem> opts = {
      {MHD_OPTION_SOCK_ADDR, 0, &*addr},
      {MHD_OPTION_CONNECTION_LIMIT, o.max_connections, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, o.idle_timeout_s, nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32 << 10, nullptr},
      // MHD_OPTION_LISTENING_ADDRESS_REUSE left out on purpose: its default sets SO_REUSEADDR
      // alone, so a restarted agent binds at once past its old connections in TIME_WAIT (given
      // 0, libmicrohttpd sets neither option, and a restart failed to bind for a minute); given
      // 1, it adds SO_REUSEPORT, and a second agent on the port would take half the scrapes.
      {MHD_OPTION_LISTEN_BACKLOG_SIZE, 128, nullptr},
      {MHD_OPTION_THREAD_POOL_SIZE, std::max(1u, o.threads), nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&OnConnection), this},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&OnCompleted), this},
  };
  if (tls) {
    opts.push_back(
        {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(options_.tls_cert_pem.c_str())});
    opts.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(options_.tls_key_pem.c_str())});
  }
  opts.push_back({MHD_OPTION_END, 0, nullptr});
  daemon_.reset(MHD_start_daemon(flags, static_cast<uint16_t>(port), nullptr, nullptr, &OnRequest,
                                 this, MHD_OPTION_ARRAY, opts.data(), MHD_OPTION_END));
  if (!daemon_)
    return MakeError(ErrorCode::kUnavailable,
                     o.flag + " " + o.listen +
                         (tls ? ": cannot start (address in use or not local, or the TLS "
                                "certificate and key are not a matching PEM pair)"
                              : ": cannot bind (address in use or not local?)"));
  const auto* info = MHD_get_daemon_info(daemon_.get(), MHD_DAEMON_INFO_BIND_PORT);
  const int bound = info ? info->port : port;
  const bool v6 = addr->ss_family == AF_INET6;
  url_ = std::string(tls ? "https" : "http") + "://" + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(bound);
  {
    std::lock_guard lock(mu_);
    stop_ = false;
  }
  sweeper_ = std::thread([this] { Sweep(); });
  return {};
}

void EventServer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  if (sweeper_.joinable()) sweeper_.join();
  daemon_.reset();  // closes every connection (their "closed" notices run here)
}

}  // namespace gpumeter::metrics
