// `gpumeter audit --dcgm-metrics FILE|URL`: reads a dcgm-exporter /metrics page and reports every
// GPU whose per-pod series add up to more than the device (with the factor), as a table or JSON.
// Exit code 1 when an inflated GPU is found and --fail-on warning asks for it (for CI or cron).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpumeter::cli {

struct AuditOptions {
  std::string dcgm_metrics;  // a file, or an http(s):// URL
  std::string format = "table";
  std::string fail_on = "none";  // none | warning
  double threshold = 1.01;
};

void AddAuditCommand(CLI::App& app, AuditOptions& options);
// 0: nothing at or above --fail-on; 1: an inflated GPU with --fail-on warning, or the page could
// not be read; 2: bad input (a malformed page, bad flags).
int RunAudit(const AuditOptions& options);

}  // namespace gpumeter::cli
