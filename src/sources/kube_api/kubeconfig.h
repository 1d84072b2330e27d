// How to reach the API server: in-cluster service-account configuration (as client-go's
// rest.InClusterConfig) or the current context of a kubeconfig file. Pure parsing; the token is
// read by the source on every connection (projected tokens rotate). Errors name the file and key.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter::kube_api {

struct ApiServerConfig {
  std::string server;  // "https://host:port" (or http:// in tests)
  // Trust: a CA file, or PEM text from certificate-authority-data (which the caller writes to a
  // private file and names in ca_file before connecting); neither: the system store.
  std::string ca_file, ca_pem;
  // Identity: a bearer token (literal or a file re-read per connection) and/or a client cert.
  std::string token, token_file;
  std::string client_cert_file, client_key_file, client_cert_pem, client_key_pem;
  bool insecure_skip_tls_verify = false;
  std::string source;  // "in-cluster" or "kubeconfig PATH (context NAME)", for messages
};

// From KUBERNETES_SERVICE_HOST/PORT (looked up through `getenv`) and the service-account files
// under `sa_dir` (/var/run/secrets/kubernetes.io/serviceaccount). kNotFound when not in a pod.
Expected<ApiServerConfig> InClusterConfig(const std::map<std::string, std::string>& env,
                                          const std::filesystem::path& sa_dir);

// The current context (or `context` when non-empty) of a kubeconfig's text. Relative file paths
// are resolved against `base_dir` (the kubeconfig's directory), as kubectl does.
Expected<ApiServerConfig> ParseKubeconfig(std::string_view yaml,
                                          const std::filesystem::path& base_dir,
                                          const std::string& label,
                                          const std::string& context = {});

// Base64 (standard alphabet, padding optional) as in the *-data keys; nullopt when malformed.
std::optional<std::string> DecodeBase64(std::string_view in);

}  // namespace gpumeter::kube_api
