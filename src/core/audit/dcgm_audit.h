// Audits a dcgm-exporter /metrics page for per-pod series that add up to more than their GPU:
// the "300 %" that dashboards show when they sum dcgm-exporter's series by pod on shared GPUs
// (docs/guardrails.md). Series are grouped per GPU (host, UUID, gpu index, and MIG instance) and
// per metric; per-pod series (a `pod` or `pod_name` label) are summed and compared with the
// device's own series, or, where the exporter wrote none (its virtual-GPU mode copies the device
// value into every pod's series), with the value the copies carry. Only additive metrics are
// audited (utilization, memory used, power, energy, profiling activity, bytes): summing
// temperatures or clocks means nothing to begin with. Pure.
//
// A page is audited as it arrives (DcgmPageAuditor, over prom::PromStream): what it keeps is per
// GPU and metric (sums, the pods seen) and the additive series' names and labels (a repeated one
// would be summed twice), not the page: other families cost their parse, no memory.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/prom/prom_text.h"

namespace gpumeter::audit {

using prom::ParsePromText;
using prom::PromPage;
using prom::PromSample;

struct MetricInflation {
  std::string metric;
  double device_value = 0;     // the device's series, or the copies' value where there is none
  bool device_series = false;  // whether the page had a series without a pod for this GPU
  size_t pod_series = 0;       // per-pod series (a pod on several replicas or containers repeats)
  double pods_sum = 0;
  double factor = 0;  // pods_sum / device_value; 0 when the device value is 0
  bool operator==(const MetricInflation&) const = default;
};

struct GpuAudit {
  std::string host, uuid, gpu, mig_instance, model;
  std::vector<std::string> pods;         // namespace/pod seen on the GPU
  std::vector<MetricInflation> metrics;  // every additive metric with per-pod series
  double worst_factor = 0;
  bool inflated = false;  // some metric's per-pod sum exceeds the device by the threshold
  bool operator==(const GpuAudit&) const = default;
};

struct DcgmAudit {
  std::string mode;  // which dcgm-exporter mode the page looks like written in
  size_t samples = 0, gpus_with_pods = 0;
  // Samples of an additive dcgm-exporter metric with a finite value >= 0: what an audit checks.
  size_t usable_samples = 0;
  // Additive samples left out because their value was NaN, ±Inf or negative; the first lines.
  size_t invalid_samples = 0;
  std::vector<size_t> invalid_lines;
  std::vector<GpuAudit> gpus;  // every GPU with per-pod series, inflated first
  bool operator==(const DcgmAudit&) const = default;
};

// `threshold`: a factor above which a sum counts as inflated (1.01: 1 % over the device).
// Not thread-safe; not movable (its stream calls back into it).
class DcgmPageAuditor {
 public:
  explicit DcgmPageAuditor(double threshold = 1.01, size_t max_line_bytes = prom::kMaxLineBytes);
  DcgmPageAuditor(const DcgmPageAuditor&) = delete;
  DcgmPageAuditor& operator=(const DcgmPageAuditor&) = delete;

  // The next piece of the page's text, split anywhere; errors are the parser's ("line N: …", a
  // line over the cap, an additive series repeated). After one, every call returns it again.
  Expected<void> Feed(std::string_view chunk);
  // The page's end; the audit. Once.
  Expected<DcgmAudit> Finish();
  // One sample of a page already parsed (AuditDcgmPage); Feed hands each sample here.
  void Add(const PromSample& s);

 private:
  using GpuKey = std::tuple<std::string, std::string, std::string,
                            std::string>;  // host, uuid, gpu, MIG instance
  struct Acc {
    std::string model;
    std::set<std::string> pods;
    std::map<std::string, MetricInflation> metrics;
    std::map<std::string, double> copies_max;  // metric → the largest per-pod value
  };
  DcgmAudit Summary();

  double threshold_;
  DcgmAudit out_;
  std::map<GpuKey, Acc> gpus_;
  bool vgpu_ = false;
  prom::PromStream stream_;  // last: it calls Add, which uses the members above
};

// A page already parsed, every series checked for repeats (tests compare the two forms).
DcgmAudit AuditDcgmPage(const PromPage& page, double threshold = 1.01);

// True for the metric families whose per-pod values should add up to the device's.
bool IsAdditiveDcgmMetric(const std::string& name);

}  // namespace gpumeter::audit
