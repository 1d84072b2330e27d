// The scoring of `gpumeter simulate`: each interval the node pipeline accounted, unit by unit,
// against the scenario's ground truth over the same interval, per container (namespace/pod/
// container on a unit). Units: seconds, byte-seconds, joules; errors in percentage points of the
// run (compute) or relative (memory, energy).
//
// What sampling cannot see is not scored as error (docs/attribution.md, "Accuracy"):
// - A unit's interval that overlaps a fault window of the scenario (a call error or a lost GPU
//   hides processes or readings) or that the pipeline accounted as lost is *unknown*: neither
//   truth nor estimate is scored there, and its seconds are reported per container. A failing
//   power or energy call hides only the energy: those intervals' energy is not scored.
// - Where the unit's activity was unknown (no per-process samples, no GPM, no DCGM) compute and
//   energy are unknown for those seconds: reported, and the verdict says the targets are not met
//   (the harness cannot tell how far off the split is).
// - Memory: the bound is, per interval, |trapezoid of the true memory at the two sample instants
//   − its exact integral| — what any sampler seeing only those instants misses: a process start or
//   exit between samples, a growth that reaches its cap. Within it, memory is judged exact.
// Estimated compute splits (a rule for which domain::IsComputeEstimate holds: MPS thread share,
// an even split, extrapolation over lost samples) are scored on rows of their own
// ("<mode>/estimate"); there the targets judge the split's total per unit against the truth, and
// every estimated container-interval against its bound (attribution::Row::compute_bound_seconds):
// the truth must lie within compute ± bound in ≥ 95 % of them. The bound's mean width is
// reported, so a bound as wide as the unit shows.
// Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/attribution/attribute.h"
#include "sim/scenario/model.h"

namespace gpumeter::app {

struct Amounts {
  double compute_s = 0, memory_byte_s = 0, energy_j = 0;
  double memory_busy_s = 0;  // memory busy time: seconds of the unit's memory kept busy
};

// One container on one unit, over the run.
struct ContainerScore {
  std::string unit, container;  // unit UUID, "namespace/pod/container"
  std::string group;            // the mode it is scored under, e.g. "time-slicing", "mps/estimate"
  bool estimate = false;        // its compute split came from an estimating rule
  Amounts est, truth;           // over the scored (known) seconds
  Amounts energy_est, energy_truth;  // energy over the intervals where the unit's energy was known
  // Measured energy over every interval whose unit energy was known, its activity known or not
  // (where it is not, only an instance's idle power is placed: on its holders). Not scored.
  double energy_any_activity_j = 0;
  double naive_compute_s = 0;  // every holder shown the whole unit's busy value
  double memory_bound_byte_s = 0;
  bool scored = false;           // had known seconds (in truth or a row): counted in its group
  double unknown_s = 0;          // in fault windows or lost: not scored
  double compute_unknown_s = 0;  // activity unknown outside faults: not scored, fails the verdict
  // Intervals whose row's compute was an estimate (its rule), judged against its bound: how many,
  // how many had the truth within compute ± bound, and Σ bound (seconds) over them.
  int bound_n = 0, bound_within = 0;
  double bound_s = 0;
  double bound_width_pp_sum = 0;  // Σ over them of bound / interval × 100
  // Memory busy time (scored like compute over the intervals where the unit's was known): seconds
  // unknown outside faults, and estimated intervals judged against their bound as compute's are.
  double memory_busy_unknown_s = 0;
  int traffic_bound_n = 0, traffic_bound_within = 0;
  double traffic_bound_width_pp_sum = 0;
  // Energy split estimated (domain::IsEnergyEstimate: a DCGM collection's activity profile):
  // such a container's energy is judged per interval against Row::energy_bound_joules instead of
  // the energy target; Σ bound / truth × 100 over those intervals for the mean width.
  bool energy_estimate = false;
  int energy_bound_n = 0, energy_bound_within = 0;
  double energy_bound_width_pct_sum = 0;
};

// Per scoring group (mode), over its containers.
struct GroupScore {
  int n = 0;
  double cpu_mean = 0, cpu_worst = 0, mem_mean = 0, mem_worst = 0, naive_mean = 0, naive_worst = 0;
  int energy_n = 0;
  double energy_mean = 0, energy_worst = 0;
  double unknown_s = 0, compute_unknown_s = 0;
  bool estimate = false;
  // Estimates: the worst error of the split's total per unit (pp), which the targets judge.
  double unit_total_worst = 0;
  // Estimates: container-intervals judged against their bound, those within it, and the mean
  // bound (± in pp of the interval) over them; nullopt-like 0s when none was judged.
  int bound_n = 0, bound_within = 0;
  double bound_mean_width_pp = 0;
  // Memory busy time, in pp of the run as compute: mean and worst error per container, seconds
  // unknown, and the estimated intervals judged against their bound.
  double traffic_mean = 0, traffic_worst = 0, memory_busy_unknown_s = 0;
  int traffic_bound_n = 0, traffic_bound_within = 0;
  double traffic_bound_mean_width_pp = 0;
  // Energy estimates: container-intervals judged against their bound, those within it, and the
  // mean bound in % of the true energy; their containers are left out of energy_mean/worst.
  int energy_bound_n = 0, energy_bound_within = 0;
  double energy_bound_mean_width_pct = 0;
};

struct ScoreReport {
  std::vector<ContainerScore> containers;  // sorted by group, unit, container
  std::map<std::string, GroupScore> groups;
  double span_s = 0;
  double worst_conservation = 0;
  bool memory_within_bound = true;
  std::vector<std::string> outside_bound;  // "container on unit: measured, true, bound"
  bool met = false;
  std::vector<std::string> misses;  // why not met, one line each
};

class Scorer {
 public:
  // `scenario` must outlive the scorer; `step_s` sets the truth's integration step (1/100 of it).
  Scorer(const scenario::Scenario& scenario, double step_s);

  // One interval [from_s, to_s] the pipeline accounted, with its ledgers; `busy` is each unit's
  // busy fraction as NVML reported it (for the naive labelling).
  // `sampled`: the passes [from, to] touching [from_s, to_s] where its ends are not sample
  // instants (a held interval split at a DCGM collection's end), empty otherwise: memory is then
  // judged within each pass's memory range × the part of it the ledger holds.
  void AddInterval(double from_s, double to_s, const std::vector<attribution::UnitLedger>& ledgers,
                   const std::map<std::string, double>& busy,
                   const std::vector<std::pair<double, double>>& sampled = {});

  // The scores over [from_s, to_s] against the targets of docs/attribution.md.
  ScoreReport Finish(double from_s, double to_s) const;

 private:
  std::string GroupOf(const std::string& unit) const;
  enum class Hidden { kNothing, kEnergy, kEverything };
  Hidden FaultWindow(const std::string& unit, double from_s, double to_s) const;
  ContainerScore& At(const std::string& unit, const std::string& container);
  // Each container's true compute and memory-busy seconds over the interval (when known).
  struct TrueSeconds {
    std::map<std::string, double> compute, memory_busy, energy;
  };
  TrueSeconds AddTruth(const std::string& unit, double from_s, double to_s, bool compute_known,
                       bool energy_known, bool traffic_known,
                       const std::vector<std::pair<double, double>>& sampled);
  // The truth's pieces over [from_s, to_s]: where busy or a share changes, and no longer than
  // 1/100 of a step (AddTruth).
  std::vector<double> Cuts(const std::string& unit, double from_s, double to_s) const;
  // Per container on `unit`, its memory's range (most − least, bytes) over [from_s, to_s].
  std::map<std::string, double> MemoryRanges(const std::string& unit, double from_s,
                                             double to_s) const;
  // Judges an estimated energy row of one interval against its bound (`truths`: AddTruth's).
  void JudgeEnergyBound(const attribution::Row& r, ContainerScore& sc, const TrueSeconds& truths);
  // Scores the memory busy time of an interval's rows against `truth` (AddTruth's).
  void ScoreTraffic(const attribution::UnitLedger& l, double from_s, double to_s,
                    const std::map<std::string, double>& truth);

  const scenario::Scenario& s_;
  double step_s_;
  std::set<std::string> dra_units_;  // units some container holds through a DRA claim
  std::map<std::pair<std::string, std::string>, ContainerScore> scores_;
  double worst_conservation_ = 0;
};

}  // namespace gpumeter::app
