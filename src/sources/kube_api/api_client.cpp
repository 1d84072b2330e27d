#include "sources/kube_api/api_client.h"

#include "common/excerpt.h"
#include "common/secret_file.h"

namespace gpumeter::kube_api {

Expected<http::Client> MakeApiClient(const ApiServerConfig& c, const std::string& what,
                                     const http::Limits& limits) {
  http::Endpoint e;
  e.what = what;
  e.url = c.server;
  if (c.server.starts_with("https://")) {
    e.tls.verify = !c.insecure_skip_tls_verify;
    e.tls.ca_file = c.ca_file;
    // httplib adds the system CAs to any store without a CA file, so inline CA data must come
    // as a file (the agent writes it to a private one): else any public CA would be trusted.
    if (!c.ca_pem.empty() && c.ca_file.empty())
      return MakeError(ErrorCode::kInvalidInput,
                       c.source + ": certificate-authority-data must be written to a file first");
    e.tls.client_cert_file = c.client_cert_file;
    e.tls.client_key_file = c.client_key_file;
    e.tls.client_cert_pem = c.client_cert_pem;
    e.tls.client_key_pem = c.client_key_pem;
  }
  e.bearer_token = c.token;
  if (!c.token_file.empty()) {
    auto t = ReadSecretFile(c.source + " bearer token", c.token_file);
    if (!t) return MakeError(ErrorCode::kUnavailable, t.error().message);
    e.bearer_token = *t;
  }
  auto client = http::Client::Open(std::move(e), limits);
  if (!client) return MakeError(ErrorCode::kInvalidInput, c.source + ": " + client.error().message);
  return client;
}

std::string Describe(const http::Reply& reply) {
  // The body may be anything (an HTML error page, binary): quoted printable, 200 characters.
  return "HTTP " + std::to_string(reply.status) +
         (reply.body.empty() ? "" : ": " + Excerpt(reply.body));
}

}  // namespace gpumeter::kube_api
