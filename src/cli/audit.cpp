// `gpumeter audit`: its flags, into app::AuditOptions (src/app/diagnose/audit.h).
#include <CLI/CLI.hpp>

#include "app/diagnose/audit.h"
#include "cli/commands.h"
#include "common/duration.h"

namespace gpumeter::cli {

void AddAuditCommand(CLI::App& app, app::AuditOptions& o) {
  auto* cmd = app.add_subcommand("audit",
                                 "Audit a GPU node: a gpumeter agent's guardrail findings, and "
                                 "dcgm-exporter series that add up to more "
                                 "than their GPU");
  cmd->add_option(
      "--dcgm-metrics", o.dcgm_metrics,
      "dcgm-exporter's page: a FILE or an http(s):// URL (e.g. http://node:9400/metrics)");
  cmd->add_option("--agent", o.agent,
                  "A gpumeter agent's URL (e.g. http://node:9402): its findings, and its split of "
                  "inflated GPUs");
  cmd->add_option("--agent-token-file", o.agent_token_file,
                  "Bearer token for an agent run with --bearer-token-file");
  cmd->add_option("--agent-ca-file", o.agent_ca_file,
                  "CA certificate (PEM) for an agent serving HTTPS with its own certificate");
  cmd->add_option("--format", o.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option(
         "--fail-on", o.fail_on,
         "Exit 1 when a finding at or above this severity exists (an inflated GPU is a warning)")
      ->check(CLI::IsMember({"none", "info", "warning", "critical"}))
      ->capture_default_str();
  cmd->add_option("--threshold", o.threshold,
                  "Per-pod sum / device above which a GPU counts as inflated")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--timeout",
         [&o](const std::string& text) {
           auto s = ParseDurationSeconds(text);
           if (!s || *s > 3600)
             throw CLI::ValidationError("--timeout", s ? "at most 1h" : s.error().message);
           o.timeout = std::chrono::seconds(*s);
         },
         "The whole read of each page or reply, connect to last byte (e.g. 3s, 1m)")
      ->default_str("3s");
  cmd->add_option_function<std::size_t>(
         "--max-reply-mb", [&o](std::size_t mb) { o.max_reply_bytes = mb << 20; },
         "A page or reply larger than this (MiB, after decompression) is refused")
      ->check(CLI::Range(1, 4096))
      ->default_str("64");
  cmd->add_flag("--gzip", o.gzip,
                "Ask for a gzip-compressed page (the cap counts what it unpacks to)");
}

}  // namespace gpumeter::cli
