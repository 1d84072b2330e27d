// GPM metrics of a GPU or a MIG GPU instance between two passes: SM activity and DRAM bandwidth.
#include <algorithm>
#include <memory>

#include "sources/nvml/device_readers.h"
#include "sources/nvml/gpm_sample.h"

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

GpmReading GpmActivity(const DeviceRead& r, std::optional<unsigned int> gi) {
  if (!r.gpu.gpm_supported) {
    nvmlGpmSupport_t s{};
    s.version = 1;  // NVML_GPM_SUPPORT_VERSION is a plain 1, not size-encoded
    const nvmlReturn_t rc = r.Call<Sym::nvmlGpmQueryDeviceSupport>(r.h, &s);
    r.gpu.gpm_supported = rc == NVML_SUCCESS && s.isSupportedDevice;
  }
  if (!*r.gpu.gpm_supported) return {};
  nvmlGpmSample_t raw = nullptr;
  if (!r.Ok<Sym::nvmlGpmSampleAlloc>(&raw)) return {};
  auto sample = std::make_unique<GpmSample>(r.api(), raw);
  const bool got =
      gi ? r.Ok<Sym::nvmlGpmMigSampleGet>(r.h, *gi, raw) : r.Ok<Sym::nvmlGpmSampleGet>(r.h, raw);
  if (!got) return {};
  GpmReading result;
  std::unique_ptr<GpmSample>& prev = gi ? r.gpu.gpm_prev_by_instance[*gi] : r.gpu.gpm_prev;
  if (prev) {
    auto get = std::make_unique<nvmlGpmMetricsGet_t>();
    *get = {};
    get->version = 1;  // NVML_GPM_METRICS_GET_VERSION
    get->numMetrics = 2;
    get->sample1 = prev->get();  // older first, as DCGM does
    get->sample2 = raw;
    get->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
    get->metrics[1].metricId = NVML_GPM_METRIC_DRAM_BW_UTIL;
    if (r.Ok<Sym::nvmlGpmMetricsGet>(get.get())) {
      // Each metric answers for itself: a driver may serve SM_UTIL and not DRAM_BW_UTIL.
      result.sm = Ratio(get->metrics[0]);
      result.dram_bw = Ratio(get->metrics[1]);
    }
  }
  prev = std::move(sample);
  return result;
}

}  // namespace gpumeter::nvml
