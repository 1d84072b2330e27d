#include "app/diagnose/audit.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string_view>

#include "app/config_files.h"
#include "common/bounded_file.h"
#include "common/excerpt.h"
#include "common/http/client.h"
#include "common/json/key_case.h"
#include "common/text_cell.h"
#include "core/audit/dcgm_audit.h"
#include "core/guard/finding_json.h"
#include "sources/history/agent_client.h"
#include "sources/history/agent_source.h"

namespace gpumeter::app {

using nlohmann::json;

namespace {

bool IsUrl(const std::string& s) {
  return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
}

// The agent's own dcgm-exporter source reads the same page within 3 s and 64 MiB (flags raise
// both): a page that never ends or a 1 GB page must cost an audit no more than it costs the agent.
http::Limits Limits(const AuditOptions& o) {
  return {
      .connect_timeout = std::min<std::chrono::milliseconds>(o.timeout, std::chrono::seconds(5)),
      .read_timeout = {},
      .deadline = o.timeout,
      .max_bytes = o.max_reply_bytes};
}

std::string Short(const std::string& uuid) {
  return uuid.size() > 16 ? uuid.substr(0, 16) + ".." : uuid;
}

std::string Utc(double unix_s) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(unix_s)));
}

// The agent's split of one physical GPU: each unit on it with its owners' share of compute and
// memory over the agent's last interval.
struct SplitRow {
  std::string unit, owner;
  std::optional<double> compute_ratio, memory_bytes;
};

// The agent's replies (sources/history/agent_source.h); units and ledger only beside a
// dcgm-exporter page, whose inflated GPUs they split.
struct AgentView {
  history::AgentFindings status;
  std::vector<top::UnitNow> units;
  std::vector<history::AgentLedgerUnit> ledger;
};

std::vector<SplitRow> SplitOf(const AgentView& agent, const std::string& gpu_uuid) {
  std::vector<SplitRow> out;
  std::map<std::string, std::string> unit_label;  // units on this GPU
  for (const auto& u : agent.units)
    if (u.key.gpu_uuid == gpu_uuid)
      unit_label[u.key.uuid] = u.key.mig_profile.empty() ? "whole GPU" : u.key.mig_profile;
  for (const auto& l : agent.ledger) {
    const auto it = unit_label.find(l.uuid);
    if (it == unit_label.end()) continue;
    for (const auto& o : l.owners) {  // each with its compute or its memory known
      const auto& w = o.owner;
      out.push_back({it->second,
                     w.kind == domain::OwnerKind::kContainer
                         ? w.ns + "/" + w.pod + "/" + w.container
                         : domain::ToString(w.kind),
                     o.compute_ratio, o.memory_bytes});
    }
  }
  return out;
}

// The agent's reply at `path`, read by the one reader of its API (`parse`, from agent_source.h);
// a reply that does not parse is an error naming the agent, then the path and the field.
template <typename Parse>
auto Reply(const AuditOptions& o, const history::AgentClient& agent, const char* path, Parse parse)
    -> decltype(parse(json())) {
  auto j = agent.GetJson(path);
  if (!j) return tl::unexpected(j.error());
  auto parsed = parse(*j);
  if (!parsed)
    return MakeError(parsed.error().code, "--agent " + o.agent + ": " + parsed.error().message);
  return parsed;
}

Expected<AgentView> ReadAgent(const AuditOptions& o) {
  auto token = ReadTokenFlag("--agent-token-file", o.agent_token_file);
  if (!token) return tl::unexpected(token.error());
  auto client = history::AgentClient::Open(o.agent, *token, o.agent_ca_file, Limits(o));
  if (!client) return tl::unexpected(client.error());
  AgentView v;
  auto findings = Reply(o, *client, "/api/v1/findings", history::ParseAgentFindings);
  if (!findings) return tl::unexpected(findings.error());
  v.status = std::move(*findings);
  if (!o.dcgm_metrics.empty()) {  // the split is only needed beside inflated GPUs
    auto units = Reply(o, *client, "/api/v1/units", history::ParseAgentUnits);
    if (!units) return tl::unexpected(units.error());
    auto ledger = Reply(o, *client, "/api/v1/ledger", history::ParseAgentLedger);
    if (!ledger) return tl::unexpected(ledger.error());
    v.units = std::move(units->units), v.ledger = std::move(*ledger);
  }
  return v;
}

json SplitJson(const std::vector<SplitRow>& rows) {
  json out = json::array();
  for (const auto& r : rows)
    out.push_back({{"unit", r.unit},
                   {"owner", r.owner},
                   {"computeRatio", r.compute_ratio ? json(*r.compute_ratio) : json(nullptr)},
                   {"memoryBytes", r.memory_bytes ? json(*r.memory_bytes) : json(nullptr)}});
  return out;
}

void PrintSplit(const std::vector<SplitRow>& rows) {
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

void PrintFindings(const AuditOptions& o, const AgentView& a) {
  const auto& findings = a.status.findings;
  std::map<guard::Severity, size_t> by;
  for (const auto& f : findings) ++by[f.severity];
  fmt::print(
      "gpumeter agent {} (node {}): {} open finding(s){}\n", o.agent, a.status.node,
      findings.size(),
      findings.empty()
          ? ""
          : fmt::format(" — {} critical, {} warning, {} info", by[guard::Severity::kCritical],
                        by[guard::Severity::kWarning], by[guard::Severity::kInfo]));
  if (!a.status.checked)
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

// The flags checked before any source is read: 2 once the error is logged, else 0.
int CheckFlags(const AuditOptions& o) {
  if (o.dcgm_metrics.empty() && o.agent.empty()) {
    spdlog::error("audit: give --agent URL, --dcgm-metrics FILE|URL, or both");
    return 2;
  }
  if (!o.agent.empty() && !IsUrl(o.agent)) {
    spdlog::error("--agent '{}': expected an http(s):// URL, e.g. http://node:9402", o.agent);
    return 2;
  }
  return 0;
}

// Logs a source's error; the exit code: 2 for bad input, else 1.
int Failed(const Error& e) {
  spdlog::error("{}", e.message);
  return e.code == ErrorCode::kInvalidInput ? 2 : 1;
}

// What the audit read; a source not asked for stays empty.
struct Inputs {
  std::optional<audit::DcgmAudit> dcgm;
  std::optional<AgentView> agent;
};

// The page from a URL (through the one HTTP client) or a file, within the same cap, audited as it
// arrives: the audit keeps per GPU and metric, not the page. An error of the page itself (a
// malformed line) comes once the page is read to its end, so that a cap, the deadline or the
// connection is the error, as when the page was read whole.
Expected<audit::DcgmAudit> AuditPage(const AuditOptions& o) {
  audit::DcgmPageAuditor auditor(o.threshold);
  const auto feed = [&auditor](std::string_view chunk) {
    (void)auditor.Feed(chunk);  // the error comes again from Finish
  };
  if (!IsUrl(o.dcgm_metrics)) {
    auto read = ReadBoundedFileChunks(o.dcgm_metrics, o.max_reply_bytes, feed);
    if (!read)
      return MakeError(read.error().code,
                       "--dcgm-metrics: " + read.error().message +
                           (read.error().message.find("larger than") != std::string::npos
                                ? " (raise the cap with --max-reply-mb)"
                                : ""));
  } else {
    http::Endpoint e;
    e.what = "--dcgm-metrics";
    e.url = o.dcgm_metrics;
    e.accept_gzip = o.gzip;
    e.default_path = "/metrics";
    e.cap_hint = "--max-reply-mb";
    e.deadline_hint = "--timeout";
    auto client = http::Client::Open(std::move(e), Limits(o));
    if (!client) return tl::unexpected(client.error());
    if (auto got = client->GetOkChunked("", feed); !got) return tl::unexpected(got.error());
  }
  auto audited = auditor.Finish();
  if (!audited)
    return MakeError(ErrorCode::kInvalidInput,
                     "--dcgm-metrics " + o.dcgm_metrics + ": " + audited.error().message);
  return audited;
}

// The dcgm-exporter page, then the agent; the first error stops it.
Expected<Inputs> ReadInputs(const AuditOptions& o) {
  Inputs in;
  if (!o.dcgm_metrics.empty()) {
    auto audited = AuditPage(o);
    if (!audited) return tl::unexpected(audited.error());
    in.dcgm = std::move(*audited);
    // An empty page, an HTML error page that parses as nothing, another exporter's page: an
    // audit that finds nothing to check must not pass as "nothing inflated".
    if (in.dcgm->usable_samples == 0)
      return MakeError(ErrorCode::kInvalidInput,
                       "--dcgm-metrics " + o.dcgm_metrics + ": no usable dcgm-exporter sample (" +
                           std::to_string(in.dcgm->samples) + " samples, " +
                           std::to_string(in.dcgm->invalid_samples) +
                           " of them invalid; is this a dcgm-exporter page?)");
  }
  if (!o.agent.empty()) {
    auto a = ReadAgent(o);
    if (!a) return tl::unexpected(a.error());
    in.agent = std::move(*a);
  }
  return in;
}

size_t InflatedGpus(const Inputs& in) {
  size_t inflated = 0;
  if (in.dcgm)
    for (const auto& g : in.dcgm->gpus) inflated += g.inflated ? 1 : 0;
  return inflated;
}

// The worst severity found, an inflated GPU counting as a warning; nothing found: nullopt.
std::optional<guard::Severity> WorstSeverity(const Inputs& in, size_t inflated) {
  std::optional<guard::Severity> worst;
  if (inflated) worst = guard::Severity::kWarning;
  if (in.agent)
    for (const auto& f : in.agent->status.findings)
      worst = worst ? std::max(*worst, f.severity) : f.severity;
  return worst;
}

// One GPU of the dcgm-exporter page, with the agent's split of it when it is inflated.
json GpuJson(const audit::GpuAudit& g, const std::optional<AgentView>& agent) {
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

void PrintJson(const AuditOptions& o, const Inputs& in, size_t inflated,
               const std::optional<guard::Severity>& worst) {
  json out = json::object();
  if (in.dcgm) {
    json gpus = json::array();
    for (const auto& g : in.dcgm->gpus) gpus.push_back(GpuJson(g, in.agent));
    out.update({{"source", o.dcgm_metrics},
                {"mode", in.dcgm->mode},
                {"samples", in.dcgm->samples},
                {"invalidSamples", in.dcgm->invalid_samples},
                {"gpusWithPods", in.dcgm->gpus_with_pods},
                {"inflatedGpus", inflated},
                {"gpus", gpus}});
  }
  if (in.agent) {
    json findings = json::array();
    for (const auto& f : in.agent->status.findings) findings.push_back(guard::ToJson(f));
    out["agent"] = {{"url", o.agent},
                    {"node", in.agent->status.node},
                    {"checked", in.agent->status.checked},
                    {"findings", findings}};
  }
  out["worstSeverity"] = worst ? json(guard::ToString(*worst)) : json(nullptr);
  // The findings come in /api/v1's snake_case: camelCase here, as the rest of the document.
  const auto camel = json_case::ToCamelCase(out);
  fmt::print("{}\n", (camel ? *camel : out).dump(2, ' ', false, json::error_handler_t::replace));
}

// An inflated GPU: its metrics' device value against the sum of its pods, then the agent's split.
void PrintInflatedGpu(const audit::GpuAudit& g, const std::optional<AgentView>& agent) {
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

void PrintDcgm(const AuditOptions& o, const audit::DcgmAudit& dcgm,
               const std::optional<AgentView>& agent, size_t inflated) {
  fmt::print("dcgm-exporter page {}: {} samples; mode: {}\n", o.dcgm_metrics, dcgm.samples,
             dcgm.mode);
  if (dcgm.invalid_samples > 0)
    fmt::print("{} sample(s) left out as unknown: NaN, ±Inf or negative (lines {}{})\n",
               dcgm.invalid_samples, fmt::join(dcgm.invalid_lines, ", "),
               dcgm.invalid_samples > dcgm.invalid_lines.size() ? ", …" : "");
  fmt::print("{} of {} GPUs with per-pod series add up to more than the GPU (threshold {:.2f}x)\n",
             inflated, dcgm.gpus_with_pods, o.threshold);
  for (const auto& g : dcgm.gpus)
    if (g.inflated) PrintInflatedGpu(g, agent);
  if (inflated)
    fmt::print(
        "\nA sum by pod or namespace over these series counts each GPU up to {:.2f} times. "
        "gpumeter splits each GPU "
        "between its pods so the parts add up to the whole (docs/guardrails.md).\n",
        dcgm.gpus.front().worst_factor);
}

void PrintTable(const AuditOptions& o, const Inputs& in, size_t inflated) {
  if (in.agent) PrintFindings(o, *in.agent);
  if (in.dcgm) {
    if (in.agent) fmt::print("\n");
    PrintDcgm(o, *in.dcgm, in.agent, inflated);
  }
}

// Under --fail-on: 1 when the worst severity reaches it, or when the agent has checked nothing.
int ExitCode(const AuditOptions& o, const Inputs& in, const std::optional<guard::Severity>& worst) {
  if (o.fail_on == "none") return 0;
  if (in.agent && !in.agent->status.checked) {
    // Nothing checked is not a clean node.
    spdlog::error("--agent {}: the agent has not taken a good sample yet; nothing to gate on",
                  o.agent);
    return 1;
  }
  if (!worst) return 0;
  const auto threshold = guard::SeverityFromString(o.fail_on);
  return threshold && *worst >= *threshold ? 1 : 0;
}

}  // namespace

int RunAudit(const AuditOptions& o) {
  if (const int rc = CheckFlags(o)) return rc;
  const auto in = ReadInputs(o);
  if (!in) return Failed(in.error());
  const size_t inflated = InflatedGpus(*in);
  const auto worst = WorstSeverity(*in, inflated);
  if (o.format == "json")
    PrintJson(o, *in, inflated, worst);
  else
    PrintTable(o, *in, inflated);
  return ExitCode(o, *in, worst);
}

}  // namespace gpumeter::app
