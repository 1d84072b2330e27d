// `gpumeter simulate`'s output: a run's scores (sim/score) with its settings and what it measured,
// as a table for people or as one JSON document to compare runs (camelCase, as all gpumeter
// JSON). Both write to stdout; the table also logs a warning per container whose memory is
// outside the bound. Not thread-safe (they write to stdout).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/attribution/accountant.h"
#include "sim/scenario/model.h"
#include "sim/score/simulate_score.h"

namespace gpumeter::app {

// The run's settings as the output names them (from simulate's options): the driver profile,
// the noise and its seed, the step and the drain interval (seconds), where the run started
// (scenario seconds).
struct SimulateRun {
  std::string driver_profile, noise;
  uint64_t seed = 1;
  double step_s = 1, drain_s = 0, from_s = 0;
};

// What the run measured: the scores, the intervals, the lost GPU-intervals.
struct SimulateMeasured {
  ScoreReport report;
  size_t intervals = 0, unit_intervals = 0, lost_intervals = 0;
  std::optional<attribution::Accountant::IdlePower> idle;  // of the first MIG GPU, if any
  double samples_uncovered_s = 0;  // Σ gpumeter_process_samples_uncovered_seconds_total
  double held_at_end_s = 0;        // seconds of DCGM-fed intervals still held when the run ended
};

// The run's line, the per-mode error table, conservation, memory bound and the verdict; `end`:
// the scenario second the run ended at.
void PrintSimulateTable(const SimulateRun& o, const scenario::Scenario& s,
                        const SimulateMeasured& m, double end);
// The same scores as one JSON document, per mode and per container.
void PrintSimulateJson(const SimulateRun& o, const scenario::Scenario& s, const SimulateMeasured& m,
                       double end);

}  // namespace gpumeter::app
