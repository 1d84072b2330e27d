// Turns the exporter's interval means into the exact mean activity of any of the agent's past
// intervals, once the collections that cover it have been seen.
//
// dcgm-exporter publishes, every collection (30 s by default), the mean activity over the
// collection just ended. Used as a gauge it lags by a collection; extrapolated to now it is wrong
// both ways at every change (activity that stopped goes on being counted, a start after an idle
// collection is caught up late) and counters cannot take it back. The aligner therefore keeps,
// per unit, the collections seen (their end, as the time the agent first saw them, and their
// mean) and answers, for an interval, the time-weighted mean of the collections that cover it —
// or "pending" while the interval reaches past the last collection seen. The pipeline holds a
// DCGM-fed GPU's intervals in the accountant until then (DeviceSample::dcgm_held): attribution is
// exact per collection and late by at most one collection interval plus the source's poll period.
//
// On the pass that sees a new collection of every unit of a GPU, Apply also sets the GPU's
// dcgm_window: the collection's mean activity and the board's mean power since the previous one
// (the energy counter at both collections' times, placed between the passes around them by the
// board's power samples where they cover the pass, else linearly),
// so the idle-power fit gets pairs measured over nearly the same window at any step.
//
// A unit whose series is stale, or missing for longer than 90 s (a failed read empties the
// reading: one failure does not lose what is pending), loses its history: intervals not resolved
// yet, and those before its next first collection, are unknown (never 0, never filled in later).
// Pure (times are given, on the clock of the snapshots' timestamps); not thread-safe: the sampling
// thread owns it.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "domain/gpu_types.h"
#include "sources/dcgm/dcgm_source.h"

namespace gpumeter::dcgm {

// A unit's mean activity over a past interval, as far as the collections seen tell it.
struct Coverage {
  bool pending = false;        // the interval reaches past the last collection seen
  std::optional<double> mean;  // [0, 1]; unset (and not pending): unknown
  // While pending: the end of the last collection seen (the unit's history start before any),
  // up to which an interval could be told now.
  std::optional<double> covered_until_s = std::nullopt;
};

class DcgmAligner {
 public:
  // Records the collections `reading` shows at `now_s`, marks every GPU of `snapshot` whose
  // activity comes from DCGM (a unit with a fresh series and no NVML activity) as dcgm_held, and
  // sets dcgm_window where due. Units no longer in the snapshot or the reading start afresh.
  void Apply(const DcgmReading& reading, double now_s, gpu::GpuSnapshot& snapshot);

  // The mean activity of `key` over (from_s, to_s]: pending while to_s is past its last
  // collection; unknown before its history starts, after it was lost, or for an unknown unit.
  Coverage Mean(const DcgmKey& key, double from_s, double to_s) const;

  // The same for one unit's series at `now_s`, as Apply does it; exposed for tests.
  void Record(const DcgmKey& key, const DcgmSeries* series, double now_s);

 private:
  struct Unit {
    double start_s = 0;  // the first collection seen: history starts here
    // (end_s, mean) of each collection since, oldest first; each covers (previous end, end].
    std::deque<std::pair<double, double>> collections;
    std::optional<double> missing_since_s;  // its series has been missing from reads since
  };
  struct GpuWindow {
    double collection_s = 0;              // the newest collection seen of the GPU's series
    std::optional<double> energy_joules;  // the energy counter then (interpolated)
    double pass_s = 0;                    // the latest pass, and its energy counter
    std::optional<double> pass_energy;
    // Its power samples: one stamped between that snapshot and its read came with it.
    std::vector<gpu::PowerSample> pass_samples;
  };
  // The GPU's DCGM collection window ending at this pass, when it saw a new one (see
  // DeviceSample::dcgm_window); `activity` of the new collection, slice-weighted.
  std::optional<gpu::ActivityWindow> Window(const gpu::DeviceSample& d, double collection_s,
                                            std::optional<double> activity, double now_s);

  std::map<DcgmKey, Unit> units_;
  std::map<std::string, GpuWindow> gpus_;  // by GPU UUID
};

}  // namespace gpumeter::dcgm
