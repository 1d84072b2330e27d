// `gpumeter report`: its flags, into app::ReportOptions (src/app/report.h).
#include <CLI/CLI.hpp>

#include "app/usage/report.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddReportCommand(CLI::App& app, app::ReportOptions& o) {
  auto* cmd = app.add_subcommand(
      "report",
      "GPU chargeback over a window: cost per namespace, pod, label, … from the usage store");
  using Kind = app::UsageSource::Kind;
  AddSourceFlag(
      cmd, [&o](app::UsageSource s) { o.source = std::move(s); }, {Kind::kStore, Kind::kPrometheus},
      "sqlite:PATH (the store written by `gpumeter agent --store`) or prometheus:URL")
      ->required();
  cmd->add_option("--window", o.window,
                  "How far back from now: 30m, 24h, 7d, … or 'all' (the store's whole span; the "
                  "default for sqlite)");
  cmd->add_option("--from", o.from, "Start: RFC 3339 (2026-12-01T00:00:00Z) or Unix seconds");
  cmd->add_option("--to", o.to, "End (default: now)");
  cmd->add_option(
         "--by", o.by,
         "Group by namespace, pod, container, label:KEY, gpu_model, node (comma-separated)")
      ->capture_default_str();
  cmd->add_option("--policy", o.policy, "Cost follows memory, compute, blend:ALPHA or request")
      ->capture_default_str();
  cmd->add_option("--idle", o.idle, "Idle cost: share (by use), owner (by request) or separate")
      ->capture_default_str();
  cmd->add_option("--pricing", o.pricing_file,
                  "Pricing file (YAML, docs/pricing.md); default: the dated default table");
  cmd->add_option("--format", o.format, "table, csv, json, focus or html")
      ->check(CLI::IsMember({"table", "csv", "json", "focus", "html"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o.output, "Write to this file instead of stdout");
  AddPrometheusFlags(cmd, o.prometheus);
}

}  // namespace gpumeter::cli
