// The monitoring calls NVML tools make (nvtop 3.0.1 needs 25 symbols; nvitop more), so a user can
// point their usual tool at the simulated node. Each value is derived from the scenario at the
// fake's time: clocks, temperature, PCIe traffic and the link's speed follow the GPU's load and
// its health events (a thermal slowdown heats the GPU and halves its clocks); the board's fixed
// facts (PCI device ID, maximum clocks, PCIe generation) come from a small table of the models
// the scenarios use. Temperatures, thresholds and traffic are plausible, not a board's measured
// figures. On a MIG device handle each call is NOT_SUPPORTED (undocumented there; tools ask the
// parent); encoder and decoder utilization are NOT_SUPPORTED while MIG is on, as on real boards.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <cstring>
#include <string>

#include "sim/fake_nvml/fake_driver.h"
#include "sim/scenario/health_faults.h"

namespace gpumeter::fake {
namespace {

struct Board {
  const char* match;       // a substring of the model name
  unsigned int device_id;  // PCI device ID (vendor 0x10DE)
  unsigned int max_graphics_mhz, max_memory_mhz;
  unsigned int pcie_gen;  // the link's generation (16 lanes on all of them)
  bool fan;               // boards with a fan of their own (data-center boards have none)
};

const Board& BoardOf(const std::string& model) {
  static const Board kBoards[] = {
      {"H200", 0x2335, 1980, 3201, 5, false},
      {"H100 PCIe", 0x2331, 1755, 1593, 5, false},
      {"H100", 0x2330, 1980, 2619, 5, false},
      {"A100-SXM4-80GB", 0x20B2, 1410, 1593, 4, false},
      {"A100-SXM4-40GB", 0x20B0, 1410, 1215, 4, false},
      {"A100", 0x20B5, 1410, 1512, 4, false},
      {"A30", 0x20B7, 1440, 1215, 4, false},
      {"L40S", 0x26B9, 2520, 2250, 4, false},
      {"L40", 0x26B5, 2490, 2250, 4, false},
      {"L4", 0x27B8, 2040, 6251, 4, false},
      {"V100-SXM2-32GB", 0x1DB5, 1530, 877, 3, false},
      {"V100", 0x1DB1, 1530, 877, 3, false},
      {"T4", 0x1EB8, 1590, 5001, 3, false},
      {"RTX", 0x2684, 2520, 10501, 4, true},
  };
  static const Board kOther{"", 0x0000, 1500, 1500, 4, true};
  for (const auto& b : kBoards)
    if (model.find(b.match) != std::string::npos) return b;
  return kOther;
}

constexpr unsigned int kIdleGraphicsMhz = 345;
constexpr unsigned int kShutdownC = 92, kSlowdownC = 89, kMemMaxC = 95, kGpuMaxC = 87;
constexpr unsigned long long kSlowdownBits =
    nvmlClocksThrottleReasonHwSlowdown | nvmlClocksEventReasonSwThermalSlowdown |
    nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown;
constexpr unsigned long long kThermalBits =
    nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown;

}  // namespace

FakeDriver::Load FakeDriver::LoadLocked(const scenario::Gpu& g) const {
  const double t = NowLocked();
  Load l;
  l.busy = std::clamp(scenario::GpuBusyAt(*scenario_, g, t), 0.0, 1.0);
  const double span = g.power.max_watts - g.power.idle_watts;
  l.power_fraction =
      span > 0
          ? std::clamp((scenario::GpuPowerWattsAt(*scenario_, g, t) - g.power.idle_watts) / span,
                       0.0, 1.0)
          : l.busy;
  l.reasons = scenario::HealthAt(*scenario_, g.index, t).clock_event_reasons;
  return l;
}

nvmlReturn_t FakeDriver::PciInfo(nvmlDevice_t d, nvmlPciInfo_t* pci, size_t bytes) {
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const auto& g = GpuOf(d);
  nvmlPciInfo_t out{};
  // One bus per GPU, as on an 8-GPU board; 15 to a domain, so no two GPUs share a bus ID.
  out.domain = g.index / 15;
  out.bus = 0x18 + 0x10 * (g.index % 15);
  out.device = 0;
  out.pciDeviceId = BoardOf(g.model).device_id << 16 | 0x10DE;
  out.pciSubSystemId = 0x16C110DE;
  // Bus numbers stay below 0x100 and domains below 0x10000 (index / 15): the IDs fit.
  const auto put = [](char* dst, size_t size, const std::string& text) {
    std::memcpy(dst, text.c_str(), std::min(size, text.size() + 1));
    dst[size - 1] = '\0';
  };
  put(out.busIdLegacy, sizeof out.busIdLegacy,
      fmt::format("{:04X}:{:02X}:{:02X}.0", out.domain, out.bus, out.device));
  put(out.busId, sizeof out.busId,
      fmt::format("{:08X}:{:02X}:{:02X}.0", out.domain, out.bus, out.device));
  // The older entry points write only what every layout shares: a caller's 52-byte struct of
  // drivers before 415.13 is not overrun.
  std::memcpy(pci, &out, std::min(bytes, sizeof out));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::Temperature(nvmlDevice_t d, unsigned int sensor, unsigned int* celsius) {
  if (!celsius || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const Load l = LoadLocked(GpuOf(d));
  unsigned int c = 30 + static_cast<unsigned int>(std::lround(50 * l.power_fraction));
  if (l.reasons & kThermalBits) c = std::max(c, kSlowdownC + 1);  // held down for heat: hot
  *celsius = c;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::TemperatureThreshold(nvmlDevice_t d, unsigned int type,
                                              unsigned int* celsius) {
  if (!celsius || type > NVML_TEMPERATURE_THRESHOLD_GPS_CURR) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  switch (type) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      *celsius = kShutdownC;
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      *celsius = kSlowdownC;
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      *celsius = kMemMaxC;
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      *celsius = kGpuMaxC;
      return NVML_SUCCESS;
    default:  // acoustic and GPS thresholds: GeForce and newer boards
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

// Busy: the maximum clock (85 % of it at the power cap, half in a slowdown); idle: the idle
// graphics clock. Memory runs at its maximum throughout.
nvmlReturn_t FakeDriver::Clock(nvmlDevice_t d, unsigned int type, bool max, unsigned int* mhz) {
  if (!mhz || type > NVML_CLOCK_VIDEO) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const auto& g = GpuOf(d);
  const Board& b = BoardOf(g.model);
  const unsigned int top =
      type == NVML_CLOCK_MEM
          ? b.max_memory_mhz
          : (type == NVML_CLOCK_VIDEO ? b.max_graphics_mhz * 4 / 5 : b.max_graphics_mhz);
  if (max || type == NVML_CLOCK_MEM) {
    *mhz = top;
    return NVML_SUCCESS;
  }
  const Load l = LoadLocked(g);
  double f = l.busy > 0 ? 1.0 : static_cast<double>(kIdleGraphicsMhz) / b.max_graphics_mhz;
  if (l.busy > 0 && (l.reasons & nvmlClocksEventReasonSwPowerCap)) f = 0.85;
  if (l.reasons & kSlowdownBits) f = std::min(f, 0.5);
  *mhz = static_cast<unsigned int>(std::lround(top * f));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::FanSpeed(nvmlDevice_t d, unsigned int* percent) {
  if (!percent) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || !BoardOf(g.model).fan) return NVML_ERROR_NOT_SUPPORTED;
  *percent = 30 + static_cast<unsigned int>(std::lround(50 * LoadLocked(g).power_fraction));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::EnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  if (!mw) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *mw = static_cast<unsigned int>(std::lround(GpuOf(d).power.max_watts * 1000));
  return NVML_SUCCESS;
}

// An idle link drops to generation 1 to save power, as real boards do; width stays 16.
nvmlReturn_t FakeDriver::PcieLink(nvmlDevice_t d, bool width, bool max, unsigned int* value) {
  if (!value) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const auto& g = GpuOf(d);
  if (width) {
    *value = 16;
    return NVML_SUCCESS;
  }
  *value = max || LoadLocked(g).busy > 0 ? BoardOf(g.model).pcie_gen : 1;
  return NVML_SUCCESS;
}

// KB/s over the driver's 20 ms window: up to 2 GB/s in (inputs) and 0.5 GB/s out with the load.
nvmlReturn_t FakeDriver::PcieThroughput(nvmlDevice_t d, unsigned int counter, unsigned int* kbps) {
  if (!kbps || counter > NVML_PCIE_UTIL_RX_BYTES) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const double busy = LoadLocked(GpuOf(d)).busy;
  const double peak_kbps = counter == NVML_PCIE_UTIL_RX_BYTES ? 2e6 : 0.5e6;
  *kbps = static_cast<unsigned int>(std::lround(peak_kbps * busy));
  return NVML_SUCCESS;
}

// No scenario encodes or decodes video: 0 % over the driver's 1/6 s period.
nvmlReturn_t FakeDriver::CodecUtilization(nvmlDevice_t d, unsigned int* percent,
                                          unsigned int* period_us) {
  if (!percent || !period_us) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0 || GpuOf(d).mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
  *percent = 0;
  *period_us = static_cast<unsigned int>(std::lround(kUtilPeriodS * 1e6));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::CudaDriverVersion(int* version) {
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  *version = scenario_->driver.cuda_version;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::HandleByUuid(const char* uuid, nvmlDevice_t* out) {
  if (!uuid || !out) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  for (auto& h : handles_)
    if (UnitUuid(&h) == uuid) {
      if (h.mig < 0 && scenario_->gpus[h.gpu].forbidden) return NVML_ERROR_NO_PERMISSION;
      *out = &h;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

// A compute node runs no graphics work: an empty list, at any capacity (on a MIG handle too, as
// process lists answer there).
nvmlReturn_t FakeDriver::GraphicsProcesses(nvmlDevice_t d, unsigned int* count) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  (void)GpuOf(d);
  *count = 0;
  return NVML_SUCCESS;
}

}  // namespace gpumeter::fake
