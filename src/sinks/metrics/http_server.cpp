#include "sinks/metrics/http_server.h"

#include <spdlog/spdlog.h>
#include <zlib.h>

#include <cctype>
#include <chrono>
#include <functional>

#include "common/bounded_file.h"
#include "common/json/key_case.h"
#include "common/openssl_handles.h"
#include "common/secret_file.h"
#include "domain/node_snapshot_json.h"
#include "sinks/metrics/accept_encoding.h"
#include "sinks/metrics/json_api.h"
#include "sinks/metrics/readiness.h"

namespace gpumeter::metrics {

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

// The bearer token, when one is required. The scheme is case-insensitive (RFC 9110 §11.1).
bool Authorized(const HttpRequest& req, const std::string& token) {
  if (token.empty() || req.path == "/healthz" || req.path == "/readyz") return true;
  const std::string given = req.header("Authorization");
  const auto space = given.find(' ');
  std::string scheme = given.substr(0, space);
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return scheme == "bearer" && space != std::string::npos &&
         SameSecret(given.substr(space + 1), token);
}

// gzip of `body` (zlib, level 6); empty when zlib refuses (the body then goes as it is).
std::string Gzip(const std::string& body) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  std::string out(deflateBound(&z, static_cast<uLong>(body.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const auto written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return "";
  out.resize(written);
  return out;
}

// The body, gzipped when the client accepts it (by its weights: "gzip;q=0" refuses it) and it
// is worth it.
HttpAnswer Body(const HttpRequest& req, std::string body, const char* type) {
  HttpAnswer a{200, std::move(body), type, {}};
  if (a.body.size() >= 1024 && AcceptsGzip(req.header("Accept-Encoding"))) {
    if (auto gz = Gzip(a.body); !gz.empty()) {
      a.body = std::move(gz);
      a.headers.emplace_back("Content-Encoding", "gzip");
    }
  }
  a.headers.emplace_back("Vary", "Accept-Encoding");
  return a;
}

// Reads a PEM file for TLS; the error names the flag.
Expected<std::string> ReadPem(const char* flag, const std::string& path) {
  auto pem = ReadBoundedFile(path, 1 << 20);
  if (!pem)
    return MakeError(ErrorCode::kInvalidInput, std::string(flag) + " " + pem.error().message);
  return pem;
}

// The certificate and key parse as PEM and belong together: said here, with the flags, rather
// than as a server that does not start.
Expected<void> CheckTlsPair(const HttpOptions& o, const std::string& cert, const std::string& key) {
  const auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidInput,
                     "--tls-cert " + o.tls_cert_file + " / --tls-key " + o.tls_key_file +
                         ": cannot load the certificate and key (" + why + ")");
  };
  const auto x = openssl::ReadCert(cert);
  if (!x) return bad("the certificate is not PEM");
  const auto k = openssl::ReadKey(key);
  if (!k) return bad("the key is not a PEM private key");
  if (X509_check_private_key(x.get(), k.get()) != 1) return bad("they do not match");
  return {};
}

}  // namespace

HttpAnswer HttpServer::Handle(const HttpRequest& req) const {
  if (!Authorized(req, token_))
    return {401,
            "unauthorized: send Authorization: Bearer <token>\n",
            "text/plain",
            {{"WWW-Authenticate", "Bearer"}}};
  const auto now = std::chrono::steady_clock::now();
  if (req.path == "/metrics") {
    const auto families =
        BuildFamilies(view_.Health(), *view_.State(), options_, now, {cut_connections()});
    if (WantsOpenMetrics(req.header("Accept")))
      return Body(req, RenderOpenMetrics(families),
                  "application/openmetrics-text; version=1.0.0; charset=utf-8");
    return Body(req, RenderText(families), "text/plain; version=0.0.4; charset=utf-8");
  }
  if (req.path == "/healthz") return {200, "ok\n", "text/plain", {}};
  if (req.path == "/readyz") {
    const auto r = CheckReadiness(view_.Health(), *view_.State(), options_.stale_after, now);
    return {r.ready ? 200u : 503u, r.why + "\n", "text/plain", {}};
  }
  // The latest pass as the core saw it, in the snapshot's own versioned form (a bug report's
  // "what did the node look like"; domain/node_snapshot_json.h reads it back).
  if (req.path == "/api/v2/snapshot") {
    const auto state = view_.State();
    if (!state->snapshot) return {503, "no sampling pass yet\n", "text/plain", {}};
    return Body(req, domain::WriteNodeSnapshot(*state->snapshot) + "\n", "application/json");
  }
  // /api/v2 is /api/v1 in camelCase; v1 answers as it did, marked deprecated (RFC 9745: the
  // header's value is the date it was, 2026-12-07, as a structured-field date).
  const bool v1 = req.path.rfind("/api/v1/", 0) == 0, v2 = req.path.rfind("/api/v2/", 0) == 0;
  const std::string resource = v1 || v2 ? req.path.substr(8) : "";
  std::function<nlohmann::json(const node::NodeState&)> json;
  if (resource == "units") json = UnitsJson;
  if (resource == "ledger") json = LedgerJson;
  if (resource == "processes") json = ProcessesJson;
  if (resource == "findings") json = FindingsJson;
  if (resource == "sources")
    json = [&](const node::NodeState& s) {
      return SourcesJson(view_.Health(), s, options_.stale_after, now);
    };
  if (!json)
    return {404,
            "not found: /metrics, /api/v2/{units,ledger,processes,findings,sources,snapshot} "
            "(/api/v1: the same but snapshot in snake_case, deprecated), /healthz, /readyz\n",
            "text/plain",
            {}};
  nlohmann::json doc = json(*view_.State());
  if (v2) {
    auto camel = json_case::ToCamelCase(doc, kDataKeyedMembers);
    if (!camel) return {500, camel.error().message + "\n", "text/plain", {}};
    doc = std::move(*camel);
  }
  // Error texts from sources may hold cut UTF-8: replace it rather than fail the request.
  auto answer = Body(req, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                     "application/json");
  if (v1) {
    answer.headers.push_back({"Deprecation", "@1796601600"});
    answer.headers.push_back({"Link", "</api/v2/" + resource + ">; rel=\"successor-version\""});
  }
  return answer;
}

Expected<void> HttpServer::Start(const HttpOptions& o) {
  if (o.tls_cert_file.empty() != o.tls_key_file.empty())
    return MakeError(ErrorCode::kInvalidInput, "--tls-cert and --tls-key go together");
  EventServerOptions eo;
  eo.listen = o.listen;
  eo.flag = "--listen";
  eo.max_connections = o.max_connections;
  eo.header_deadline = o.header_deadline;
  // A scrape of a large node renders for milliseconds: two loops, so one slow client's reply
  // does not hold every other request.
  eo.threads = 2;
  if (!o.tls_cert_file.empty()) {
    auto cert = ReadPem("--tls-cert", o.tls_cert_file);
    if (!cert) return tl::unexpected(cert.error());
    auto key = ReadPem("--tls-key", o.tls_key_file);
    if (!key) return tl::unexpected(key.error());
    if (auto pair = CheckTlsPair(o, *cert, *key); !pair) return tl::unexpected(pair.error());
    eo.tls_cert_pem = std::move(*cert);
    eo.tls_key_pem = std::move(*key);
  }
  if (!o.bearer_token_file.empty()) {
    if (auto w = SecretFileWarning("--bearer-token-file", o.bearer_token_file); !w.empty())
      spdlog::warn("{}", w);
    auto token = ReadSecretFile("--bearer-token-file", o.bearer_token_file);
    if (!token) return tl::unexpected(token.error());
    token_ = std::move(*token);
  }
  server_ = std::make_unique<EventServer>([this](const HttpRequest& r) { return Handle(r); });
  if (auto started = server_->Start(eo); !started) {
    server_.reset();
    return tl::unexpected(started.error());
  }
  url_ = server_->url();
  return {};
}

void HttpServer::Stop() {
  if (server_) server_->Stop();
}

const std::string& HttpServer::url() const { return url_; }

uint64_t HttpServer::cut_connections() const { return server_ ? server_->cut() : 0; }

}  // namespace gpumeter::metrics
