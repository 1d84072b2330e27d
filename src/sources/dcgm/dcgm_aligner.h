// Turns the exporter's interval averages into a busy fraction for each of the agent's intervals,
// and writes it into the GPU snapshot (DeviceSample / MigInstanceSample::dcgm_gr_active) where
// the attribution core reads activity (core/attribution/observe.h).
//
// dcgm-exporter publishes, every collection (30 s by default), the mean activity over the
// collection just ended. Used as a gauge it lags by a collection, so a container's
// compute-seconds would be off by (activity change) × 30 s. The aligner instead keeps, per unit,
// the busy-seconds the exporter's means account for up to the last collection seen
// (Σ mean × time between collections), extrapolates the latest mean to now, and gives each
// interval what brings the busy-seconds attributed so far to that figure, within [0, 1]. Totals
// then follow the exporter's integral; a single interval can be off by up to the last change in
// activity until the next collection corrects it.
//
// On the pass that sees a new collection of every unit of a GPU, it also sets the GPU's
// dcgm_window: the collection's mean activity and the board's mean power since the previous one
// (energy counter), so the idle-power fit gets pairs measured over the same window.
//
// A unit whose series is missing or stale has unknown activity and loses its history (the gap is
// never filled in later). Pure (times are given); not thread-safe: the sampling thread owns it.
#pragma once

#include <map>
#include <optional>

#include "domain/gpu_types.h"
#include "sources/dcgm/dcgm_source.h"

namespace gpumeter::dcgm {

class DcgmAligner {
 public:
  // Sets the DCGM activity of every GPU and MIG instance of `snapshot` (at `now_s`, the clock the
  // source's seen_s uses) for the interval since the previous call; units without a fresh series
  // or without a previous call are left unknown.
  void Apply(const DcgmReading& reading, double now_s, gpu::GpuSnapshot& snapshot);

  // The same for one unit; exposed for tests.
  std::optional<double> Step(const DcgmKey& key, const DcgmSeries* series, double now_s);

 private:
  struct Unit {
    double known_until_s = 0;  // the last collection seen
    double known_busy_s = 0;   // busy-seconds the exporter's means give up to known_until_s
    double value = 0;          // the latest mean, extrapolated past known_until_s
    double attributed_s = 0;   // busy-seconds given to intervals so far
    double last_pass_s = 0;
  };
  struct GpuWindow {
    double collection_s = 0;  // the newest collection seen of the GPU's series
    double pass_s = 0;        // the pass that saw it
    std::optional<double> energy_joules;
  };
  // The GPU's DCGM collection window ending at this pass, when it saw a new one (see
  // DeviceSample::dcgm_window); `activity` of the new collection, slice-weighted.
  std::optional<gpu::ActivityWindow> Window(const gpu::DeviceSample& d, double collection_s,
                                            std::optional<double> activity, double now_s);

  std::map<DcgmKey, Unit> units_;
  std::map<std::string, GpuWindow> gpus_;  // by GPU UUID
};

}  // namespace gpumeter::dcgm
