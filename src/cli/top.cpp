// `gpumeter top`: its flags, into app::TopOptions (src/app/usage/top.h).
#include <CLI/CLI.hpp>

#include "app/usage/top.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddTopCommand(CLI::App& app, app::TopOptions& o) {
  auto* cmd = app.add_subcommand(
      "top", "Live view of who uses which GPU, per pod: units, pods and findings (docs/top.md)");
  using Kind = app::UsageSource::Kind;
  AddSourceFlag(
      cmd, [&o](app::UsageSource s) { o.source = std::move(s); },
      {Kind::kAgent, Kind::kPrometheus, Kind::kFile},
      "agent:URL (a gpumeter agent's JSON API), prometheus:URL (the cluster) or "
      "file:PATH (a frame saved with --once --format json); default: the local "
      "agent, agent:http://127.0.0.1:9402");
  cmd->add_option("--agent", o.agent, "Shorthand for --source agent:URL");
  cmd->add_option("--agent-token-file", o.agent_token_file,
                  "Bearer token for an agent run with --bearer-token-file");
  cmd->add_option("--agent-ca-file", o.agent_ca_file,
                  "CA certificate (PEM) for an agent serving HTTPS with its own certificate");
  AddDurationOption(cmd, "--interval", o.interval, "Refresh this often", Seconds(0.1),
                    Seconds(3600));
  AddDurationOption(cmd, "--window", o.window,
                    "prometheus: rates over this window (30s, 1m, 5m, ...)", Seconds(1),
                    Seconds(86400));
  cmd->add_option("--pricing", o.pricing_file,
                  "Pricing file (YAML, docs/pricing.md); default: the dated default table");
  AddPolicyFlags(cmd, o.policy);
  cmd->add_option("--view", o.view, "The view to start in: units, pods or findings")
      ->capture_default_str();
  cmd->add_option("--sort", o.sort, "Sort pods by compute, memory, cost or waste")
      ->capture_default_str();
  cmd->add_option("--by", o.by, "Pods view rows: container, pod, namespace or label:KEY")
      ->capture_default_str();
  cmd->add_option("-n,--namespace", o.ns, "Show only this namespace");
  cmd->add_flag("--once", o.once, "Print one frame as plain text and exit");
  AddTimeFlag(
      cmd, "--at", [&o](int64_t t) { o.at_s = t; },
      "--once from Prometheus: the frame as it was at this instant (default: now)");
  cmd->add_option("--format", o.format, "--once: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace gpumeter::cli
