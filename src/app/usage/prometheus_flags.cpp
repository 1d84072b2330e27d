#include "app/usage/prometheus_flags.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "common/secret_file.h"

namespace gpumeter::app {

Expected<history::PrometheusApi> OpenPrometheus(const std::string& url, const PrometheusFlags& f) {
  history::PrometheusAccess access;
  access.url = url;
  access.token_file = f.token_file;
  access.user = f.user;
  access.password_file = f.password_file;
  access.ca_file = f.ca_file;
  access.tenant = f.tenant;
  access.gzip = f.gzip;
  access.limits.max_bytes = f.max_reply_mb << 20;
  access.limits.deadline = std::chrono::duration_cast<std::chrono::milliseconds>(f.timeout);
  for (const auto& [flag, path] : {std::pair{"--prometheus-token-file", f.token_file},
                                   std::pair{"--prometheus-password-file", f.password_file}})
    if (auto w = SecretFileWarning(flag, path); !w.empty()) spdlog::warn("{}", w);
  return history::PrometheusApi::Open(access);
}

}  // namespace gpumeter::app
