#include "core/audit/dcgm_audit.h"

#include <cmath>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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

DcgmAudit AuditDcgmPage(const PromPage& page, double threshold) {
  DcgmAudit out;
  out.samples = page.samples.size();
  using GpuKey = std::tuple<std::string, std::string, std::string,
                            std::string>;  // host, uuid, gpu, MIG instance
  struct Acc {
    std::string model;
    std::set<std::string> pods;
    std::map<std::string, MetricInflation> metrics;
    std::map<std::string, double> copies_max;  // metric → the largest per-pod value
  };
  std::map<GpuKey, Acc> gpus;
  bool vgpu = false, device_beside_pods = false;
  std::map<std::pair<GpuKey, std::string>, bool> device_seen;
  for (const auto& s : page.samples) {
    if (!IsAdditiveDcgmMetric(s.name)) continue;
    // NaN, ±Inf or a negative amount is not usage: the sample is unknown, not part of a sum.
    if (!std::isfinite(s.value) || s.value < 0) {
      if (out.invalid_lines.size() < 5) out.invalid_lines.push_back(s.line);
      ++out.invalid_samples;
      continue;
    }
    ++out.usable_samples;
    const GpuKey key{First(s.labels, {"Hostname", "hostname"}), First(s.labels, {"UUID", "uuid"}),
                     First(s.labels, {"gpu"}), First(s.labels, {"GPU_I_ID"})};
    auto& g = gpus[key];
    if (g.model.empty()) g.model = First(s.labels, {"modelName"});
    auto& m = g.metrics[s.name];
    m.metric = s.name;
    const std::string pod = First(s.labels, {"pod", "pod_name"});
    if (pod.empty()) {
      m.device_series = true;
      m.device_value = std::max(m.device_value, s.value);
      continue;
    }
    vgpu = vgpu || !First(s.labels, {"vgpu"}).empty();
    g.pods.insert(First(s.labels, {"namespace", "pod_namespace"}) + "/" + pod);
    ++m.pod_series;
    m.pods_sum += s.value;
    g.copies_max[s.name] = std::max(g.copies_max[s.name], s.value);
  }
  for (auto& [key, g] : gpus) {
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
      a.inflated = a.inflated || m.factor > threshold;
      a.metrics.push_back(m);
    }
    if (a.metrics.empty()) continue;
    ++out.gpus_with_pods;
    out.gpus.push_back(std::move(a));
  }
  std::stable_sort(out.gpus.begin(), out.gpus.end(), [](const GpuAudit& x, const GpuAudit& y) {
    return x.worst_factor > y.worst_factor;
  });
  out.mode =
      vgpu ? "virtual GPUs (--kubernetes-virtual-gpus: a copy of each series per pod, vgpu label)"
      : device_beside_pods ? "per-process (per-pod series beside the device's)"
                           : "default (each GPU's series labelled with one pod)";
  return out;
}

}  // namespace gpumeter::audit
