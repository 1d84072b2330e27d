// nvmlDeviceGetSamples of the fake driver: board power per driver period.
#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/fake_nvml/fake_driver.h"
#include "sim/scenario/truth.h"

namespace gpumeter::fake {

// Samples newer than last_seen_us from the ring (kUtilBufferPeriods periods of kUtilPeriodS),
// stamped at each period's end with the period's mean power: the energy counter's rise over it.
// Power is sampled whatever the GPU runs (unlike per-process samples), MIG-enabled GPUs included;
// not on a MIG handle. Other sample types: NOT_SUPPORTED. A NULL buffer asks for the count.
nvmlReturn_t FakeDriver::Samples(nvmlDevice_t d, nvmlSamplingType_t type,
                                 unsigned long long last_seen_us, nvmlValueType_t* value_type,
                                 unsigned int* count, nvmlSample_t* samples) {
  if (!count || !value_type) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0 || type != NVML_TOTAL_POWER_SAMPLES) return NVML_ERROR_NOT_SUPPORTED;
  const auto& g = GpuOf(d);
  const double now_s = NowLocked();
  const long k_max = static_cast<long>(std::floor(now_s / kUtilPeriodS));
  const long k_min = std::max(k_max - kUtilBufferPeriods + 1, 1L);
  std::vector<nvmlSample_t> fresh;
  for (long k = k_min; k <= k_max; ++k) {
    const double end = static_cast<double>(k) * kUtilPeriodS;
    const unsigned long long ts = EpochUsLocked(end);
    if (ts <= last_seen_us) continue;
    const double joules = scenario::GpuEnergyJoulesAt(*scenario_, g, end) -
                          scenario::GpuEnergyJoulesAt(*scenario_, g, end - kUtilPeriodS);
    nvmlSample_t s{};
    s.timeStamp = ts;
    s.sampleValue.uiVal = static_cast<unsigned int>(std::lround(joules / kUtilPeriodS * 1000));
    fresh.push_back(s);
  }
  *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
  // A bad-value fault: the call succeeds and what it hands back is wrong.
  for (const auto& f : scenario_->faults) {
    if (f.kind != scenario::FaultKind::kBadValue || now_s < f.from_s ||
        (f.to_s && now_s >= *f.to_s) || (f.gpu_index && *f.gpu_index != g.index))
      continue;
    for (auto& sample : fresh) {
      if (f.bad_value == scenario::BadValue::kZero) sample.sampleValue.uiVal = 0;
      if (f.bad_value == scenario::BadValue::kHuge) sample.sampleValue.uiVal = 9'000'000;  // 9 kW
      if (f.bad_value == scenario::BadValue::kStale) sample.timeStamp = last_seen_us;
    }
    if (f.bad_value == scenario::BadValue::kType) *value_type = NVML_VALUE_TYPE_DOUBLE;
  }
  if (fresh.empty()) return NVML_ERROR_NOT_FOUND;
  if (!samples) {
    *count = static_cast<unsigned int>(fresh.size());
    return NVML_SUCCESS;
  }
  if (*count < fresh.size()) {
    *count = static_cast<unsigned int>(fresh.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(fresh.begin(), fresh.end(), samples);
  *count = static_cast<unsigned int>(fresh.size());
  return NVML_SUCCESS;
}

}  // namespace gpumeter::fake
