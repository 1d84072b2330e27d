#include "sources/kube_api/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <fstream>

namespace gpumeter::node {
namespace {

std::string Str(const YAML::Node& n, const char* key) {
  const auto v = n[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

std::string Resolve(const std::filesystem::path& base, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (base / p).string();
}

// The entry of a named list (clusters, users, contexts) with this name, or an undefined node.
YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (list && list.IsSequence())
    for (const auto& e : list)
      if (e.IsMap() && Str(e, "name") == name) return e;
  return YAML::Node(YAML::NodeType::Undefined);
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

Expected<ApiServerConfig> ParseKubeconfig(std::string_view yaml,
                                          const std::filesystem::path& base_dir,
                                          const std::string& label,
                                          const std::string& context_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidInput, label + ": not YAML: " + e.what());
  }
  if (!root.IsMap())
    return MakeError(ErrorCode::kInvalidInput, label + ": not a kubeconfig (expected a mapping)");
  const std::string ctx_name = context_name.empty() ? Str(root, "current-context") : context_name;
  if (ctx_name.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     label + ": no current-context (pass --kube-context)");
  const auto ctx = Named(root["contexts"], ctx_name);
  if (!ctx || !ctx["context"])
    return MakeError(ErrorCode::kInvalidInput,
                     label + ": contexts: no context named '" + ctx_name + "'");
  const std::string cluster_name = Str(ctx["context"], "cluster"),
                    user_name = Str(ctx["context"], "user");
  const auto cluster = Named(root["clusters"], cluster_name);
  if (!cluster || !cluster["cluster"])
    return MakeError(ErrorCode::kInvalidInput, label + ": clusters: no cluster named '" +
                                                   cluster_name + "' (context '" + ctx_name + "')");
  const auto cl = cluster["cluster"];
  ApiServerConfig c;
  c.source = "kubeconfig " + label + " (context " + ctx_name + ")";
  c.server = Str(cl, "server");
  if (c.server.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     label + ": clusters[" + cluster_name + "].cluster.server is missing");
  if (!c.server.starts_with("https://") && !c.server.starts_with("http://"))
    return MakeError(ErrorCode::kInvalidInput, label + ": clusters[" + cluster_name +
                                                   "].cluster.server '" + c.server +
                                                   "' is not an http(s) URL");
  c.ca_file = Resolve(base_dir, Str(cl, "certificate-authority"));
  if (const auto data = Str(cl, "certificate-authority-data"); !data.empty()) {
    auto pem = DecodeBase64(data);
    if (!pem)
      return MakeError(ErrorCode::kInvalidInput,
                       label + ": clusters[" + cluster_name +
                           "].cluster.certificate-authority-data is not base64");
    c.ca_pem = *pem;
  }
  c.insecure_skip_tls_verify = Str(cl, "insecure-skip-tls-verify") == "true";
  if (!user_name.empty()) {
    const auto user = Named(root["users"], user_name);
    if (!user)
      return MakeError(ErrorCode::kInvalidInput,
                       label + ": users: no user named '" + user_name + "'");
    const auto u = user["user"];
    if (u && u.IsMap()) {
      c.token = Str(u, "token");
      c.token_file = Resolve(base_dir, Str(u, "tokenFile"));
      c.client_cert_file = Resolve(base_dir, Str(u, "client-certificate"));
      c.client_key_file = Resolve(base_dir, Str(u, "client-key"));
      for (const auto& [key, out] : {std::pair{"client-certificate-data", &c.client_cert_pem},
                                     std::pair{"client-key-data", &c.client_key_pem}}) {
        if (const auto data = Str(u, key); !data.empty()) {
          auto pem = DecodeBase64(data);
          if (!pem)
            return MakeError(ErrorCode::kInvalidInput,
                             label + ": users[" + user_name + "].user." + key + " is not base64");
          *out = *pem;
        }
      }
      if (u["exec"] || u["auth-provider"])
        if (c.token.empty() && c.token_file.empty() && c.client_cert_file.empty() &&
            c.client_cert_pem.empty())
          return MakeError(ErrorCode::kNotSupported,
                           label + ": users[" + user_name +
                               "] authenticates with an exec/auth-provider plugin, which gpumeter "
                               "does not run; use a token or client certificate");
    }
  }
  return c;
}

}  // namespace gpumeter::node
