// The flags of every command that reads --source prometheus:URL (app/prometheus_flags.h).
#include <CLI/CLI.hpp>

#include "app/usage/prometheus_flags.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddPrometheusFlags(CLI::App* cmd, app::PrometheusFlags& f) {
  cmd->add_option("--prometheus-token-file", f.token_file,
                  "File holding a bearer token sent to Prometheus (Authorization: Bearer)");
  cmd->add_option("--prometheus-user", f.user, "Basic auth user (with --prometheus-password-file)");
  cmd->add_option("--prometheus-password-file", f.password_file,
                  "File holding the basic auth password");
  cmd->add_option("--prometheus-ca-file", f.ca_file,
                  "PEM CA bundle to verify an https Prometheus with (default: the system's)");
  cmd->add_option("--prometheus-tenant", f.tenant,
                  "Tenant sent as X-Scope-OrgID (Mimir, Cortex; Thanos Query needs none)");
  cmd->add_option("--prometheus-max-reply-mb", f.max_reply_mb,
                  "Refuse a Prometheus reply larger than this (MiB)")
      ->check(CLI::Range(1, 16384))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--recorded-series", [&f](const std::string& v) { f.recorded_series = v == "auto"; },
         "auto: the hours the gpumeter.hourly recording rules cover are read from them "
         "(docs/fleet.md); off: raw series only")
      ->check(CLI::IsMember({"auto", "off"}))
      ->default_str("auto");
  cmd->add_flag(
      "--prometheus-gzip", f.gzip,
      "Ask Prometheus for gzip-compressed replies: for a slow link (a port-forward across "
      "regions); on a fast one Prometheus spends more CPU compressing than it saves");
  AddDurationOption(cmd, "--prometheus-timeout", f.timeout, "For the whole reply of one query",
                    Seconds(1), Seconds(3600));
}

}  // namespace gpumeter::cli
