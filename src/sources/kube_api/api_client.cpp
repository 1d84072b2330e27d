#include "sources/kube_api/api_client.h"

#include "common/excerpt.h"
#include "common/request_deadline.h"
#include "common/secret_file.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace gpumeter::kube_api {
namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioDeleter> MemBio(const std::string& pem) {
  return std::unique_ptr<BIO, BioDeleter>(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

Expected<void> UseClientPem(SSL_CTX* ctx, const std::string& cert_pem, const std::string& key_pem,
                            const std::string& what) {
  auto cb = MemBio(cert_pem), kb = MemBio(key_pem);
  std::unique_ptr<X509, X509Deleter> cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  std::unique_ptr<EVP_PKEY, KeyDeleter> key(
      PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!cert || !key)
    return MakeError(ErrorCode::kInvalidInput,
                     what + ": client-certificate-data/client-key-data are not PEM");
  if (SSL_CTX_use_certificate(ctx, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1)
    return MakeError(ErrorCode::kInvalidInput,
                     what + ": the client certificate and key do not match");
  return {};
}

// Tokens and certificates are kilobytes; the cap only stops a runaway or hostile file.
}  // namespace

Expected<std::unique_ptr<httplib::Client>> MakeApiClient(const ApiServerConfig& c,
                                                         std::chrono::milliseconds connect_timeout,
                                                         std::chrono::seconds read_timeout) {
  std::unique_ptr<httplib::Client> client;
  if (!c.client_cert_file.empty())
    client = std::make_unique<httplib::Client>(c.server, c.client_cert_file, c.client_key_file);
  else
    client = std::make_unique<httplib::Client>(c.server);
  if (!client->is_valid())
    return MakeError(ErrorCode::kInvalidInput, c.source + ": cannot use server '" + c.server +
                                                   "' (or its client certificate)");
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(connect_timeout).count();
  client->set_connection_timeout(us / 1000000, us % 1000000);
  client->set_read_timeout(read_timeout.count(), 0);
  if (c.server.starts_with("https://")) {
    client->enable_server_certificate_verification(!c.insecure_skip_tls_verify);
    if (!c.ca_file.empty()) client->set_ca_cert_path(c.ca_file);
    // httplib adds the system CAs to any store without a CA file, so inline CA data must come
    // as a file (the agent writes it to a private one): else any public CA would be trusted.
    if (!c.ca_pem.empty() && c.ca_file.empty())
      return MakeError(ErrorCode::kInvalidInput,
                       c.source + ": certificate-authority-data must be written to a file first");
    if (SSL_CTX* ctx = client->ssl_context()) {
      if (!c.client_cert_pem.empty())
        if (auto r = UseClientPem(ctx, c.client_cert_pem, c.client_key_pem, c.source); !r)
          return tl::unexpected(r.error());
    }
  }
  std::string token = c.token;
  if (!c.token_file.empty()) {
    auto t = ReadSecretFile(c.source + " bearer token", c.token_file);
    if (!t) return MakeError(ErrorCode::kUnavailable, t.error().message);
    token = *t;
  }
  if (!token.empty()) client->set_bearer_token_auth(token);
  return client;
}

std::string Describe(const httplib::Result& r) {
  if (!r) {
    switch (r.error()) {
      case httplib::Error::Connection:
        return "request failed: cannot connect (refused, unreachable or timed out)";
      case httplib::Error::SSLConnection:
        return "request failed: TLS handshake did not complete (no answer in time, or refused)";
      case httplib::Error::SSLServerVerification:
        return "request failed: the server's certificate does not verify against the CA";
      case httplib::Error::SSLLoadingCerts:
        return "request failed: the CA or client certificate could not be loaded (not PEM?)";
      case httplib::Error::Read:
        return "request failed: no complete reply within the read timeout";
      default:
        return "request failed: " + httplib::to_string(r.error());
    }
  }
  return Describe(ListReply{r->status, r->body});
}

std::string Describe(const ListReply& reply) {
  // The body may be anything (an HTML error page, binary): quoted printable, 200 characters.
  return "HTTP " + std::to_string(reply.status) +
         (reply.body.empty() ? "" : ": " + Excerpt(reply.body));
}

Expected<ListReply> GetBounded(httplib::Client& client, const std::string& path,
                               const ListLimits& limits, const std::string& what) {
  ListReply reply;
  bool too_large = false;
  const RequestDeadline deadline(client, std::chrono::steady_clock::now() + limits.deadline);
  auto r = client.Get(path, [&](const char* data, size_t n) {
    if (reply.body.size() + n > limits.max_bytes) return !(too_large = true);
    reply.body.append(data, n);
    return true;
  });
  if (too_large)
    return MakeError(
        ErrorCode::kUnavailable,
        what + ": reply larger than " + std::to_string(limits.max_bytes) + " bytes (refused)");
  if (!r && deadline.fired())  // a reply that completed as the deadline passed still counts
    return MakeError(ErrorCode::kUnavailable, what + ": no complete reply within " +
                                                  std::to_string(limits.deadline.count()) + " ms");
  if (!r) return MakeError(ErrorCode::kUnavailable, what + ": " + Describe(r));
  reply.status = r->status;
  return reply;
}

}  // namespace gpumeter::kube_api
