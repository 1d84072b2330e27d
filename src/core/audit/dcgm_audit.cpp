#include "core/audit/dcgm_audit.h"

#include <cmath>

#include <algorithm>
#include <utility>

namespace gpumeter::audit {
namespace {

std::string First(const std::map<std::string, std::string>& labels,
                  std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (auto it = labels.find(k); it != labels.end() && !it->second.empty()) return it->second;
  return "";
}

}  // namespace

bool IsAdditiveDcgmMetric(const std::string& n) {
  if (n.rfind("DCGM_FI_", 0) != 0) return false;
  for (const char* part :
       {"_UTIL", "FB_USED", "POWER_USAGE", "ENERGY", "DCGM_FI_PROF_", "BANDWIDTH", "_BYTES"})
    if (n.find(part) != std::string::npos)
      return n.find("TEMP") == std::string::npos && n.find("CLOCK") == std::string::npos;
  return false;
}

DcgmPageAuditor::DcgmPageAuditor(double threshold, size_t max_line_bytes)
    : threshold_(threshold),
      stream_({.sample = [this](PromSample&& s) -> Expected<void> {
                 Add(s);
                 return {};
               },
               .type = nullptr,
               .check_repeats = IsAdditiveDcgmMetric},
              max_line_bytes) {}

Expected<void> DcgmPageAuditor::Feed(std::string_view chunk) { return stream_.Feed(chunk); }

Expected<DcgmAudit> DcgmPageAuditor::Finish() {
  if (auto end = stream_.Finish(); !end) return tl::unexpected(end.error());
  return Summary();
}

void DcgmPageAuditor::Add(const PromSample& s) {
  ++out_.samples;
  if (!IsAdditiveDcgmMetric(s.name)) return;
  // NaN, ±Inf or a negative amount is not usage: the sample is unknown, not part of a sum.
  if (!std::isfinite(s.value) || s.value < 0) {
    if (out_.invalid_lines.size() < 5) out_.invalid_lines.push_back(s.line);
    ++out_.invalid_samples;
    return;
  }
  ++out_.usable_samples;
  const GpuKey key{First(s.labels, {"Hostname", "hostname"}), First(s.labels, {"UUID", "uuid"}),
                   First(s.labels, {"gpu"}), First(s.labels, {"GPU_I_ID"})};
  auto& g = gpus_[key];
  if (g.model.empty()) g.model = First(s.labels, {"modelName"});
  auto& m = g.metrics[s.name];
  m.metric = s.name;
  const std::string pod = First(s.labels, {"pod", "pod_name"});
  if (pod.empty()) {
    m.device_series = true;
    m.device_value = std::max(m.device_value, s.value);
    return;
  }
  vgpu_ = vgpu_ || !First(s.labels, {"vgpu"}).empty();
  g.pods.insert(First(s.labels, {"namespace", "pod_namespace"}) + "/" + pod);
  ++m.pod_series;
  m.pods_sum += s.value;
  g.copies_max[s.name] = std::max(g.copies_max[s.name], s.value);
}

DcgmAudit DcgmPageAuditor::Summary() {
  DcgmAudit out = std::move(out_);
  bool device_beside_pods = false;
  for (auto& [key, g] : gpus_) {
    GpuAudit a;
    std::tie(a.host, a.uuid, a.gpu, a.mig_instance) = key;
    a.model = g.model;
    a.pods.assign(g.pods.begin(), g.pods.end());
    for (auto& [name, m] : g.metrics) {
      if (m.pod_series == 0) continue;
      device_beside_pods = device_beside_pods || m.device_series;
      if (!m.device_series) m.device_value = g.copies_max[name];
      m.factor = m.device_value > 0 ? m.pods_sum / m.device_value : 0;
      a.worst_factor = std::max(a.worst_factor, m.factor);
      a.inflated = a.inflated || m.factor > threshold_;
      a.metrics.push_back(m);
    }
    if (a.metrics.empty()) continue;
    ++out.gpus_with_pods;
    out.gpus.push_back(std::move(a));
  }
  gpus_.clear();
  std::stable_sort(out.gpus.begin(), out.gpus.end(), [](const GpuAudit& x, const GpuAudit& y) {
    return x.worst_factor > y.worst_factor;
  });
  out.mode =
      vgpu_ ? "virtual GPUs (--kubernetes-virtual-gpus: a copy of each series per pod, vgpu label)"
      : device_beside_pods ? "per-process (per-pod series beside the device's)"
                           : "default (each GPU's series labelled with one pod)";
  return out;
}

DcgmAudit AuditDcgmPage(const PromPage& page, double threshold) {
  DcgmPageAuditor auditor(threshold);
  for (const auto& s : page.samples) auditor.Add(s);
  return *auditor.Finish();  // nothing was fed: the stream cannot fail
}

}  // namespace gpumeter::audit
