#include "sources/history/prometheus_frame.h"

#include <algorithm>
#include <cmath>

#include "domain/metric_names.h"

namespace gpumeter::history {

using top::Amount;
using top::FindingNow;
using top::FrameData;
using top::OwnerNow;
using top::Plus;
using top::UnitNow;
namespace {

// A rate from a counter's growth: Prometheus answers NaN or ±Inf for some series (a counter
// reset mid-window, a division by nothing); such a value is unknown, never a number on screen.
Amount Rate(double amount, double seconds) {
  const double v = amount / seconds;
  return std::isfinite(v) && v >= 0 ? Amount(v) : std::nullopt;
}

UnitNow UnitFromRecord(const attribution::UnitRecord& r) {
  UnitNow u;
  u.key = r.unit;
  const double s = r.seconds;
  // Many nodes: the node names the unit; the UUID's head tells GPUs apart.
  u.label = r.unit.node + " " + r.unit.uuid.substr(0, std::min<size_t>(r.unit.uuid.size(), 12)) +
            (r.unit.mig_profile.empty() ? "" : " " + r.unit.mig_profile);
  u.memory_total_bytes = Rate(r.memory_capacity_byte_seconds, s);
  // A GPU's energy counter is never flat: no energy in the window is energy unknown.
  const bool energy_known = r.energy_joules > 0;
  if (energy_known) u.power_watts = Rate(r.energy_joules, s);
  Amount busy = 0.0, used = 0.0;
  for (const auto& a : r.owners) {
    OwnerNow o;
    o.owner = a.owner;
    o.compute_ratio = Rate(a.compute_seconds, s);
    o.compute_bound_ratio = Rate(a.compute_bound_seconds, s);
    o.compute_unknown = a.compute_unknown_seconds > 0;
    o.memory_busy_ratio = Rate(a.memory_busy_seconds, s);
    o.memory_busy_bound_ratio = Rate(a.memory_busy_bound_seconds, s);
    o.memory_busy_unknown = a.memory_busy_unknown_seconds > 0;
    o.memory_bytes = Rate(a.memory_byte_seconds, s);
    if (energy_known) o.power_watts = Rate(a.energy_joules, s);
    if (energy_known) o.power_bound_watts = Rate(a.energy_bound_joules, s);
    o.held_share = Rate(a.requested_share_seconds, s);
    if (a.owner.kind != domain::OwnerKind::kIdle)
      busy = Plus(busy, o.compute_ratio), used = Plus(used, o.memory_bytes);
    u.owners.push_back(std::move(o));
  }
  u.busy_ratio = busy ? Amount(std::min(1.0, *busy)) : std::nullopt;
  u.memory_used_bytes = used;
  return u;
}

}  // namespace

std::vector<FindingNow> FindingsFromSamples(const std::vector<history::PromSample>& samples) {
  std::vector<FindingNow> out;
  for (const auto& s : samples) {
    const std::string pod = history::LabelValue(s, "pod"),
                      process = history::LabelValue(s, "process");
    const std::string who = !pod.empty() ? history::LabelValue(s, "namespace") + "/" + pod + "/" +
                                               history::LabelValue(s, "container")
                            : !process.empty() ? "host process " + process
                                               : "-";
    out.push_back(
        {history::LabelValue(s, "severity"), history::LabelValue(s, "kind"),
         history::LabelValue(s, "node"), who, history::LabelValue(s, "unit"),
         "node " + history::LabelValue(s, "node") + " (evidence: its agent's /api/v1/findings)",
         s.value});
  }
  return out;
}

FrameData FrameFromUsage(const history::PrometheusUsage& usage, const std::string& source,
                         int64_t at_unix_s, double window_seconds) {
  FrameData f;
  f.source = source, f.at_unix_s = at_unix_s, f.span_seconds = window_seconds;
  f.labels = usage.labels;
  for (const auto& r : usage.units)
    if (std::isfinite(r.seconds) && r.seconds > 0) f.units.push_back(UnitFromRecord(r));
  return f;
}

Expected<FrameData> FetchPrometheusFrame(const std::string& url, int64_t at_unix_s,
                                         int64_t window_seconds,
                                         const std::vector<std::string>& label_keys) {
  // A few seconds per query at most: a hung Prometheus shows as stale, and quitting waits little.
  history::PrometheusAccess access;
  access.url = url;
  access.limits.deadline = std::chrono::seconds(5);
  auto api = history::PrometheusApi::Open(access);
  if (!api) return tl::unexpected(api.error());
  auto usage =
      history::UsageFromPrometheus(*api, at_unix_s - window_seconds, at_unix_s, label_keys);
  if (!usage) return tl::unexpected(usage.error());
  auto frame =
      FrameFromUsage(*usage, "prometheus " + url, at_unix_s, static_cast<double>(window_seconds));
  // The agents' open findings as they export them: one series each, valued its first sighting.
  auto findings = api->Query(domain::metric_names::kFindingOpen, at_unix_s);
  if (!findings) return tl::unexpected(findings.error());
  frame.findings = FindingsFromSamples(*findings);
  return frame;
}

}  // namespace gpumeter::history
