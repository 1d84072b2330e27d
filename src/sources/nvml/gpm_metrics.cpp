// GPM metrics of a GPU or a MIG GPU instance between two passes: SM activity and DRAM bandwidth.
#include <algorithm>
#include <memory>
#include <string>

#include "sources/nvml/gpm_sample.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {
namespace {

// How far above 100 % a GPM percentage may read and still be 100 % (rounding of a counter ratio).
constexpr double kGpmRounding = 1e-6;

// A GPM percentage as a ratio in [0, 1]; unknown where the metric failed or is out of range.
std::optional<double> Ratio(const nvmlGpmMetric_t& m) {
  // A fully busy unit's ratio of counters can come out a rounding step above 100: that is 100,
  // not an out-of-range reading (which left a saturated instance's activity unknown).
  if (m.nvmlReturn != NVML_SUCCESS || !(m.value >= 0) || !(m.value <= 100 + kGpmRounding))
    return std::nullopt;  // NaN fails both: unknown
  return std::min(m.value, 100.0) / 100.0;
}

}  // namespace

NvmlGpuSource::GpmReading NvmlGpuSource::GpmActivity(const std::string& key, nvmlDevice_t h,
                                                     std::optional<unsigned int> gi,
                                                     gpu::DeviceSample& dev) {
  if (!caps_.gpm) return {};
  const NvmlApi& api = lib_->api();
  auto sup = gpm_supported_.find(dev.uuid);
  if (sup == gpm_supported_.end()) {
    nvmlGpmSupport_t s{};
    s.version = 1;  // NVML_GPM_SUPPORT_VERSION is a plain 1, not size-encoded
    const nvmlReturn_t rc =
        Call("nvmlGpmQueryDeviceSupport", [&] { return api.nvmlGpmQueryDeviceSupport(h, &s); });
    sup = gpm_supported_.emplace(dev.uuid, rc == NVML_SUCCESS && s.isSupportedDevice).first;
  }
  if (!sup->second) return {};
  nvmlGpmSample_t raw = nullptr;
  if (!Check(dev, "nvmlGpmSampleAlloc",
             Call("nvmlGpmSampleAlloc", [&] { return api.nvmlGpmSampleAlloc(&raw); })))
    return {};
  auto sample = std::make_unique<GpmSample>(api, raw);
  const nvmlReturn_t rc =
      gi ? Call("nvmlGpmMigSampleGet", [&] { return api.nvmlGpmMigSampleGet(h, *gi, raw); })
         : Call("nvmlGpmSampleGet", [&] { return api.nvmlGpmSampleGet(h, raw); });
  if (!Check(dev, gi ? "nvmlGpmMigSampleGet" : "nvmlGpmSampleGet", rc)) return {};
  GpmReading result;
  auto prev = gpm_prev_.find(key);
  if (prev != gpm_prev_.end()) {
    auto get = std::make_unique<nvmlGpmMetricsGet_t>();
    *get = {};
    get->version = 1;  // NVML_GPM_METRICS_GET_VERSION
    get->numMetrics = 2;
    get->sample1 = prev->second->get();  // older first, as DCGM does
    get->sample2 = raw;
    get->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
    get->metrics[1].metricId = NVML_GPM_METRIC_DRAM_BW_UTIL;
    if (Check(dev, "nvmlGpmMetricsGet",
              Call("nvmlGpmMetricsGet", [&] { return api.nvmlGpmMetricsGet(get.get()); }))) {
      // Each metric answers for itself: a driver may serve SM_UTIL and not DRAM_BW_UTIL.
      result.sm = Ratio(get->metrics[0]);
      result.dram_bw = Ratio(get->metrics[1]);
    }
  }
  gpm_prev_[key] = std::move(sample);
  return result;
}

}  // namespace gpumeter::nvml
