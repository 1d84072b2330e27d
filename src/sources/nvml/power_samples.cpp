// Board power per driver period (nvmlDeviceGetSamples, NVML_TOTAL_POWER_SAMPLES).
#include <algorithm>
#include <string>
#include <vector>

#include "sources/nvml/device_readers.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {
namespace {

constexpr int kMaxSizeRetries = 3;  // the buffer may grow between the size query and the read
constexpr double kMaxPlausibleWatts = 5000;  // a board reading above this is not a power sample

}  // namespace

// A value of another type than the one power comes in, a zero or absurd reading, a stamp at or
// before the window's start: not a sample (the driver's buffer can hand stale entries back).
void ReadPowerSamples(const DeviceRead& r) {
  constexpr Sym kCall = Sym::nvmlDeviceGetSamples;
  if (!r.nvml.Has<kCall>()) return;
  gpu::DeviceSample& dev = r.dev;
  // The same window as the per-process samples where there is one, so both cover the same
  // periods (a sample read last pass but past that pass's window is needed again now).
  uint64_t& newest_read = r.gpu.power_last_seen_us;
  const unsigned long long last_seen =
      dev.process_utilization_supported && dev.process_util_window_start_us
          ? dev.process_util_window_start_us
          : newest_read;
  nvmlValueType_t type{};
  unsigned int count = 0;
  nvmlSample_t* none = nullptr;
  nvmlReturn_t rc = r.Call<kCall>(r.h, NVML_TOTAL_POWER_SAMPLES, last_seen, &type, &count, none);
  std::vector<nvmlSample_t> buf;
  for (int a = 0; (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) && a < kMaxSizeRetries;
       ++a) {
    buf.assign(DriverListEntries(count, 8, 128), {});
    count = static_cast<unsigned int>(buf.size());
    rc = r.Call<kCall>(r.h, NVML_TOTAL_POWER_SAMPLES, last_seen, &type, &count, buf.data());
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) break;
  }
  if (rc == NVML_ERROR_NOT_FOUND) return;  // nothing newer than the last read
  if (!r.Check<kCall>(rc)) return;
  if (type != NVML_VALUE_TYPE_UNSIGNED_INT) {
    // Power comes in milliwatts as unsigned ints; any other type is a reply of the wrong shape.
    dev.errors.push_back({kNameOf<kCall>, NVML_ERROR_UNKNOWN,
                          "power samples of value type " + std::to_string(type) +
                              ", not unsigned int (milliwatts)"});
    return;
  }
  uint64_t newest = newest_read;
  for (unsigned int i = 0; i < count && i < buf.size(); ++i) {
    const double watts = buf[i].sampleValue.uiVal / 1000.0;
    if (buf[i].timeStamp <= last_seen || watts <= 0 || watts > kMaxPlausibleWatts) continue;
    dev.power_samples.push_back({buf[i].timeStamp, watts});
    newest = std::max<uint64_t>(newest, buf[i].timeStamp);
  }
  std::sort(dev.power_samples.begin(), dev.power_samples.end(),
            [](const gpu::PowerSample& a, const gpu::PowerSample& b) {
              return a.timestamp_us < b.timestamp_us;
            });
  newest_read = newest;
}

}  // namespace gpumeter::nvml
