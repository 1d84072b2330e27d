#include "sim/score/simulate_score.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "sim/scenario/truth.h"

namespace gpumeter::app {
namespace {

using domain::OwnerKind;
using domain::Rule;

// A tenant's true power on a unit: the unit's power while it holds the unit (energy follows the
// unit's time, as the rule does). A MIG instance's power is its slices' share of idle power plus
// its slices' share of the dynamic power at its own activity (the scenario's power model).
double UnitPowerWatts(const scenario::Scenario& s, const scenario::Gpu& g, const std::string& unit,
                      double busy, double t) {
  if (!g.mig_enabled) return scenario::GpuPowerWattsAt(s, g, t);
  const auto ref = s.FindUnit(unit);
  const double frac = ref.mig ? ref.mig->slices / static_cast<double>(g.mig_total_slices) : 0.0;
  return (g.power.idle_watts + (g.power.max_watts - g.power.idle_watts) * busy) * frac;
}

// Memory of each container on a unit at t, as NVML lists it then.
std::map<std::string, double> MemoryByContainer(const scenario::Scenario& s,
                                                const std::string& unit, double t) {
  std::map<std::string, double> out;
  for (const auto& pt : scenario::UnitAt(s, unit, t).processes)
    if (pt.process->container)
      out[pt.process->container->Key()] += static_cast<double>(pt.memory_bytes);
  return out;
}

bool IsLost(const attribution::UnitLedger& l) {
  return std::any_of(l.rows.begin(), l.rows.end(), [](const attribution::Row& r) {
    return r.compute_rule == Rule::kGpuLost || r.compute_rule == Rule::kGpuMissing;
  });
}

bool ActivityUnknown(const attribution::UnitLedger& l) {
  return std::any_of(l.rows.begin(), l.rows.end(), [](const attribution::Row& r) {
    return r.compute_rule == Rule::kActivityUnknown && r.compute_seconds > 0;
  });
}

bool TrafficUnknown(const attribution::UnitLedger& l) {
  return std::any_of(l.rows.begin(), l.rows.end(), [](const attribution::Row& r) {
    return r.memory_busy_rule == Rule::kActivityUnknown && r.memory_busy_seconds > 0;
  });
}

std::string Key(const domain::Owner& o) { return o.ns + "/" + o.pod + "/" + o.container; }

// How far the rows are from adding up to the unit's capacity over the interval (memory, compute,
// memory busy time, energy), relative.
double ConservationError(const attribution::UnitLedger& l) {
  double mem = 0, cpu = 0, energy = 0, traffic = 0;
  for (const auto& r : l.rows) {
    mem += r.memory_byte_seconds, cpu += r.compute_seconds, energy += r.energy_joules;
    traffic += r.memory_busy_seconds;
  }
  double worst = 0;
  if (l.memory_capacity_byte_seconds > 0)
    worst = std::max(worst, std::abs(mem / l.memory_capacity_byte_seconds - 1));
  if (l.seconds > 0) worst = std::max(worst, std::abs(cpu / l.seconds - 1));
  if (l.seconds > 0) worst = std::max(worst, std::abs(traffic / l.seconds - 1));
  if (l.energy_joules && *l.energy_joules > 0)
    worst = std::max(worst, std::abs(energy / *l.energy_joules - 1));
  return worst;
}

void Judge(const std::string& group, const GroupScore& g, ScoreReport& r) {
  auto miss = [&](const std::string& why) { r.misses.push_back(group + ": " + why); };
  if (g.compute_unknown_s > 0)
    miss("compute unknown for " +
         std::to_string(static_cast<long>(std::lround(g.compute_unknown_s))) +
         " container-seconds outside fault windows (no activity signal)");
  if (g.estimate) {
    // An estimate's split is reported; what it must get right is the unit's total.
    if (g.unit_total_worst > 5.0) miss("estimated split's total per unit off by > 5 pp");
    if (g.bound_n > 0 && g.bound_within < 0.95 * g.bound_n)
      miss("truth within the estimate's bound in " + std::to_string(g.bound_within) + " of " +
           std::to_string(g.bound_n) + " container-intervals (needs >= 95 %)");
  } else {
    if (g.cpu_mean > 2.0) miss("compute mean error > 2 pp");
    if (g.cpu_worst > 5.0) miss("compute worst error > 5 pp");
  }
  // Memory busy time as compute: estimated intervals within their bound, the rest within the pp
  // targets (an estimate group's containers may still have measured traffic: per-process memUtil
  // beside an MPS thread split).
  if (g.traffic_bound_n > 0 && g.traffic_bound_within < 0.95 * g.traffic_bound_n)
    miss("memory traffic within the estimate's bound in " + std::to_string(g.traffic_bound_within) +
         " of " + std::to_string(g.traffic_bound_n) + " container-intervals (needs >= 95 %)");
  if (g.traffic_bound_n == 0 && g.traffic_mean > 2.0) miss("memory traffic mean error > 2 pp");
  if (g.traffic_bound_n == 0 && g.traffic_worst > 5.0) miss("memory traffic worst error > 5 pp");
  if (g.energy_bound_n > 0 && g.energy_bound_within < 0.95 * g.energy_bound_n)
    miss("energy within the estimate's bound in " + std::to_string(g.energy_bound_within) + " of " +
         std::to_string(g.energy_bound_n) + " container-intervals (needs >= 95 %)");
  if (g.estimate) return;
  // Energy follows activity: with DCGM's 30 s means (and idle power fitted from them, which needs
  // a few collections to converge) the target is 5 %, else 3 %.
  const bool dcgm = group.find("(dcgm)") != std::string::npos;
  const double energy_target = dcgm ? 0.05 : 0.03;
  if (g.energy_n > 0 && g.energy_mean > energy_target)
    miss(dcgm ? "energy mean error > 5 %" : "energy mean error > 3 %");
}

}  // namespace

Scorer::Scorer(const scenario::Scenario& scenario, double step_s) : s_(scenario), step_s_(step_s) {
  for (const auto& pod : s_.pods)
    for (const auto& c : pod.containers)
      for (const auto& cl : c.claims) dra_units_.insert(s_.DraUnit(cl.device));
}

std::string Scorer::GroupOf(const std::string& unit) const {
  if (dra_units_.count(unit)) return "dra";
  const auto ref = s_.FindUnit(unit);
  if (!ref.gpu) return "unknown";
  // A MIG GPU whose activity comes from dcgm-exporter (no GPM: A100, A30) has rows of its own:
  // its activity is the exporter's 30 s means, aligned, and its energy target is looser.
  if (ref.gpu->mig_enabled)
    return std::string(domain::ToString(domain::SharingMode::kMig)) +
           (ref.gpu->dcgm_exporter && !ref.gpu->gpm_supported ? " (dcgm)" : "");
  return domain::ToString(ref.gpu->sharing.mode);
}

namespace {

// The calls whose failure the agent itself records in the interval's ledger: activity (device and
// per-process utilization, GPM) that it then reports as unknown compute. A fault on one hides
// nothing from the score: the ledger's own flags decide what is judged, so an interval the agent
// wrongly calls known is scored, not excused. Calls that carry nothing attribution reads (the
// compute mode, versions, the name) hide nothing either.
bool LedgerSaysWhatItHides(const std::string& call) {
  static const std::set<std::string> kCalls = {"nvmlDeviceGetUtilizationRates",
                                               "nvmlDeviceGetProcessUtilization",
                                               "nvmlDeviceGetProcessesUtilizationInfo",
                                               "nvmlGpmQueryDeviceSupport",
                                               "nvmlGpmSampleAlloc",
                                               "nvmlGpmSampleFree",
                                               "nvmlGpmSampleGet",
                                               "nvmlGpmMigSampleGet",
                                               "nvmlGpmMetricsGet",
                                               "nvmlDeviceGetComputeMode",
                                               "nvmlDeviceGetConfComputeMemSizeInfo",
                                               "nvmlSystemGetDriverVersion",
                                               "nvmlSystemGetNVMLVersion",
                                               "nvmlDeviceGetName",
                                               "nvmlErrorString"};
  return kCalls.count(call) > 0;
}

}  // namespace

// What a scenario fault on the unit's GPU that touches [from, to] hides: a failing power or
// energy call only the energy; an activity call (or one attribution does not read) nothing the
// ledger does not say itself; any other (a process list, device memory, a handle, every call, a
// lost GPU) the processes or readings at the samples it covers, and the next interval starts from
// what it hid.
Scorer::Hidden Scorer::FaultWindow(const std::string& unit, double from_s, double to_s) const {
  const auto ref = s_.FindUnit(unit);
  Hidden hidden = Hidden::kNothing;
  if (!ref.gpu) return hidden;
  for (const auto& f : s_.faults) {
    // A delay hides nothing; a health event fails no call.
    if (f.kind == scenario::FaultKind::kDelay || scenario::IsHealthEvent(f.kind)) continue;
    if (f.gpu_index && *f.gpu_index != ref.gpu->index) continue;
    if (from_s > f.to_s.value_or(1e300) || to_s < f.from_s) continue;
    if (f.kind == scenario::FaultKind::kCallError && LedgerSaysWhatItHides(f.call)) continue;
    const bool energy_only =
        f.kind == scenario::FaultKind::kCallError &&
        (f.call == "nvmlDeviceGetPowerUsage" || f.call == "nvmlDeviceGetTotalEnergyConsumption");
    if (!energy_only) return Hidden::kEverything;
    hidden = Hidden::kEnergy;
  }
  return hidden;
}

ContainerScore& Scorer::At(const std::string& unit, const std::string& container) {
  auto& sc = scores_[{unit, container}];
  sc.unit = unit, sc.container = container;
  return sc;
}

// The truth over [from, to] on a unit by midpoint sums over pieces no longer than 1/100 of a step
// that also end wherever busy or a share changes: busy, shares and power are constant on each
// piece, so exact (a burst's edges inside a piece cost up to half a piece each before, 0.4 pp of
// a bursty server's compute at a 1 s step, charged to the agent); memory grows linearly, exact
// but where a cap is reached inside a piece. And the memory the two sample instants cannot show.
Scorer::TrueSeconds Scorer::AddTruth(const std::string& unit, double from_s, double to_s,
                                     bool compute_known, bool energy_known, bool traffic_known,
                                     const std::vector<std::pair<double, double>>& sampled) {
  TrueSeconds out;
  auto& compute = out.compute;
  const auto ref = s_.FindUnit(unit);
  if (!ref.gpu) return out;
  const auto cuts = Cuts(unit, from_s, to_s);
  std::map<std::string, double> exact_memory;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double h = cuts[i + 1] - cuts[i];
    if (h <= 0) continue;
    const double t = cuts[i] + h / 2;
    const auto truth = scenario::UnitAt(s_, unit, t);
    const double power = UnitPowerWatts(s_, *ref.gpu, unit, truth.busy, t);
    for (const auto& pt : truth.processes) {
      if (!pt.process->container) continue;
      const std::string key = pt.process->container->Key();
      auto& sc = At(unit, key);
      if (compute_known) sc.truth.compute_s += pt.sm_share * h, compute[key] += pt.sm_share * h;
      if (energy_known) {
        sc.energy_truth.energy_j += power * pt.sm_share * h;
        out.energy[key] += power * pt.sm_share * h;
      }
      if (traffic_known)
        sc.truth.memory_busy_s += pt.memory_share * h, out.memory_busy[key] += pt.memory_share * h;
      exact_memory[key] += static_cast<double>(pt.memory_bytes) * h;
    }
  }
  auto at_from = MemoryByContainer(s_, unit, from_s), at_to = MemoryByContainer(s_, unit, to_s);
  std::set<std::string> keys;
  for (const auto& m : {exact_memory, at_from, at_to})
    for (const auto& [k, v] : m) keys.insert(k);
  // A ledger whose ends are not sample instants (a held interval split at a collection's end)
  // holds, of each pass it touches, a part at the two samples' mean: off by at most the
  // memory's range over that pass × the part's length.
  const bool sampled_here = sampled.empty();
  std::map<std::string, double> around;
  for (const auto& [a, b] : sampled) {
    const double overlap = std::min(to_s, b) - std::max(from_s, a);
    if (overlap > 0)
      for (const auto& [k, v] : MemoryRanges(unit, a, b)) around[k] += v * overlap;
  }
  for (const auto& k : keys) {
    auto& sc = At(unit, k);
    sc.scored = true;
    const double exact = exact_memory.count(k) ? exact_memory[k] : 0.0;
    const double trapezoid = (at_from[k] + at_to[k]) / 2 * (to_s - from_s);
    sc.truth.memory_byte_s += exact;
    const auto a = around.find(k);
    sc.memory_bound_byte_s += sampled_here        ? std::abs(trapezoid - exact)
                              : a == around.end() ? 0.0
                                                  : a->second;
  }
  return out;
}

std::vector<double> Scorer::Cuts(const std::string& unit, double from_s, double to_s) const {
  const double n = std::max(1.0, std::ceil((to_s - from_s) / (step_s_ / 100)));
  std::vector<double> cuts = scenario::UnitChangeTimes(s_, unit, from_s, to_s);
  for (double i = 1; i < n; ++i) cuts.push_back(from_s + i * (to_s - from_s) / n);
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

std::map<std::string, double> Scorer::MemoryRanges(const std::string& unit, double from_s,
                                                   double to_s) const {
  std::map<std::string, std::pair<double, double>> range;  // (least, most)
  auto add = [&range](const std::map<std::string, double>& at) {
    for (const auto& [k, v] : at) {
      auto [it, fresh] = range.try_emplace(k, v, v);
      it->second.first = std::min(it->second.first, v),
      it->second.second = std::max(it->second.second, v);
    }
  };
  const auto cuts = Cuts(unit, from_s, to_s);
  std::set<std::string> there;
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    for (const auto& pt : scenario::UnitAt(s_, unit, (cuts[i] + cuts[i + 1]) / 2).processes)
      if (pt.process->container) there.insert(pt.process->container->Key());
  for (const double t : cuts) {
    auto at = MemoryByContainer(s_, unit, t);
    for (const auto& k : there) at.try_emplace(k, 0.0);  // not there then: none held
    add(at);
  }
  std::map<std::string, double> out;
  for (const auto& [k, r] : range) out[k] = r.second - r.first;
  return out;
}

void Scorer::ScoreTraffic(const attribution::UnitLedger& l, double from_s, double to_s,
                          const std::map<std::string, double>& truth) {
  const double len = to_s - from_s;
  for (const auto& r : l.rows) {
    if (r.owner.kind != OwnerKind::kContainer) continue;
    auto& sc = At(l.uuid, Key(r.owner));
    sc.est.memory_busy_s += r.memory_busy_seconds;
    if (!domain::IsComputeEstimate(r.memory_busy_rule) || len <= 0) continue;
    const auto t = truth.find(Key(r.owner));
    const double true_s = t == truth.end() ? 0.0 : t->second;
    ++sc.traffic_bound_n;
    sc.traffic_bound_within += std::abs(r.memory_busy_seconds - true_s) <=
                               r.memory_busy_bound_seconds + 1e-9 * std::max(1.0, len);
    sc.traffic_bound_width_pp_sum += r.memory_busy_bound_seconds / len * 100;
  }
}

// An estimated energy split's own claim, per interval (as compute's): the truth within energy ±
// bound.
void Scorer::JudgeEnergyBound(const attribution::Row& r, ContainerScore& sc,
                              const TrueSeconds& truths) {
  const auto t = truths.energy.find(Key(r.owner));
  const double true_j = t == truths.energy.end() ? 0.0 : t->second;
  sc.energy_estimate = true;
  ++sc.energy_bound_n;
  sc.energy_bound_within +=
      std::abs(r.energy_joules - true_j) <= r.energy_bound_joules + 1e-9 * std::max(1.0, true_j);
  sc.energy_bound_width_pct_sum +=
      r.energy_bound_joules / std::max({true_j, r.energy_joules, 1e-9}) * 100;
}

void Scorer::AddInterval(double from_s, double to_s,
                         const std::vector<attribution::UnitLedger>& ledgers,
                         const std::map<std::string, double>& busy,
                         const std::vector<std::pair<double, double>>& sampled) {
  const double len = to_s - from_s;
  for (const auto& l : ledgers) {
    worst_conservation_ = std::max(worst_conservation_, ConservationError(l));

    const Hidden hidden = FaultWindow(l.uuid, from_s, to_s);
    if (IsLost(l) || hidden == Hidden::kEverything) {
      // Unknown: who was there (in truth or in the ledger) is told how long, nothing is scored.
      std::set<std::string> there;
      for (const auto& pt : scenario::UnitAt(s_, l.uuid, (from_s + to_s) / 2).processes)
        if (pt.process->container) there.insert(pt.process->container->Key());
      for (const auto& r : l.rows)
        if (r.owner.kind == OwnerKind::kContainer) there.insert(Key(r.owner));
      for (const auto& k : there) At(l.uuid, k).unknown_s += len;
      continue;
    }
    const bool compute_known = !ActivityUnknown(l);
    const bool energy_known =
        compute_known && l.energy_joules.has_value() && hidden == Hidden::kNothing;
    const bool traffic_known = !TrafficUnknown(l);
    const auto truths =
        AddTruth(l.uuid, from_s, to_s, compute_known, energy_known, traffic_known, sampled);
    const auto& truth = truths.compute;
    if (traffic_known) ScoreTraffic(l, from_s, to_s, truths.memory_busy);
    const auto b = busy.find(l.uuid);
    for (const auto& r : l.rows) {
      if (r.owner.kind != OwnerKind::kContainer) continue;
      auto& sc = At(l.uuid, Key(r.owner));
      sc.scored = true;
      sc.estimate = sc.estimate || domain::IsComputeEstimate(r.compute_rule);
      sc.est.memory_byte_s += r.memory_byte_seconds;
      if (compute_known) sc.est.compute_s += r.compute_seconds;
      if (compute_known && domain::IsComputeEstimate(r.compute_rule) && len > 0) {
        // The estimate's own claim, per interval: the truth within compute ± bound (rounding
        // aside). A bound of 0 on an estimate is a claim of exactness, judged as such.
        const auto t = truth.find(Key(r.owner));
        const double true_s = t == truth.end() ? 0.0 : t->second;
        ++sc.bound_n;
        sc.bound_within += std::abs(r.compute_seconds - true_s) <=
                           r.compute_bound_seconds + 1e-9 * std::max(1.0, len);
        sc.bound_s += r.compute_bound_seconds;
        sc.bound_width_pp_sum += r.compute_bound_seconds / len * 100;
      }
      if (energy_known) sc.energy_est.energy_j += r.energy_joules;
      // An estimated energy split, or the energy of an estimated compute split (it follows the
      // row's time): judged against its bound.
      if (energy_known &&
          (domain::IsEnergyEstimate(r.energy_rule) ||
           (domain::IsComputeEstimate(r.compute_rule) && r.energy_bound_joules > 0)))
        JudgeEnergyBound(r, sc, truths);
      if (l.energy_joules && hidden == Hidden::kNothing)
        sc.energy_any_activity_j += r.energy_joules;
      if (r.requested_share_seconds > 0 && b != busy.end() && compute_known)
        sc.naive_compute_s += b->second * len;
    }
    if (!compute_known) {
      // Who was busy there: their compute is unknown for these seconds (not an error against 0).
      std::set<std::string> busy_there;
      for (const auto& pt : scenario::UnitAt(s_, l.uuid, (from_s + to_s) / 2).processes)
        if (pt.process->container && pt.duty > 0) busy_there.insert(pt.process->container->Key());
      for (const auto& k : busy_there) At(l.uuid, k).compute_unknown_s += len;
    }
    if (!traffic_known)
      for (const auto& pt : scenario::UnitAt(s_, l.uuid, (from_s + to_s) / 2).processes)
        if (pt.process->container && pt.memory_share > 0)
          At(l.uuid, pt.process->container->Key()).memory_busy_unknown_s += len;
  }
}

ScoreReport Scorer::Finish(double from_s, double to_s) const {
  ScoreReport r;
  r.span_s = to_s - from_s;
  r.worst_conservation = worst_conservation_;
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> unit_totals;
  for (const auto& [key, sc0] : scores_) {
    ContainerScore sc = sc0;
    sc.group = GroupOf(sc.unit) + (sc.estimate ? "/estimate" : "");
    auto& g = r.groups[sc.group];
    g.estimate = sc.estimate;
    g.unknown_s += sc.unknown_s, g.compute_unknown_s += sc.compute_unknown_s;
    g.memory_busy_unknown_s += sc.memory_busy_unknown_s;
    if (!sc.scored) {  // only unknown seconds: reported, not an error of 0 against 0
      r.containers.push_back(std::move(sc));
      continue;
    }
    ++g.n;
    const double cpu_pp = std::abs(sc.est.compute_s - sc.truth.compute_s) / r.span_s * 100;
    const double naive_pp = std::abs(sc.naive_compute_s - sc.truth.compute_s) / r.span_s * 100;
    const double mem_err = std::abs(sc.est.memory_byte_s - sc.truth.memory_byte_s);
    const double mem_rel = sc.truth.memory_byte_s > 0 ? mem_err / sc.truth.memory_byte_s
                                                      : (sc.est.memory_byte_s > 0 ? 1.0 : 0.0);
    if (mem_err > sc.memory_bound_byte_s + 1e-9 * sc.truth.memory_byte_s) {
      r.memory_within_bound = false;
      r.outside_bound.push_back(sc.container + " on " + sc.unit + ": " +
                                std::to_string(sc.est.memory_byte_s) + " byte-s measured, " +
                                std::to_string(sc.truth.memory_byte_s) + " true, bound " +
                                std::to_string(sc.memory_bound_byte_s));
    }
    g.energy_bound_n += sc.energy_bound_n, g.energy_bound_within += sc.energy_bound_within;
    g.energy_bound_mean_width_pct += sc.energy_bound_width_pct_sum;
    if (sc.energy_truth.energy_j > 0 && !sc.energy_estimate) {
      const double rel =
          std::abs(sc.energy_est.energy_j - sc.energy_truth.energy_j) / sc.energy_truth.energy_j;
      ++g.energy_n;
      g.energy_mean += rel, g.energy_worst = std::max(g.energy_worst, rel);
    }
    g.cpu_mean += cpu_pp, g.cpu_worst = std::max(g.cpu_worst, cpu_pp);
    g.mem_mean += mem_rel, g.mem_worst = std::max(g.mem_worst, mem_rel);
    g.naive_mean += naive_pp, g.naive_worst = std::max(g.naive_worst, naive_pp);
    g.bound_n += sc.bound_n, g.bound_within += sc.bound_within;
    g.bound_mean_width_pp += sc.bound_width_pp_sum;
    const double traffic_pp =
        std::abs(sc.est.memory_busy_s - sc.truth.memory_busy_s) / r.span_s * 100;
    g.traffic_mean += traffic_pp, g.traffic_worst = std::max(g.traffic_worst, traffic_pp);
    g.traffic_bound_n += sc.traffic_bound_n, g.traffic_bound_within += sc.traffic_bound_within;
    g.traffic_bound_mean_width_pp += sc.traffic_bound_width_pp_sum;
    if (sc.estimate) {
      auto& t = unit_totals[{sc.group, sc.unit}];
      t.first += sc.est.compute_s, t.second += sc.truth.compute_s;
    }
    r.containers.push_back(std::move(sc));
  }
  for (auto& [name, g] : r.groups) {
    if (g.n == 0) continue;
    g.cpu_mean /= g.n, g.mem_mean /= g.n, g.naive_mean /= g.n, g.traffic_mean /= g.n;
    if (g.energy_n) g.energy_mean /= g.energy_n;
    if (g.bound_n) g.bound_mean_width_pp /= g.bound_n;
    if (g.traffic_bound_n) g.traffic_bound_mean_width_pp /= g.traffic_bound_n;
    if (g.energy_bound_n) g.energy_bound_mean_width_pct /= g.energy_bound_n;
  }
  for (const auto& [k, t] : unit_totals) {
    auto& g = r.groups[k.first];
    g.unit_total_worst =
        std::max(g.unit_total_worst, std::abs(t.first - t.second) / r.span_s * 100);
  }
  std::sort(r.containers.begin(), r.containers.end(), [](const auto& a, const auto& b) {
    return std::tie(a.group, a.unit, a.container) < std::tie(b.group, b.unit, b.container);
  });
  if (r.worst_conservation > 1e-9) r.misses.push_back("conservation off by more than 1e-9");
  if (!r.memory_within_bound)
    r.misses.push_back("memory of some container outside what sampling cannot see");
  for (const auto& [name, g] : r.groups) Judge(name, g, r);
  r.met = r.misses.empty();
  return r;
}

}  // namespace gpumeter::app
