#include "app/cluster_access.h"

#include "app/config_files.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

namespace gpumeter::app {

std::string NodeName(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("NODE_NAME"); env && *env) return env;
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
}

Expected<std::optional<kube_api::ApiServerConfig>> ApiServerFor(const std::string& kubeconfig,
                                                                const std::string& context,
                                                                std::string* why_none) {
  if (!kubeconfig.empty()) {
    auto text = ReadWhole("--kubeconfig", kubeconfig);
    if (!text) return tl::unexpected(text.error());
    auto config = kube_api::ParseKubeconfig(*text, std::filesystem::path(kubeconfig).parent_path(),
                                            kubeconfig, context);
    if (!config) return tl::unexpected(config.error());
    return std::optional<kube_api::ApiServerConfig>(*config);
  }
  std::map<std::string, std::string> env;
  for (const char* k : {"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"})
    if (const char* v = std::getenv(k)) env[k] = v;
  auto config = kube_api::InClusterConfig(env, "/var/run/secrets/kubernetes.io/serviceaccount");
  if (!config) {
    if (why_none) *why_none = config.error().message;
    return std::optional<kube_api::ApiServerConfig>();
  }
  return std::optional<kube_api::ApiServerConfig>(*config);
}

Expected<std::unique_ptr<PrivateFile>> MaterializeCa(kube_api::ApiServerConfig& config) {
  if (config.ca_pem.empty()) return std::unique_ptr<PrivateFile>();
  auto written = PrivateFile::Write(config.ca_pem);
  if (!written) return tl::unexpected(written.error());
  config.ca_file = (*written)->path();
  return written;
}

}  // namespace gpumeter::app
