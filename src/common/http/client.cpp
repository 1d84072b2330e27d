#include "common/http/client.h"

#include <httplib.h>
#include <openssl/ssl.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string_view>
#include <vector>

#include "common/excerpt.h"
#include "common/http/request_deadline.h"
#include "common/openssl_handles.h"

namespace gpumeter::http {

struct Client::Shared {
  std::mutex mu;
  std::vector<httplib::Client*> active;  // the requests in flight (from any number of threads)
  bool cancelled = false;
};

namespace {

using Clock = std::chrono::steady_clock;

Expected<void> UseClientPem(SSL_CTX* ctx, const Tls& tls, const std::string& what) {
  const auto cert = openssl::ReadCert(tls.client_cert_pem);
  const auto key = openssl::ReadKey(tls.client_key_pem);
  if (!cert || !key)
    return MakeError(ErrorCode::kInvalidInput, what + ": the client certificate or key is not PEM");
  if (SSL_CTX_use_certificate(ctx, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1)
    return MakeError(ErrorCode::kInvalidInput,
                     what + ": the client certificate and key do not match");
  return {};
}

// A transport failure in words a user can act on.
std::string Describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect: refused, unreachable or timed out";
    case httplib::Error::SSLConnection:
      return "TLS handshake did not complete: no answer in time, or refused";
    case httplib::Error::SSLServerVerification:
      return "the server's certificate does not verify against the CA";
    case httplib::Error::SSLLoadingCerts:
      return "the CA or client certificate could not be loaded (not PEM?)";
    case httplib::Error::Read:
      return "the connection closed, or no reply within the read timeout";
    default:
      return httplib::to_string(e);
  }
}

bool Printable(const std::string& s) {
  for (const char c : s)
    if (!std::isprint(static_cast<unsigned char>(c))) return false;
  return true;
}

// OpenSSL writes with write(), not send(MSG_NOSIGNAL): a TLS peer that is gone (or a socket the
// deadline shut down) raises SIGPIPE, whose default ends the process. For the request's length
// the calling thread blocks it, then takes a SIGPIPE the request raised off its pending set, so a
// command-line tool keeps the default for its own stdout. RAII; the calling thread only.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeBlocked() {
    if (!blocked_) return;
    if (!was_pending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_{}, old_{};
  bool was_pending_ = false, blocked_ = false;
};

// Marks `c` as a request in flight; false once cancelled.
bool Begin(Client::Shared& s, httplib::Client* c) {
  std::lock_guard lock(s.mu);
  if (s.cancelled) return false;
  s.active.push_back(c);
  return true;
}

void End(Client::Shared& s, httplib::Client* c) {
  std::lock_guard lock(s.mu);
  std::erase(s.active, c);
}

bool Cancelled(Client::Shared& s) {
  std::lock_guard lock(s.mu);
  return s.cancelled;
}

Expected<std::unique_ptr<httplib::Client>> MakeHttplib(const Endpoint& e, const Limits& l,
                                                       const std::string& origin) {
  const auto& tls = e.tls;
  auto c = tls.client_cert_file.empty() ? std::make_unique<httplib::Client>(origin)
                                        : std::make_unique<httplib::Client>(
                                              origin, tls.client_cert_file, tls.client_key_file);
  if (!c->is_valid())
    return MakeError(ErrorCode::kInvalidInput,
                     e.what + " " + origin + ": cannot use the URL (or its client certificate)");
  const auto read = l.read_timeout.count() > 0 ? l.read_timeout : l.deadline;
  c->set_connection_timeout(l.connect_timeout);
  c->set_read_timeout(read);
  c->set_write_timeout(l.connect_timeout);
  c->set_follow_location(false);  // a redirect is a reply: it could lead anywhere
  c->set_decompress(e.accept_gzip);
  c->set_keep_alive(false);
  if (origin.starts_with("https://")) {
    c->enable_server_certificate_verification(tls.verify);
    if (!tls.ca_file.empty()) c->set_ca_cert_path(tls.ca_file);
    if (!tls.client_cert_pem.empty()) {
      SSL_CTX* ctx = c->ssl_context();
      if (!ctx)
        return MakeError(ErrorCode::kInvalidInput, e.what + ": no TLS context for the client");
      if (auto r = UseClientPem(ctx, tls, e.what); !r) return tl::unexpected(r.error());
    }
  }
  if (!e.bearer_token.empty()) c->set_bearer_token_auth(e.bearer_token);
  if (!e.user.empty()) c->set_basic_auth(e.user, e.password);
  return c;
}

httplib::Headers RequestHeaders(const Endpoint& e) {
  httplib::Headers h(e.headers.begin(), e.headers.end());
  h.emplace("Accept-Encoding", e.accept_gzip ? "gzip" : "identity");
  return h;
}

// An encoding the reply may not have: any, unless gzip was asked for.
bool Unasked(const Endpoint& e, const std::string& encoding) {
  if (encoding.empty() || encoding == "identity") return false;
  return !(e.accept_gzip && (encoding == "gzip" || encoding == "deflate"));
}

}  // namespace

std::string FormatDuration(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s"
                               : std::to_string(d.count()) + " ms";
}

std::string EncodeQueryValue(const std::string& value) {
  return httplib::detail::encode_query_param(value);
}

Client::Client(Endpoint endpoint, Limits limits)
    : endpoint_(std::move(endpoint)), limits_(limits), shared_(std::make_shared<Shared>()) {}

Expected<Client> Client::Open(Endpoint e, Limits l) {
  const std::string url = e.url;
  const auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidInput, e.what + " '" + Excerpt(url, 120) + "': " + why);
  };
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos ||
      (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0))
    return bad("not an http(s)://host:port URL");
  const auto path_start = url.find('/', scheme_end + 3);
  const std::string authority = url.substr(scheme_end + 3, path_start - (scheme_end + 3));
  if (authority.empty()) return bad("not an http(s)://host:port URL");
  // user:password@host would be printed in every error: credentials go in files.
  if (authority.find('@') != std::string::npos)
    return MakeError(ErrorCode::kInvalidInput,
                     e.what + ": credentials in the URL are refused (give them in a file)");
  if (url.find_first_of(" \r\n\t?#") != std::string::npos)
    return bad("a URL with spaces, a query or a fragment is refused");
  if (e.tls.client_cert_pem.empty() != e.tls.client_key_pem.empty() ||
      e.tls.client_cert_file.empty() != e.tls.client_key_file.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     e.what + ": a client certificate needs its key, and a key its certificate");
  for (const auto& [name, value] : e.headers)
    if (!Printable(name) || !Printable(value))
      return MakeError(ErrorCode::kInvalidInput,
                       e.what + ": header " + Excerpt(name, 40) + " is not printable text");
  if (!Printable(e.bearer_token) || !Printable(e.user) || !Printable(e.password))
    return MakeError(ErrorCode::kInvalidInput,
                     e.what + ": a credential holds a control character (not printed)");
  Client c(std::move(e), l);
  c.origin_ = path_start == std::string::npos ? url : url.substr(0, path_start);
  c.prefix_ = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!c.prefix_.empty() && c.prefix_.back() == '/') c.prefix_.pop_back();
  if (!httplib::Client(c.origin_).is_valid()) return bad("not an http(s)://host:port URL");
  return c;
}

std::string Client::Target(const std::string& path, const Pairs& params) const {
  std::string target = prefix_ + path;
  if (target.empty()) target = endpoint_.default_path;
  char sep = target.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : params) {
    target += sep + EncodeQueryValue(k) + "=" + EncodeQueryValue(v);
    sep = '&';
  }
  return target;
}

std::string Client::Where(const std::string& target, const std::string& what) const {
  return what.empty() ? endpoint_.what + " " + origin_ + target.substr(0, target.find('?')) : what;
}

Expected<Reply> Client::Fetch(const std::string& path, const Pairs& params, const std::string& what,
                              const OnBody& on_body) const {
  const std::string target = Target(path, params);
  const std::string where = Where(target, what);
  auto c = MakeHttplib(endpoint_, limits_, origin_);
  if (!c) return tl::unexpected(c.error());
  if (!Begin(*shared_, c->get())) return MakeError(ErrorCode::kUnavailable, where + ": cancelled");
  const SigpipeBlocked no_sigpipe;
  Reply reply;
  size_t received = 0;
  bool too_big = false;
  std::string unasked;
  const auto deadline = Clock::now() + limits_.deadline;
  bool fired = false, ok = false;
  auto error = httplib::Error::Success;
  {
    const RequestDeadline watch(**c, deadline);  // headers too: the receiver sees only the body
    auto r = (*c)->Get(
        target, RequestHeaders(endpoint_),
        [&](const httplib::Response& head) {
          reply.status = head.status;
          const auto enc = head.get_header_value("Content-Encoding");
          if (Unasked(endpoint_, enc)) unasked = enc;
          return unasked.empty();
        },
        [&](const char* d, size_t n) {
          if (n > limits_.max_bytes - received) return !(too_big = true);
          received += n;
          on_body(reply.status, d, n);
          return true;
        });
    fired = watch.fired();
    ok = static_cast<bool>(r);
    error = r.error();
    if (ok) {
      reply.status = r->status;
      reply.content_type = r->get_header_value("Content-Type");
    }
  }
  End(*shared_, c->get());
  if (too_big)
    return MakeError(
        ErrorCode::kUnavailable,
        where + ": reply larger than " + std::to_string(limits_.max_bytes) + " bytes (refused" +
            (endpoint_.cap_hint.empty() ? "" : "; raise it with " + endpoint_.cap_hint) + ")");
  if (!unasked.empty())
    return MakeError(ErrorCode::kUnavailable,
                     where + ": the reply is compressed (Content-Encoding: " +
                         Excerpt(unasked, 40) + ") though it was not asked for (refused)");
  if (!ok && Cancelled(*shared_)) return MakeError(ErrorCode::kUnavailable, where + ": cancelled");
  // A reply that completed as the deadline passed still counts.
  if (!ok && (fired || Clock::now() >= deadline))
    return MakeError(
        ErrorCode::kUnavailable,
        where + ": no complete reply within " + FormatDuration(limits_.deadline) +
            (endpoint_.deadline_hint.empty() ? ""
                                             : " (raise it with " + endpoint_.deadline_hint + ")"));
  if (!ok)
    return MakeError(ErrorCode::kUnavailable, where + ": unreachable (" + Describe(error) + ")");
  return reply;
}

Expected<Reply> Client::Get(const std::string& path, const Pairs& params,
                            const std::string& what) const {
  std::string body;
  auto reply =
      Fetch(path, params, what, [&body](int, const char* d, std::size_t n) { body.append(d, n); });
  if (reply) reply->body = std::move(body);
  return reply;
}

namespace {

// GetOk's error for a status other than 200: the body's start, quoted, of `body_size` bytes.
Error NotOk(const std::string& where, int status, std::string_view body_start, size_t body_size) {
  return Error{ErrorCode::kUnavailable,
               where + ": HTTP " + std::to_string(status) +
                   (body_size == 0 ? "" : ": " + Excerpt(body_start, 200, body_size))};
}

}  // namespace

Expected<std::string> Client::GetOk(const std::string& path, const Pairs& params,
                                    const std::string& what) const {
  auto r = Get(path, params, what);
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200)
    return tl::unexpected(
        NotOk(Where(Target(path, params), what), r->status, r->body, r->body.size()));
  return std::move(r->body);
}

Expected<void> Client::GetOkChunked(const std::string& path,
                                    const std::function<void(std::string_view)>& on_chunk,
                                    const Pairs& params, const std::string& what) const {
  // A refusal's body is quoted, not handed over: its first 200 bytes are all Excerpt prints.
  constexpr size_t kQuoted = 200;
  std::string refused;
  size_t refused_size = 0;
  auto reply = Fetch(path, params, what, [&](int status, const char* d, std::size_t n) {
    if (status == 200) {
      on_chunk(std::string_view(d, n));
      return;
    }
    refused_size += n;
    refused.append(d, std::min(n, kQuoted - std::min(kQuoted, refused.size())));
  });
  if (!reply) return tl::unexpected(reply.error());
  if (reply->status != 200)
    return tl::unexpected(
        NotOk(Where(Target(path, params), what), reply->status, refused, refused_size));
  return {};
}

Expected<StreamEnd> Client::Stream(
    const std::string& path, const std::function<bool(int)>& on_status,
    const std::function<bool(const char*, std::size_t)>& on_data) const {
  const std::string target = Target(path, {});
  const std::string where = Where(target, "");
  auto c = MakeHttplib(endpoint_, limits_, origin_);
  if (!c) return tl::unexpected(c.error());
  StreamEnd end;
  if (!Begin(*shared_, c->get())) {
    end.stopped = true;
    return end;
  }
  const SigpipeBlocked no_sigpipe;
  bool by_callback = false;
  std::string unasked;
  bool ok = false;
  auto error = httplib::Error::Success;
  {
    const RequestDeadline watch(**c, Clock::now() + limits_.deadline);
    auto r = (*c)->Get(
        target, RequestHeaders(endpoint_),
        [&](const httplib::Response& head) {
          end.status = head.status;
          const auto enc = head.get_header_value("Content-Encoding");
          if (Unasked(endpoint_, enc)) unasked = enc;
          const bool go = unasked.empty() && on_status(head.status);
          by_callback = by_callback || !go;
          return go;
        },
        [&](const char* d, size_t n) {
          const bool go = on_data(d, n);
          by_callback = by_callback || !go;
          return go;
        });
    ok = static_cast<bool>(r);
    error = r.error();
    end.cut_at_deadline = !ok && watch.fired();
  }
  End(*shared_, c->get());
  if (!unasked.empty())
    return MakeError(ErrorCode::kUnavailable,
                     where + ": the reply is compressed (Content-Encoding: " +
                         Excerpt(unasked, 40) + ") though it was not asked for (refused)");
  end.stopped = by_callback || Cancelled(*shared_);
  if (!ok && !end.stopped && !end.cut_at_deadline)
    return MakeError(ErrorCode::kUnavailable, where + ": unreachable (" + Describe(error) + ")");
  return end;
}

void Client::Cancel() const {
  std::lock_guard lock(shared_->mu);
  shared_->cancelled = true;
  for (auto* c : shared_->active) c->stop();
}

}  // namespace gpumeter::http
