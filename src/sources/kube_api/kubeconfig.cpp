#include "sources/kube_api/kubeconfig.h"

#include <fstream>

#include "common/yaml/reader.h"

namespace gpumeter::kube_api {
namespace {

using yaml::Field;

// The string at `key` of a mapping, or "" when it is missing or not a string: what a kubeconfig
// leaves out or gets wrong there is passed over, as before. A string where the mapping belongs
// is an error.
std::string Str(const Field& f, const char* key) {
  if (f.IsScalar()) f.Fail("expected a mapping");
  const Field v = f.Get(key);
  return v.IsScalar() ? v.Str() : std::string();
}

std::string Resolve(const std::filesystem::path& base, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (base / p).string();
}

// The entry of a named list (clusters, users, contexts) with this name.
std::optional<Field> Named(const Field& list, const std::string& name) {
  if (list.IsSequence())
    for (size_t i = 0; i < list.Size(); ++i)
      if (const Field e = list.At(i); e.IsMap() && Str(e, "name") == name) return e;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> DecodeBase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (const char c : in) {
    if (c == '\n' || c == '\r' || c == ' ') continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0) return std::nullopt;  // data after padding
    const int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (pad > 2 || bits >= 6) return std::nullopt;
  return out;
}

Expected<ApiServerConfig> InClusterConfig(const std::map<std::string, std::string>& env,
                                          const std::filesystem::path& sa_dir) {
  const auto host = env.find("KUBERNETES_SERVICE_HOST"), port = env.find("KUBERNETES_SERVICE_PORT");
  if (host == env.end() || port == env.end() || host->second.empty() || port->second.empty())
    return MakeError(ErrorCode::kNotFound,
                     "not in a pod: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set");
  ApiServerConfig c;
  const bool v6 = host->second.find(':') != std::string::npos;
  c.server = "https://" + (v6 ? "[" + host->second + "]" : host->second) + ":" + port->second;
  c.token_file = (sa_dir / "token").string();
  c.ca_file = (sa_dir / "ca.crt").string();
  c.source = "in-cluster service account (" + sa_dir.string() + ")";
  std::error_code ec;
  if (!std::filesystem::exists(c.token_file, ec))
    return MakeError(
        ErrorCode::kNotFound,
        c.token_file + ": no service-account token (automountServiceAccountToken off?)");
  return c;
}

namespace {

// The PEM text of a *-data key (base64), or "" when there is none.
std::string Pem(const Field& f, const char* key) {
  const auto data = Str(f, key);
  if (data.empty()) return "";
  auto pem = DecodeBase64(data);
  if (!pem) f.Get(key).Fail("not base64");
  // Base64 of something else (a DER file, a path) fails much later, inside OpenSSL; say it here.
  if (pem->find("-----BEGIN") == std::string::npos)
    f.Get(key).Fail("base64, but not of a PEM block (-----BEGIN ...-----)");
  return *pem;
}

// A context's cluster: where the API server is and how to trust it.
void ReadCluster(const Field& cl, const std::filesystem::path& base_dir, const std::string& name,
                 ApiServerConfig& c) {
  c.server = Str(cl, "server");
  if (c.server.empty()) cl.Get("server").Fail("missing (cluster '" + name + "')");
  if (!c.server.starts_with("https://") && !c.server.starts_with("http://"))
    cl.Get("server").Fail("'" + c.server + "' is not an http(s) URL");
  c.ca_file = Resolve(base_dir, Str(cl, "certificate-authority"));
  c.ca_pem = Pem(cl, "certificate-authority-data");
  c.insecure_skip_tls_verify = Str(cl, "insecure-skip-tls-verify") == "true";
}

// A context's user: a token and/or a client certificate. kNotSupported for a credential plugin.
Expected<void> ReadUser(const Field& u, const std::filesystem::path& base_dir,
                        const std::string& name, ApiServerConfig& c) {
  if (!u.IsMap()) return {};
  c.token = Str(u, "token");
  c.token_file = Resolve(base_dir, Str(u, "tokenFile"));
  c.client_cert_file = Resolve(base_dir, Str(u, "client-certificate"));
  c.client_key_file = Resolve(base_dir, Str(u, "client-key"));
  c.client_cert_pem = Pem(u, "client-certificate-data");
  c.client_key_pem = Pem(u, "client-key-data");
  if ((u.Has("exec") || u.Has("auth-provider")) && c.token.empty() && c.token_file.empty() &&
      c.client_cert_file.empty() && c.client_cert_pem.empty())
    return MakeError(ErrorCode::kNotSupported,
                     u.Message("user '" + name +
                               "' authenticates with an exec/auth-provider plugin, which gpumeter "
                               "does not run; use a token or client certificate"));
  return {};
}

Expected<ApiServerConfig> ReadKubeconfig(const Field& root, const std::filesystem::path& base_dir,
                                         const std::string& context_name) {
  if (!root.IsMap()) root.Fail("not a kubeconfig (expected a mapping)");
  const std::string ctx_name = context_name.empty() ? Str(root, "current-context") : context_name;
  if (ctx_name.empty()) root.Get("current-context").Fail("not set (pass --kube-context)");
  const Field contexts = root.Get("contexts");
  const auto ctx = Named(contexts, ctx_name);
  if (!ctx || !ctx->Has("context")) contexts.Fail("no context named '" + ctx_name + "'");
  const Field context = ctx->Get("context");
  const std::string cluster_name = Str(context, "cluster"), user_name = Str(context, "user");
  const Field clusters = root.Get("clusters");
  const auto cluster = Named(clusters, cluster_name);
  if (!cluster || !cluster->Has("cluster"))
    clusters.Fail("no cluster named '" + cluster_name + "' (context '" + ctx_name + "')");
  ApiServerConfig c;
  c.source = "kubeconfig " + root.label() + " (context " + ctx_name + ")";
  ReadCluster(cluster->Get("cluster"), base_dir, cluster_name, c);
  if (user_name.empty()) return c;
  const Field users = root.Get("users");
  const auto user = Named(users, user_name);
  if (!user) users.Fail("no user named '" + user_name + "'");
  if (auto ok = ReadUser(user->Get("user"), base_dir, user_name, c); !ok)
    return tl::unexpected(ok.error());
  return c;
}

}  // namespace

Expected<ApiServerConfig> ParseKubeconfig(std::string_view text,
                                          const std::filesystem::path& base_dir,
                                          const std::string& label,
                                          const std::string& context_name) {
  return yaml::Parse<ApiServerConfig>(
      text, label, [&](const Field& root) { return ReadKubeconfig(root, base_dir, context_name); });
}

}  // namespace gpumeter::kube_api
