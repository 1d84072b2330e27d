#include "app/simulate.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "app/paths.h"
#include "core/attribution/accountant.h"
#include "core/attribution/attribute.h"
#include "core/attribution/observe.h"
#include "sim/node/scenario_context.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/truth.h"
#include "sources/k8s/sharing.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::app {
namespace {

using domain::Owner;
using domain::OwnerKind;
using domain::SharingMode;

// Per (unit, container) totals over the run.
struct Amounts {
  double compute_s = 0, memory_byte_s = 0, energy_j = 0;
};
using Key = std::pair<std::string, std::string>;  // unit uuid, container key

SharingMode ModeOf(const scenario::Gpu& g) {
  return g.mig_enabled ? SharingMode::kMig : g.sharing.mode;
}

// Ground truth: exact enough by midpoint sums at 1/100 of a step (busy and shares are piecewise
// constant; memory grows linearly).
// Intervals in which a GPU answered nothing (lost) are left out of the truth: nothing was
// measured there (the ledger puts them in unattributed), and the harness scores measurements.
using LostIntervals = std::map<std::string, std::map<double, double>>;  // GPU uuid -> [from, to)

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

std::map<Key, Amounts> Truth(const scenario::Scenario& s, double from, double to, double step,
                             const LostIntervals& lost) {
  std::map<Key, Amounts> out;
  for (const auto& g : s.gpus) {
    // The measured time of this GPU: [from, to) without its lost intervals, integrated segment
    // by segment so the segment ends are exact.
    std::vector<std::pair<double, double>> segments;
    double cursor = from;
    if (const auto it = lost.find(g.uuid); it != lost.end())
      for (const auto& [a, b] : it->second) {
        if (a > cursor) segments.emplace_back(cursor, std::min(a, to));
        cursor = std::max(cursor, b);
      }
    if (cursor < to) segments.emplace_back(cursor, to);
    std::vector<std::string> units;
    if (g.mig_enabled)
      for (const auto& m : g.mig_instances) units.push_back(m.uuid);
    else
      units.push_back(g.uuid);
    for (const auto& unit : units) {
      for (const auto& [a, b] : segments) {
        const double n = std::ceil((b - a) / (step / 100));
        const double h = (b - a) / n;
        for (double i = 0; i < n; ++i) {
          const double t = a + (i + 0.5) * h;
          const auto truth = scenario::UnitAt(s, unit, t);
          const double power = UnitPowerWatts(s, g, unit, truth.busy, t);
          for (const auto& pt : truth.processes) {
            if (!pt.process->container) continue;
            auto& amounts = out[{unit, pt.process->container->Key()}];
            amounts.compute_s += pt.sm_share * h;
            amounts.memory_byte_s += static_cast<double>(pt.memory_bytes) * h;
            amounts.energy_j += power * pt.sm_share * h;
          }
        }
      }
    }
  }
  return out;
}

// What sampling cannot know: when, within an interval, a process started or exited. The
// estimator charges half the interval there, so per container it can be off by up to half the
// length of the interval holding each start or exit × the process's memory then. `times` are the
// sample times, the first being the start of the run.
std::map<Key, double> MemoryBound(const scenario::Scenario& s, const std::vector<double>& times) {
  std::map<Key, double> out;
  if (times.size() < 2) return out;
  for (const auto& p : s.processes) {
    if (!p.container) continue;
    for (const auto& u : p.usage) {
      for (const std::optional<double> te : {std::optional<double>(p.start_s), p.end_s}) {
        if (!te || *te <= times.front() || *te >= times.back()) continue;
        const auto hi = std::upper_bound(times.begin(), times.end(), *te);
        const double len = *hi - *std::prev(hi);
        const double mem = static_cast<double>(
            std::max(scenario::MemoryAt(p, u, *te), scenario::MemoryAt(p, u, *te - 1e-6)));
        out[{u.unit_uuid, p.container->Key()}] += len / 2 * mem;
      }
    }
  }
  return out;
}

// Sample times under noise: each nominal tick from + k × step is dropped with probability
// `drop`, else taken at an offset uniform in ±jitter × step, plus late_by × step with
// probability `late`. Always increasing; the last one is at most `to`.
std::vector<double> SampleTimes(const SimulateOptions& o, double to) {
  std::vector<double> out;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  const bool noisy = o.noise == "default";
  const double jitter = noisy ? 0.1 : 0, drop = noisy ? 0.03 : 0, late = noisy ? 0.02 : 0,
               late_by = 0.5;
  double last = o.from_s;
  for (long k = 1;; ++k) {
    const double nominal = o.from_s + static_cast<double>(k) * o.step_s;
    if (nominal > to + 1e-9) break;
    const double r_drop = u01(rng), r_jitter = u01(rng), r_late = u01(rng);
    if (r_drop < drop) continue;
    double t =
        nominal + (2 * r_jitter - 1) * jitter * o.step_s + (r_late < late ? late_by * o.step_s : 0);
    t = std::min(t, to);
    if (t <= last + 0.05 * o.step_s) continue;
    out.push_back(t);
    last = t;
  }
  return out;
}

}  // namespace

int RunSimulate(const SimulateOptions& o, const std::string& argv0) {
  const auto exe_dir = ExeDir(argv0);
  auto loaded = LoadScenario(o.scenario, o.scenario_dir, exe_dir);
  if (!loaded) {
    spdlog::error("{}", loaded.error().message);
    return 2;
  }
  const auto path = &loaded->path;
  const scenario::Scenario& s = loaded->scenario;
  const double to = o.to_s > 0 ? o.to_s : s.duration_s;
  if (to <= o.from_s + o.step_s) {
    spdlog::error("--from {} / --to {}: the run must span more than one --step", o.from_s, to);
    return 2;
  }

  // The harness owns the clock: the fake's stamps are epoch0 + scenario time, as is our wall clock.
  const auto epoch0 = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
  ::setenv("GPUMETER_FAKE_NVML_SCENARIO", path->c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_EPOCH_US", std::to_string(epoch0).c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_START_S", "0", 1);
  const auto candidates = FakeLibraryCandidates(o.nvml_library, o.driver_profile, exe_dir);
  // The harness steps the fake's clock itself, through the fake's control symbol.
  void* control = dlopen(candidates.front().c_str(), RTLD_NOW | RTLD_LOCAL);
  auto set_time =
      control ? reinterpret_cast<void (*)(double)>(dlsym(control, "gpumeterFakeNvmlSetTime"))
              : nullptr;
  if (!set_time) {
    spdlog::error("{}: not the gpumeter fake NVML (no gpumeterFakeNvmlSetTime); simulate needs it",
                  candidates.front());
    if (control) dlclose(control);
    return 2;
  }
  double now = o.from_s;

  nvml::NvmlSourceOptions no;
  no.library_candidates = {candidates.front()};
  no.wall_clock_us = [&] { return epoch0 + static_cast<uint64_t>(std::llround(now * 1e6)); };
  no.first_util_lookback_us = static_cast<uint64_t>(o.step_s * 1e6);
  auto source = nvml::NvmlGpuSource::Create(no);
  if (!source) {
    spdlog::error("{}", source.error().message);
    dlclose(control);
    return 1;
  }

  std::map<std::string, SharingMode>
      mode_of_unit;  // the scenario's own mode: scores are grouped by it
  for (const auto& g : s.gpus) {
    mode_of_unit[g.uuid] = ModeOf(g);
    for (const auto& m : g.mig_instances) mode_of_unit[m.uuid] = SharingMode::kMig;
  }
  attribution::ObserveContext ctx;
  ctx.owner = [&](uint32_t pid) -> std::optional<Owner> {
    // The process alive just before the sample: it is the one the readings describe.
    const auto* p = scenario::LiveProcess(s, pid, now - 1e-6);
    if (!p) return std::nullopt;
    if (!p->container) return Owner{OwnerKind::kSystem, {}, {}, {}};
    return Owner{OwnerKind::kContainer, p->container->ns, p->container->pod,
                 p->container->container};
  };
  ctx.mps_thread_fraction = [&](uint32_t pid) -> std::optional<double> {
    const auto* p = scenario::LiveProcess(s, pid, now - 1e-6);
    if (!p) return std::nullopt;
    auto it = p->env.find("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (it == p->env.end()) return std::nullopt;
    return std::strtod(it->second.c_str(), nullptr) / 100.0;
  };

  // Holders and requested shares through the production path: the kubelet's allocations and the
  // node's sharing evidence, as the scenario would present them.
  const auto allocations =
      k8s::BuildAllocations(sim::ScenarioAllocations(s), sim::ScenarioSharingEvidence(s));
  for (const auto& p : allocations.problems) spdlog::warn("scenario allocation: {}", p);
  std::map<std::string, std::vector<attribution::Holding>> holders;
  for (const auto& u : allocations.units)
    for (const auto& h : u.holders) holders[u.unit_uuid].push_back({h.AsOwner(), h.share});
  ctx.holders = [&](const std::string& unit) {
    auto it = holders.find(unit);
    return it == holders.end() ? std::vector<attribution::Holding>{} : it->second;
  };
  std::map<std::string, SharingMode> decided;  // the mode the evidence decided, per unit
  for (const auto& u : allocations.units) decided[u.unit_uuid] = u.mode;
  ctx.sharing = [&](const std::string& uuid) {
    return decided.count(uuid) ? decided[uuid] : SharingMode::kExclusive;
  };
  attribution::Accountant accountant(ctx);

  std::map<Key, Amounts> est, naive;
  double worst_conservation = 0;
  size_t unit_intervals = 0, lost_intervals = 0, intervals = 0;
  LostIntervals lost;
  set_time(now);
  if (auto warm = (*source)->Sample())
    accountant.Prime(std::move(*warm));  // lastSeen, GPM baseline
  std::vector<double> times{now};        // of the samples that made an interval
  for (const double t : SampleTimes(o, to)) {
    const double seconds = t - now;
    const double t_prev = now;
    now = t;
    set_time(now);
    auto snap = (*source)->Sample();
    if (!snap) {
      spdlog::error("sample at t={}: {}", now, snap.error().message);
      continue;
    }
    ++intervals;
    times.push_back(now);
    // Busy value per unit for the naive labelling, and which GPUs answered nothing.
    std::map<std::string, double> busy;
    for (const auto& d : snap->devices) {
      if (d.lost) {
        ++lost_intervals;
        lost[d.uuid][t_prev] = now;
      }
      if (const auto b = attribution::BusyFraction(d)) busy[d.uuid] = *b;
      for (const auto& m : d.mig_instances)
        if (m.sm_active_ratio) busy[m.uuid] = *m.sm_active_ratio;
    }
    for (const auto& ledger : accountant.Step(std::move(*snap), seconds)) {
      ++unit_intervals;
      double mem = 0, cpu = 0, energy = 0;
      for (const auto& r : ledger.rows) {
        mem += r.memory_byte_seconds;
        cpu += r.compute_seconds;
        energy += r.energy_joules;
        if (r.owner.kind != OwnerKind::kContainer) continue;
        const std::string key = r.owner.ns + "/" + r.owner.pod + "/" + r.owner.container;
        auto& a = est[{ledger.uuid, key}];
        a.compute_s += r.compute_seconds;
        a.memory_byte_s += r.memory_byte_seconds;
        a.energy_j += r.energy_joules;
        // Naive labelling: every holder of the unit is shown the whole unit's busy value.
        if (r.requested_share_seconds > 0)
          naive[{ledger.uuid, key}].compute_s += busy[ledger.uuid] * seconds;
      }
      if (ledger.memory_capacity_byte_seconds > 0)
        worst_conservation =
            std::max(worst_conservation, std::abs(mem / ledger.memory_capacity_byte_seconds - 1));
      worst_conservation = std::max(worst_conservation, std::abs(cpu / seconds - 1));
      if (ledger.energy_joules && *ledger.energy_joules > 0)
        worst_conservation =
            std::max(worst_conservation, std::abs(energy / *ledger.energy_joules - 1));
    }
  }
  source->reset();  // shut NVML down before closing the control handle
  dlclose(control);

  const auto truth = Truth(s, o.from_s, now, o.step_s, lost);
  const double span = now - o.from_s;
  const auto bound = MemoryBound(s, times);
  bool memory_within_bound = true;
  struct Score {
    int n = 0;
    double cpu_sum = 0, cpu_worst = 0, mem_sum = 0, mem_worst = 0, naive_sum = 0, naive_worst = 0;
    int energy_n = 0;
    double energy_sum = 0, energy_worst = 0;
  };
  std::map<SharingMode, Score> scores;
  std::set<Key> keys;
  for (const auto& [k, v] : truth) keys.insert(k);
  for (const auto& [k, v] : est) keys.insert(k);
  for (const auto& k : keys) {
    const Amounts t = truth.count(k) ? truth.at(k) : Amounts{};
    const Amounts e = est.count(k) ? est.at(k) : Amounts{};
    const Amounts nv = naive.count(k) ? naive.at(k) : Amounts{};
    auto& sc = scores[mode_of_unit[k.first]];
    const double cpu_pp = std::abs(e.compute_s - t.compute_s) / span * 100;
    const double naive_pp = std::abs(nv.compute_s - t.compute_s) / span * 100;
    const double mem_rel = t.memory_byte_s > 0
                               ? std::abs(e.memory_byte_s - t.memory_byte_s) / t.memory_byte_s
                               : (e.memory_byte_s > 0 ? 1.0 : 0.0);
    const double allowed = (bound.count(k) ? bound.at(k) : 0.0) + 1e-9 * t.memory_byte_s;
    if (std::abs(e.memory_byte_s - t.memory_byte_s) > allowed) {
      memory_within_bound = false;
      spdlog::warn("memory of {} on {}: {:.6g} byte-s measured, {:.6g} true, bound {:.6g}",
                   k.second, k.first, e.memory_byte_s, t.memory_byte_s, allowed);
    }
    ++sc.n;
    if (t.energy_j > 0) {
      const double rel = std::abs(e.energy_j - t.energy_j) / t.energy_j;
      ++sc.energy_n;
      sc.energy_sum += rel, sc.energy_worst = std::max(sc.energy_worst, rel);
    }
    sc.cpu_sum += cpu_pp, sc.cpu_worst = std::max(sc.cpu_worst, cpu_pp);
    sc.mem_sum += mem_rel, sc.mem_worst = std::max(sc.mem_worst, mem_rel);
    sc.naive_sum += naive_pp, sc.naive_worst = std::max(sc.naive_worst, naive_pp);
  }
  fmt::print(
      "gpumeter simulate: scenario '{}', driver profile {}, t={}..{} s, step {} s, noise {} (seed "
      "{}), "
      "{} intervals, {} unit-intervals{}\n",
      s.name, o.driver_profile, o.from_s, now, o.step_s, o.noise, o.seed, intervals, unit_intervals,
      lost_intervals
          ? fmt::format(" ({} GPU-intervals lost: left out of the score)", lost_intervals)
          : "");
  fmt::print(
      "per-container error against ground truth (compute in percentage points of the unit's "
      "time)\n");
  fmt::print("{:<13} {:>10} {:>22} {:>22} {:>20} {:>26}\n", "mode", "containers",
             "compute mean / worst", "memory mean / worst", "energy mean / worst",
             "naive compute mean / worst");
  for (const auto& [mode, sc] : scores) {
    const std::string energy =
        sc.energy_n ? fmt::format("{:.2f}% / {:.2f}%", sc.energy_sum / sc.energy_n * 100,
                                  sc.energy_worst * 100)
                    : std::string("n/a");
    fmt::print(
        "{:<13} {:>10} {:>10.2f} / {:>6.2f} pp {:>9.3f}% / {:>7.3f}% {:>20} {:>14.2f} / {:>6.2f} "
        "pp\n",
        domain::ToString(mode), sc.n, sc.cpu_sum / sc.n, sc.cpu_worst, sc.mem_sum / sc.n * 100,
        sc.mem_worst * 100, energy, sc.naive_sum / sc.n, sc.naive_worst);
  }
  fmt::print(
      "conservation: worst |sum of rows / capacity - 1| = {:.1e} (memory, compute, energy)\n",
      worst_conservation);
  if (const auto* g = [&]() -> const scenario::Gpu* {
        for (const auto& x : s.gpus)
          if (x.mig_enabled) return &x;
        return nullptr;
      }()) {
    const auto idle = accountant.IdleWatts(g->uuid);
    fmt::print("energy: MIG GPU {} idle power {} (scenario: {:.1f} W)\n", g->uuid,
               idle ? fmt::format("fitted {:.1f} W", *idle) : std::string("not estimated"),
               g->power.idle_watts);
  }
  // Targets (docs/attribution.md): compute mean <= 2 pp and worst <= 5 pp per mode; energy mean
  // <= 3 %; memory exact
  // but for the half interval around each process start or exit; conservation within 1e-9.
  fmt::print("memory: {} the start/exit bound (half the interval x memory per start or exit)\n",
             memory_within_bound ? "every container within" : "some container OUTSIDE");
  bool met = worst_conservation <= 1e-9 && memory_within_bound;
  for (const auto& [mode, sc] : scores)
    met = met && sc.cpu_sum / sc.n <= 2.0 && sc.cpu_worst <= 5.0 &&
          (sc.energy_n == 0 || sc.energy_sum / sc.energy_n <= 0.03);
  fmt::print("targets: {}\n", met ? "met" : "NOT met");
  return met ? 0 : 1;
}

}  // namespace gpumeter::app
