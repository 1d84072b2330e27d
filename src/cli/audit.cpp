#include "cli/audit.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "audit/dcgm_audit.h"
#include "cli/node_config.h"

namespace gpumeter::cli {

void AddAuditCommand(CLI::App& app, AuditOptions& o) {
  auto* cmd = app.add_subcommand("audit", "Audit a dcgm-exporter /metrics page: GPUs whose per-pod series add up to more than the GPU");
  cmd->add_option("--dcgm-metrics", o.dcgm_metrics, "dcgm-exporter's page: a FILE or an http(s):// URL (e.g. http://node:9400/metrics)")
      ->required();
  cmd->add_option("--format", o.format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->add_option("--fail-on", o.fail_on, "Exit 1 when a finding at or above this severity exists: none or warning")
      ->check(CLI::IsMember({"none", "warning"}))->capture_default_str();
  cmd->add_option("--threshold", o.threshold, "Per-pod sum / device above which a GPU counts as inflated")
      ->check(CLI::Range(1.0, 1000.0))->capture_default_str();
}

namespace {

Expected<std::string> Fetch(const std::string& where) {
  if (where.rfind("http://", 0) != 0 && where.rfind("https://", 0) != 0) return ReadWhole("--dcgm-metrics", where);
  const auto path_start = where.find('/', where.find("://") + 3);
  httplib::Client client(path_start == std::string::npos ? where : where.substr(0, path_start));
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(30));
  auto r = client.Get(path_start == std::string::npos ? "/metrics" : where.substr(path_start));
  if (!r) return MakeError(ErrorCode::kUnavailable, "--dcgm-metrics " + where + ": unreachable (" + httplib::to_string(r.error()) + ")");
  if (r->status != 200) return MakeError(ErrorCode::kUnavailable, "--dcgm-metrics " + where + ": HTTP " + std::to_string(r->status));
  return r->body;
}

std::string Short(const std::string& uuid) { return uuid.size() > 16 ? uuid.substr(0, 16) + ".." : uuid; }

}  // namespace

int RunAudit(const AuditOptions& o) {
  auto text = Fetch(o.dcgm_metrics);
  if (!text) {
    spdlog::error("{}", text.error().message);
    return text.error().code == ErrorCode::kInvalidInput ? 2 : 1;
  }
  auto page = audit::ParsePromText(*text);
  if (!page) {
    spdlog::error("--dcgm-metrics {}: {}", o.dcgm_metrics, page.error().message);
    return 2;
  }
  const auto a = audit::AuditDcgmPage(*page, o.threshold);
  size_t inflated = 0;
  for (const auto& g : a.gpus) inflated += g.inflated ? 1 : 0;
  if (o.format == "json") {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : a.gpus) {
      nlohmann::json metrics = nlohmann::json::array();
      for (const auto& m : g.metrics)
        metrics.push_back({{"metric", m.metric}, {"deviceValue", m.device_value}, {"deviceSeries", m.device_series},
                           {"podSeries", m.pod_series}, {"podsSum", m.pods_sum}, {"factor", m.factor}});
      gpus.push_back({{"host", g.host}, {"uuid", g.uuid}, {"gpu", g.gpu}, {"migInstance", g.mig_instance}, {"model", g.model},
                      {"pods", g.pods}, {"inflated", g.inflated}, {"worstFactor", g.worst_factor}, {"metrics", metrics}});
    }
    fmt::print("{}\n", nlohmann::json{{"source", o.dcgm_metrics}, {"mode", a.mode}, {"samples", a.samples},
                                      {"gpusWithPods", a.gpus_with_pods}, {"inflatedGpus", inflated}, {"gpus", gpus}}
                           .dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("dcgm-exporter page {}: {} samples; mode: {}\n", o.dcgm_metrics, a.samples, a.mode);
    fmt::print("{} of {} GPUs with per-pod series add up to more than the GPU (threshold {:.2f}x)\n", inflated, a.gpus_with_pods, o.threshold);
    for (const auto& g : a.gpus) {
      if (!g.inflated) continue;
      fmt::print("\n{} gpu {}{} {} ({}): {} pods: {}\n", g.host, g.gpu, g.mig_instance.empty() ? "" : " MIG instance " + g.mig_instance,
                 Short(g.uuid), g.model, g.pods.size(), fmt::join(g.pods, ", "));
      fmt::print("  {:<40} {:>8} {:>14} {:>14} {:>8}\n", "metric", "series", "device", "sum of pods", "factor");
      for (const auto& m : g.metrics)
        fmt::print("  {:<40} {:>8} {:>14.6g} {:>14.6g} {:>7.2f}x{}\n", m.metric, m.pod_series, m.device_value, m.pods_sum, m.factor,
                   m.device_series ? "" : " (no device series: the copies' value)");
    }
    if (inflated)
      fmt::print("\nA sum by pod or namespace over these series counts each GPU up to {:.2f} times. gpumeter splits each GPU "
                 "between its pods so the parts add up to the whole (docs/guardrails.md).\n",
                 a.gpus.front().worst_factor);
  }
  return o.fail_on == "warning" && inflated > 0 ? 1 : 0;
}

}  // namespace gpumeter::cli
