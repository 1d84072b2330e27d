#include "sinks/report/audit_report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "common/excerpt.h"
#include "common/json/key_case.h"
#include "common/text_cell.h"
#include "core/guard/finding_json.h"

namespace gpumeter::report {

using nlohmann::json;

namespace {

std::string Short(const std::string& uuid) {
  return uuid.size() > 16 ? uuid.substr(0, 16) + ".." : uuid;
}

std::string Utc(double unix_s) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(unix_s)));
}

// The agent's split of the GPU `gpu_uuid`: empty when the agent does not account it.
std::vector<AuditSplitRow> SplitOf(const AuditAgent& agent, const std::string& gpu_uuid) {
  const auto it = agent.splits.find(gpu_uuid);
  return it == agent.splits.end() ? std::vector<AuditSplitRow>{} : it->second;
}

json SplitJson(const std::vector<AuditSplitRow>& rows) {
  json out = json::array();
  for (const auto& r : rows)
    out.push_back({{"unit", r.unit},
                   {"owner", r.owner},
                   {"computeRatio", r.compute_ratio ? json(*r.compute_ratio) : json(nullptr)},
                   {"memoryBytes", r.memory_bytes ? json(*r.memory_bytes) : json(nullptr)}});
  return out;
}

void PrintSplit(const std::vector<AuditSplitRow>& rows) {
  if (rows.empty()) {
    fmt::print("  gpumeter: the agent does not account this GPU (another node?)\n");
    return;
  }
  fmt::print("  gpumeter's split (agent's last interval; the parts add up to the GPU):\n");
  for (const auto& r : rows)
    fmt::print(
        "    {:<12} {:<48} {:>9} {:>12}\n", r.unit, r.owner,
        r.compute_ratio ? fmt::format("{:.1f} %", 100 * *r.compute_ratio) : "?",
        r.memory_bytes ? fmt::format("{:.2f} GiB", *r.memory_bytes / (1024.0 * 1024 * 1024)) : "?");
}

void PrintFindings(const AuditAgent& a) {
  const auto& findings = a.findings;
  std::map<guard::Severity, size_t> by;
  for (const auto& f : findings) ++by[f.severity];
  fmt::print(
      "gpumeter agent {} (node {}): {} open finding(s){}\n", a.url, a.node, findings.size(),
      findings.empty()
          ? ""
          : fmt::format(" — {} critical, {} warning, {} info", by[guard::Severity::kCritical],
                        by[guard::Severity::kWarning], by[guard::Severity::kInfo]));
  if (!a.checked)
    fmt::print("  the agent has not taken a good sample yet: nothing has been checked\n");
  for (const auto& f : findings) {
    const std::string who = !f.pod.empty()       ? f.ns + "/" + f.pod + "/" + f.container
                            : !f.process.empty() ? "host process " + f.process
                                                 : "-";
    fmt::print("\n  {:<8} {:<23} {:<40} {}  since {}\n    {}\n", guard::ToString(f.severity),
               guard::ToString(f.kind), TerminalCell(who),
               f.unit_uuid.empty() ? "" : TerminalCell(Short(f.unit_uuid)), Utc(f.first_seen),
               TerminalCell(f.evidence));
  }
  if (!findings.empty())
    fmt::print("\nWhat each finding means and how to fix it: docs/guardrails.md\n");
}

// One GPU of the dcgm-exporter page, with the agent's split of it when it is inflated.
json GpuJson(const audit::GpuAudit& g, const std::optional<AuditAgent>& agent) {
  json metrics = json::array();
  for (const auto& m : g.metrics)
    metrics.push_back({{"metric", m.metric},
                       {"deviceValue", m.device_value},
                       {"deviceSeries", m.device_series},
                       {"podSeries", m.pod_series},
                       {"podsSum", m.pods_sum},
                       {"factor", m.factor}});
  json gpu = {{"host", g.host},         {"uuid", g.uuid},
              {"gpu", g.gpu},           {"migInstance", g.mig_instance},
              {"model", g.model},       {"pods", g.pods},
              {"inflated", g.inflated}, {"worstFactor", g.worst_factor},
              {"metrics", metrics}};
  if (agent && g.inflated) gpu["gpumeterSplit"] = SplitJson(SplitOf(*agent, g.uuid));
  return gpu;
}

// An inflated GPU: its metrics' device value against the sum of its pods, then the agent's split.
void PrintInflatedGpu(const audit::GpuAudit& g, const std::optional<AuditAgent>& agent) {
  // Label values come from the page: quoted printable, so a newline or NUL cannot forge a row.
  std::vector<std::string> pods;
  for (const auto& p : g.pods) pods.push_back(Excerpt(p, 120));
  fmt::print("\n{} gpu {}{} {} ({}): {} pods: {}\n", Excerpt(g.host, 80), Excerpt(g.gpu, 20),
             g.mig_instance.empty() ? "" : " MIG instance " + Excerpt(g.mig_instance, 20),
             Excerpt(Short(g.uuid), 60), Excerpt(g.model, 80), g.pods.size(),
             fmt::join(pods, ", "));
  fmt::print("  {:<40} {:>8} {:>14} {:>14} {:>8}\n", "metric", "series", "device", "sum of pods",
             "factor");
  for (const auto& m : g.metrics)
    fmt::print("  {:<40} {:>8} {:>14.6g} {:>14.6g} {:>7.2f}x{}\n", m.metric, m.pod_series,
               m.device_value, m.pods_sum, m.factor,
               m.device_series ? "" : " (no device series: the copies' value)");
  if (agent) PrintSplit(SplitOf(*agent, g.uuid));
}

void PrintDcgm(const AuditResult& r, const audit::DcgmAudit& dcgm) {
  fmt::print("dcgm-exporter page {}: {} samples; mode: {}\n", r.dcgm_source, dcgm.samples,
             dcgm.mode);
  if (dcgm.invalid_samples > 0)
    fmt::print("{} sample(s) left out as unknown: NaN, ±Inf or negative (lines {}{})\n",
               dcgm.invalid_samples, fmt::join(dcgm.invalid_lines, ", "),
               dcgm.invalid_samples > dcgm.invalid_lines.size() ? ", …" : "");
  fmt::print("{} of {} GPUs with per-pod series add up to more than the GPU (threshold {:.2f}x)\n",
             r.inflated, dcgm.gpus_with_pods, r.threshold);
  for (const auto& g : dcgm.gpus)
    if (g.inflated) PrintInflatedGpu(g, r.agent);
  if (r.inflated)
    fmt::print(
        "\nA sum by pod or namespace over these series counts each GPU up to {:.2f} times. "
        "gpumeter splits each GPU "
        "between its pods so the parts add up to the whole (docs/guardrails.md).\n",
        dcgm.gpus.front().worst_factor);
}

}  // namespace

void PrintAuditTable(const AuditResult& r) {
  if (r.agent) PrintFindings(*r.agent);
  if (r.dcgm) {
    if (r.agent) fmt::print("\n");
    PrintDcgm(r, *r.dcgm);
  }
}

void PrintAuditJson(const AuditResult& r) {
  json out = json::object();
  if (r.dcgm) {
    json gpus = json::array();
    for (const auto& g : r.dcgm->gpus) gpus.push_back(GpuJson(g, r.agent));
    out.update({{"source", r.dcgm_source},
                {"mode", r.dcgm->mode},
                {"samples", r.dcgm->samples},
                {"invalidSamples", r.dcgm->invalid_samples},
                {"gpusWithPods", r.dcgm->gpus_with_pods},
                {"inflatedGpus", r.inflated},
                {"gpus", gpus}});
  }
  if (r.agent) {
    json findings = json::array();
    for (const auto& f : r.agent->findings) findings.push_back(guard::ToJson(f));
    out["agent"] = {{"url", r.agent->url},
                    {"node", r.agent->node},
                    {"checked", r.agent->checked},
                    {"findings", findings}};
  }
  out["worstSeverity"] = r.worst ? json(guard::ToString(*r.worst)) : json(nullptr);
  // The findings come in /api/v1's snake_case: camelCase here, as the rest of the document.
  const auto camel = json_case::ToCamelCase(out);
  fmt::print("{}\n", (camel ? *camel : out).dump(2, ' ', false, json::error_handler_t::replace));
}

}  // namespace gpumeter::report
