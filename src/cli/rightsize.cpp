// `gpumeter rightsize`: its flags, into app::RightsizeOptions (src/app/usage/rightsize.h).
#include <CLI/CLI.hpp>

#include "app/usage/rightsize.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddRightsizeCommand(CLI::App& app, app::RightsizeOptions& o) {
  auto* cmd = app.add_subcommand(
      "rightsize",
      "Recommend the GPU share each workload needs (MIG profile, sharing, reclaim), with savings");
  using Kind = app::UsageSource::Kind;
  AddSourceFlag(
      cmd, [&o](app::UsageSource s) { o.source = std::move(s); }, {Kind::kStore, Kind::kPrometheus},
      "The usage store, sqlite:PATH (the agent's --store), or prometheus:URL (the fleet: "
      "workloads pack across nodes)",
      true);
  AddDurationOption(cmd, "--window", o.window,
                    "History to read, back from the store's last minute or from now (e.g. 14d)",
                    Seconds(60), Seconds(400 * 86400));
  AddTimeFlag(
      cmd, "--to", [&o](int64_t t) { o.to_s = t; },
      "End of the history (default: the store's last minute, or now for Prometheus)");
  cmd->add_option("--node", o.node, "Only the workloads on this node");
  cmd->add_option("--namespace", o.ns, "Only the workloads of this namespace");
  AddDurationOption(cmd, "--minute-history", o.minute_history,
                    "prometheus: read per minute from raw series back this far; older hours from "
                    "the hourly recorded series where the rules cover them",
                    Seconds(60), Seconds(400 * 86400));
  AddDurationOption(cmd, "--min-history", o.min_history,
                    "Below this much history (VPA confidence), keep: too short to say", Seconds(1),
                    Seconds(400 * 86400));
  cmd->add_option("--margin", o.margin, "Safety margin over the targets (0.15: +15 %)")
      ->check(CLI::Range(0.0, 2.0))
      ->capture_default_str();
  cmd->add_option("--pricing", o.pricing_file,
                  "Pricing file for the savings (default: the dated default table)");
  cmd->add_option("--format", o.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o.output, "Write to this file instead of stdout");
  AddPrometheusFlags(cmd, o.prometheus);
}

}  // namespace gpumeter::cli
