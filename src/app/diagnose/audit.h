// `gpumeter audit`: what is wrong on a GPU node, from two sources.
// --dcgm-metrics FILE|URL reads a dcgm-exporter /metrics page and reports every GPU whose per-pod
// series add up to more than the device (with the factor). --agent URL reads a gpumeter agent's
// open guardrail findings (/api/v1/findings) and, beside an inflated dcgm-exporter GPU, the
// agent's split of that GPU (/api/v1/units and /api/v1/ledger), whose parts add up to the whole.
// As a table or JSON, with an exit code for CI or cron (--fail-on).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace gpumeter::app {

struct AuditOptions {
  std::string dcgm_metrics;      // a file, or an http(s):// URL
  std::string agent;             // a gpumeter agent's base URL, e.g. http://node:9402
  std::string agent_token_file;  // bearer token for an agent started with --bearer-token-file
  std::string agent_ca_file;     // CA (PEM) for an agent serving HTTPS with its own certificate
  std::string format = "table";
  std::string fail_on = "none";  // none | info | warning | critical (an inflated GPU is a warning)
  double threshold = 1.01;
  // Every page and reply is read as the agent reads dcgm-exporter: an overall deadline, a cap on
  // the body (after decompression), gzip only when asked for.
  std::chrono::seconds timeout{3};
  std::size_t max_reply_bytes = 64u << 20;
  bool gzip = false;
};

// 0: nothing at or above --fail-on; 1: a finding at or above it, or a source could not be read;
// 2: bad input (a malformed page or reply, a page with no usable dcgm-exporter sample, bad flags).
int RunAudit(const AuditOptions& options);

}  // namespace gpumeter::app
