// `gpumeter report`: its flags, into app::ReportOptions (src/app/usage/report.h).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <string>

#include "app/usage/report.h"
#include "cli/commands.h"
#include "common/duration.h"

namespace gpumeter::cli {

void AddReportCommand(CLI::App& app, app::ReportOptions& o) {
  auto* cmd = app.add_subcommand(
      "report",
      "GPU chargeback over a window: cost per namespace, pod, label, … from the usage store");
  using Kind = app::UsageSource::Kind;
  AddSourceFlag(
      cmd, [&o](app::UsageSource s) { o.source = std::move(s); }, {Kind::kStore, Kind::kPrometheus},
      "sqlite:PATH (the store written by `gpumeter agent --store`) or prometheus:URL", true);
  cmd->add_option_function<std::string>(
      "--window",
      [&o](const std::string& text) {
        o.window_all = text == "all";
        if (o.window_all) return o.window.reset();
        auto d = ParseSeconds(text);
        if (!d) throw CLI::ValidationError("--window", d.error().message);
        if (*d < Seconds(1) || *d > Seconds(3660.0 * 86400))
          throw CLI::ValidationError("--window", "'" + text + "': not within [1s, 3660d]");
        o.window = *d;
      },
      "How far back from --to (or now): 30m, 24h, 7d, … or 'all' (the store's whole span; the "
      "default for sqlite)");
  AddTimeFlag(
      cmd, "--from", [&o](int64_t t) { o.from_s = t; }, "Start");
  AddTimeFlag(
      cmd, "--to", [&o](int64_t t) { o.to_s = t; }, "End (default: now)");
  AddGroupByFlag(
      cmd, o.by,
      "Group by namespace, pod, container, label:KEY, gpu_model, node (comma-separated)");
  AddPolicyFlags(cmd, o.policy);
  cmd->add_option("--pricing", o.pricing_file,
                  "Pricing file (YAML, docs/pricing.md); default: the dated default table");
  cmd->add_option("--bill", o.bill_files,
                  "Price from the cloud bill: FOCUS exports (CSV or .csv.gz; AWS, Azure, Google "
                  "Cloud), matched to the nodes by provider ID (docs/pricing.md, From your bill)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--bill-split", o.bill_split,
                  "With --bill: the GPU share of a node's cost where the pricing file has no node "
                  "price for its instance type: aws-scad (0.9), datadog (0.95), grafana (0.7) or a "
                  "share in (0, 1]")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--bill-unmatched",
         [&o](const std::string& text) {
           if (text == "all") {
             o.bill_unmatched = SIZE_MAX;
             return;
           }
           size_t n = 0;
           const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
           if (ec != std::errc() || end != text.data() + text.size())
             throw CLI::ValidationError("--bill-unmatched",
                                        "'" + text + "': a number of VMs, or 'all'");
           o.bill_unmatched = n;
         },
         "With --bill: how many VMs that match no node to list, the costliest first (the rest "
         "as their count and sum), or 'all'")
      ->default_str("20 in a table or html, 100 in json");
  cmd->add_option("--format", o.format, "table, csv, json, focus or html")
      ->check(CLI::IsMember({"table", "csv", "json", "focus", "html"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o.output, "Write to this file instead of stdout");
  AddPrometheusFlags(cmd, o.prometheus);
}

}  // namespace gpumeter::cli
