#include "app/diagnose/audit.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string_view>

#include "app/config_files.h"
#include "common/bounded_file.h"
#include "common/http/client.h"
#include "core/audit/dcgm_audit.h"
#include "core/guard/findings.h"
#include "sinks/report/audit_report.h"
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

// The agent's replies (sources/history/agent_source.h); units and ledger only beside a
// dcgm-exporter page, whose inflated GPUs they split.
struct AgentView {
  history::AgentFindings status;
  std::vector<top::UnitNow> units;
  std::vector<history::AgentLedgerUnit> ledger;
};

// The agent's split of one physical GPU, joined from its units and ledger replies: each unit on
// it with its owners' share of compute and memory over the agent's last interval.
std::vector<report::AuditSplitRow> SplitOf(const AgentView& agent, const std::string& gpu_uuid) {
  std::vector<report::AuditSplitRow> out;
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

// What the report shows: the inputs (moved from `in`), the agent's split of each inflated GPU.
report::AuditResult ToResult(const AuditOptions& o, Inputs&& in, size_t inflated,
                             const std::optional<guard::Severity>& worst) {
  report::AuditResult r;
  r.dcgm_source = o.dcgm_metrics;
  r.threshold = o.threshold;
  r.inflated = inflated;
  r.worst = worst;
  if (in.agent) {
    auto& a = r.agent.emplace();
    a.url = o.agent;
    a.node = in.agent->status.node;
    a.checked = in.agent->status.checked;
    if (in.dcgm)
      for (const auto& g : in.dcgm->gpus)
        if (g.inflated) a.splits[g.uuid] = SplitOf(*in.agent, g.uuid);
    a.findings = std::move(in.agent->status.findings);
  }
  r.dcgm = std::move(in.dcgm);
  return r;
}

// Under --fail-on: 1 when the worst severity reaches it, or when the agent has checked nothing.
int ExitCode(const AuditOptions& o, const report::AuditResult& r) {
  if (o.fail_on == "none") return 0;
  if (r.agent && !r.agent->checked) {
    // Nothing checked is not a clean node.
    spdlog::error("--agent {}: the agent has not taken a good sample yet; nothing to gate on",
                  o.agent);
    return 1;
  }
  if (!r.worst) return 0;
  const auto threshold = guard::SeverityFromString(o.fail_on);
  return threshold && *r.worst >= *threshold ? 1 : 0;
}

}  // namespace

int RunAudit(const AuditOptions& o) {
  if (const int rc = CheckFlags(o)) return rc;
  auto in = ReadInputs(o);
  if (!in) return Failed(in.error());
  const size_t inflated = InflatedGpus(*in);
  const auto worst = WorstSeverity(*in, inflated);
  const auto result = ToResult(o, std::move(*in), inflated, worst);
  if (o.format == "json")
    report::PrintAuditJson(result);
  else
    report::PrintAuditTable(result);
  return ExitCode(o, result);
}

}  // namespace gpumeter::app
