#include "core/guard/device_checks.h"

#include <fmt/format.h>

#include <vector>

namespace gpumeter::guard::detail {
namespace {

std::string Name(const domain::Owner& o) { return o.ns + "/" + o.pod + "/" + o.container; }

// "GPU-… (NVIDIA H100 80GB HBM3, MIG instance MIG-…)": what a lost GPU may no longer say is left
// out.
std::string GpuName(const UnitView& u) {
  std::vector<std::string> about;
  if (!u.model.empty()) about.push_back(u.model);
  if (u.uuid != u.gpu_uuid) about.push_back("MIG instance " + u.uuid);
  return u.gpu_uuid + (about.empty() ? "" : fmt::format(" ({})", fmt::join(about, ", ")));
}

void ForHolders(const UnitView& u, Kind kind, const std::string& what, const DeviceRaiser& raise) {
  if (u.holders.empty()) {
    raise(kind, u, nullptr, what + "; no container held it");
    return;
  }
  for (const auto& h : u.holders)
    raise(kind, u, &h.owner,
          fmt::format("{}; {} held {:.0f} % of it", what, Name(h.owner), 100 * h.share));
}

std::string SlowdownReasons(uint64_t bits) {
  std::vector<std::string> names;
  for (const auto& r : gpu::ClockEventReasons())
    if (r.slowdown && (bits & r.bit)) names.push_back(r.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

void CheckHealth(const UnitView& u, const DeviceRaiser& raise) {
  const auto& h = u.health;
  if (h.ecc_uncorrected && *h.ecc_uncorrected > 0)
    ForHolders(u, Kind::kEccUncorrectable,
               fmt::format("GPU {} reported {} uncorrectable ECC error(s) since the driver loaded "
                           "(gpumeter_gpu_ecc_errors_total): data in its memory may be corrupt, "
                           "and the work on it may have failed or may give wrong results; drain "
                           "the GPU and reset it",
                           GpuName(u), *h.ecc_uncorrected),
               raise);
  if (h.remapped_rows && h.remapped_rows->failed)
    ForHolders(u, Kind::kRowRemapFailed,
               fmt::format("GPU {}: a memory row remap failed (no spare row left; "
                           "gpumeter_gpu_row_remap_failed): the GPU should be replaced",
                           GpuName(u)),
               raise);
  else if (h.remapped_rows && h.remapped_rows->pending)
    ForHolders(
        u, Kind::kRowRemapPending,
        fmt::format("GPU {}: a memory row remap waits for the next GPU reset (rows remapped: {} "
                    "for uncorrectable errors, {} for correctable; "
                    "gpumeter_gpu_row_remap_pending): drain the GPU and reset it",
                    GpuName(u), h.remapped_rows->uncorrectable, h.remapped_rows->correctable),
        raise);
  if (h.clock_event_reasons)
    if (const std::string reasons = SlowdownReasons(*h.clock_event_reasons); !reasons.empty())
      ForHolders(u, Kind::kClocksSlowdown,
                 fmt::format("GPU {} runs slower than set: its clocks are held down ({}; "
                             "gpumeter_gpu_clock_event_reason), so the work on it takes longer "
                             "and costs more; check cooling and power",
                             GpuName(u), reasons),
                 raise);
}

}  // namespace

void CheckDevices(const PassView& pass, const DeviceRaiser& raise) {
  for (const auto& u : pass.units) {
    if (u.gpu_lost) {
      ForHolders(u, Kind::kGpuLost,
                 fmt::format("GPU {} fell off the bus (NVML_ERROR_GPU_IS_LOST): its readings "
                             "stopped, and the work on it has stopped or is failing; the GPU "
                             "needs a reset (or the node a reboot)",
                             GpuName(u)),
                 raise);
      continue;  // a lost GPU reports nothing else
    }
    CheckHealth(u, raise);
  }
}

}  // namespace gpumeter::guard::detail
