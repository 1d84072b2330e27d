#include "app/prometheus_flags.h"

namespace gpumeter::app {

Expected<report::PrometheusApi> OpenPrometheus(const std::string& url, const PrometheusFlags& f) {
  report::PrometheusAccess access;
  access.url = url;
  access.token_file = f.token_file;
  access.user = f.user;
  access.password_file = f.password_file;
  access.ca_file = f.ca_file;
  access.tenant = f.tenant;
  access.limits.max_bytes = f.max_reply_mb << 20;
  access.limits.deadline = std::chrono::seconds(f.timeout_s);
  return report::PrometheusApi::Open(access);
}

}  // namespace gpumeter::app
