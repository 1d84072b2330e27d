#include "app/simulate.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "app/paths.h"
#include "app/simulate_dcgm.h"
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

// The scenario's own sharing mode of each unit: scores are grouped by it.
std::map<std::string, SharingMode> ScenarioModes(const scenario::Scenario& s) {
  std::map<std::string, SharingMode> mode_of_unit;
  for (const auto& g : s.gpus) {
    mode_of_unit[g.uuid] = ModeOf(g);
    for (const auto& m : g.mig_instances) mode_of_unit[m.uuid] = SharingMode::kMig;
  }
  return mode_of_unit;
}

// The harness owns the clock: `now` is scenario time, and the fake's stamps are epoch0 + scenario
// time, as is our wall clock. The source and the accountant's context read `now` through a
// reference, so a Harness stays where it was made.
struct Harness {
  Harness() = default;
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  double now = 0;
  uint64_t epoch0 = 0;
  void* control = nullptr;                      // the fake's handle for its control symbol
  void (*set_time)(double) = nullptr;           // gpumeterFakeNvmlSetTime
  std::unique_ptr<SimulatedDcgm> dcgm;          // the node's dcgm-exporter, where it has one
  std::unique_ptr<nvml::NvmlGpuSource> source;  // the real NVML source, over the fake
};

// Points the fake NVML at the scenario and the harness's clock, takes its control symbol and
// opens the NVML source over it. 0, or the exit code once the error is logged.
int OpenFakeNvml(const SimulateOptions& o, const std::string& scenario_path,
                 const std::filesystem::path& exe_dir, Harness& h) {
  h.epoch0 = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
  ::setenv("GPUMETER_FAKE_NVML_SCENARIO", scenario_path.c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_EPOCH_US", std::to_string(h.epoch0).c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_START_S", "0", 1);
  const auto candidates = FakeLibraryCandidates(o.nvml_library, o.driver_profile, exe_dir);
  // The harness steps the fake's clock itself, through the fake's control symbol.
  h.control = dlopen(candidates.front().c_str(), RTLD_NOW | RTLD_LOCAL);
  h.set_time = h.control
                   ? reinterpret_cast<void (*)(double)>(dlsym(h.control, "gpumeterFakeNvmlSetTime"))
                   : nullptr;
  if (!h.set_time) {
    spdlog::error("{}: not the gpumeter fake NVML (no gpumeterFakeNvmlSetTime); simulate needs it",
                  candidates.front());
    if (h.control) dlclose(h.control);
    return 2;
  }
  h.now = o.from_s;

  nvml::NvmlSourceOptions no;
  no.library_candidates = {candidates.front()};
  no.wall_clock_us = [&h] { return h.epoch0 + static_cast<uint64_t>(std::llround(h.now * 1e6)); };
  no.first_util_lookback_us = static_cast<uint64_t>(o.step_s * 1e6);
  auto source = nvml::NvmlGpuSource::Create(no);
  if (!source) {
    spdlog::error("{}", source.error().message);
    dlclose(h.control);
    return 1;
  }
  h.source = std::move(*source);
  return 0;
}

// Shuts NVML down before closing the control handle.
void CloseFakeNvml(Harness& h) {
  h.source.reset();
  dlclose(h.control);
}

// The accountant's view of the scenario at the harness's time: owners and MPS fractions from the
// scenario's processes, holders and requested shares through the production path (the kubelet's
// allocations and the node's sharing evidence, as the scenario would present them).
attribution::ObserveContext ScenarioContext(const scenario::Scenario& s, const Harness& h) {
  attribution::ObserveContext ctx;
  ctx.owner = [&s, &h](uint32_t pid) -> std::optional<Owner> {
    // The process alive just before the sample: it is the one the readings describe.
    const auto* p = scenario::LiveProcess(s, pid, h.now - 1e-6);
    if (!p) return std::nullopt;
    if (!p->container) return Owner{OwnerKind::kSystem, {}, {}, {}};
    return Owner{OwnerKind::kContainer, p->container->ns, p->container->pod,
                 p->container->container};
  };
  ctx.mps_thread_fraction = [&s, &h](uint32_t pid) -> std::optional<double> {
    const auto* p = scenario::LiveProcess(s, pid, h.now - 1e-6);
    if (!p) return std::nullopt;
    auto it = p->env.find("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (it == p->env.end()) return std::nullopt;
    return std::strtod(it->second.c_str(), nullptr) / 100.0;
  };

  const auto allocations =
      k8s::BuildAllocations(sim::ScenarioAllocations(s), sim::ScenarioSharingEvidence(s));
  for (const auto& p : allocations.problems) spdlog::warn("scenario allocation: {}", p);
  std::map<std::string, std::vector<attribution::Holding>> holders;
  for (const auto& u : allocations.units)
    for (const auto& holder : u.holders)
      holders[u.unit_uuid].push_back({holder.AsOwner(), holder.share});
  ctx.holders = [holders = std::move(holders)](const std::string& unit) {
    auto it = holders.find(unit);
    return it == holders.end() ? std::vector<attribution::Holding>{} : it->second;
  };
  std::map<std::string, SharingMode> decided;  // the mode the evidence decided, per unit
  for (const auto& u : allocations.units) decided[u.unit_uuid] = u.mode;
  ctx.sharing = [decided = std::move(decided)](const std::string& uuid) {
    const auto it = decided.find(uuid);
    return it != decided.end() ? it->second : SharingMode::kExclusive;
  };
  return ctx;
}

// What the run measured, against which the truth is scored.
struct Measured {
  std::map<Key, Amounts> est, naive;
  double worst_conservation = 0;
  size_t unit_intervals = 0, lost_intervals = 0, intervals = 0;
  LostIntervals lost;
  std::vector<double> times;  // the run's start, then each sample that made an interval
};

// Busy value per unit for the naive labelling; GPUs that answered nothing are counted and their
// interval [t_prev, now) recorded as lost.
std::map<std::string, double> BusyAndLost(const gpu::GpuSnapshot& snap, double t_prev, double now,
                                          Measured& m) {
  std::map<std::string, double> busy;
  for (const auto& d : snap.devices) {
    if (d.lost) {
      ++m.lost_intervals;
      m.lost[d.uuid][t_prev] = now;
    }
    if (const auto b = attribution::BusyFraction(d)) busy[d.uuid] = *b;
    for (const auto& mi : d.mig_instances)
      if (const auto a = attribution::InstanceActivity(mi)) busy[mi.uuid] = *a;
  }
  return busy;
}

// Adds one unit's ledger for a `seconds` long interval to the totals: per container the estimate
// and the naive labelling, and how far the rows are from adding up to the unit's capacity.
void Tally(const attribution::UnitLedger& ledger, std::map<std::string, double>& busy,
           double seconds, Measured& m) {
  ++m.unit_intervals;
  double mem = 0, cpu = 0, energy = 0;
  for (const auto& r : ledger.rows) {
    mem += r.memory_byte_seconds;
    cpu += r.compute_seconds;
    energy += r.energy_joules;
    if (r.owner.kind != OwnerKind::kContainer) continue;
    const std::string key = r.owner.ns + "/" + r.owner.pod + "/" + r.owner.container;
    auto& a = m.est[{ledger.uuid, key}];
    a.compute_s += r.compute_seconds;
    a.memory_byte_s += r.memory_byte_seconds;
    a.energy_j += r.energy_joules;
    // Naive labelling: every holder of the unit is shown the whole unit's busy value.
    if (r.requested_share_seconds > 0)
      m.naive[{ledger.uuid, key}].compute_s += busy[ledger.uuid] * seconds;
  }
  auto& worst = m.worst_conservation;
  if (ledger.memory_capacity_byte_seconds > 0)
    worst = std::max(worst, std::abs(mem / ledger.memory_capacity_byte_seconds - 1));
  worst = std::max(worst, std::abs(cpu / seconds - 1));
  if (ledger.energy_joules && *ledger.energy_joules > 0)
    worst = std::max(worst, std::abs(energy / *ledger.energy_joules - 1));
}

// Steps the fake's clock through the sample times up to `to`, sampling through the real source
// and accountant at each.
Measured Measure(const SimulateOptions& o, double to, Harness& h,
                 attribution::Accountant& accountant) {
  Measured m;
  h.set_time(h.now);
  if (auto warm = h.source->Sample()) {
    if (h.dcgm) h.dcgm->Apply(h.now, static_cast<double>(warm->timestamp_us) / 1e6, *warm);
    accountant.Prime(std::move(*warm));  // lastSeen, GPM baseline
  }
  m.times = {h.now};
  for (const double t : SampleTimes(o, to)) {
    const double seconds = t - h.now;
    const double t_prev = h.now;
    h.now = t;
    h.set_time(h.now);
    auto snap = h.source->Sample();
    if (!snap) {
      spdlog::error("sample at t={}: {}", h.now, snap.error().message);
      continue;
    }
    if (h.dcgm) h.dcgm->Apply(h.now, static_cast<double>(snap->timestamp_us) / 1e6, *snap);
    ++m.intervals;
    m.times.push_back(h.now);
    auto busy = BusyAndLost(*snap, t_prev, h.now, m);
    for (const auto& ledger : accountant.Step(std::move(*snap), seconds))
      Tally(ledger, busy, seconds, m);
  }
  return m;
}

// Per sharing mode, the per-container errors against the truth.
struct Score {
  int n = 0;
  double cpu_sum = 0, cpu_worst = 0, mem_sum = 0, mem_worst = 0, naive_sum = 0, naive_worst = 0;
  int energy_n = 0;
  double energy_sum = 0, energy_worst = 0;
};
// One container on one unit; `alone`: no other container had truth on that unit.
struct ContainerScore {
  std::string unit, container;
  bool alone = false;
  double cpu_pp = 0;
  std::optional<double> energy_rel;  // unknown where its true energy is 0
};
struct Scores {
  std::map<SharingMode, Score> by_mode;
  std::vector<ContainerScore> containers;
  bool memory_within_bound = true;
};

// Scores every container seen in the truth or the estimate over [from, end] (end: the last
// sample); a memory error outside the start/exit bound is logged.
Scores ScoreAgainstTruth(const SimulateOptions& o, const scenario::Scenario& s, const Measured& m,
                         double end) {
  const auto truth = Truth(s, o.from_s, end, o.step_s, m.lost);
  const double span = end - o.from_s;
  const auto bound = MemoryBound(s, m.times);
  auto mode_of_unit = ScenarioModes(s);
  Scores out;
  std::set<Key> keys;
  for (const auto& [k, v] : truth) keys.insert(k);
  for (const auto& [k, v] : m.est) keys.insert(k);
  std::map<std::string, int> tenants;  // containers with truth per unit
  for (const auto& [k, v] : truth) tenants[k.first] += v.compute_s > 0 || v.memory_byte_s > 0;
  for (const auto& k : keys) {
    const Amounts t = truth.count(k) ? truth.at(k) : Amounts{};
    const Amounts e = m.est.count(k) ? m.est.at(k) : Amounts{};
    const Amounts nv = m.naive.count(k) ? m.naive.at(k) : Amounts{};
    auto& sc = out.by_mode[mode_of_unit[k.first]];
    const double cpu_pp = std::abs(e.compute_s - t.compute_s) / span * 100;
    const double naive_pp = std::abs(nv.compute_s - t.compute_s) / span * 100;
    const double mem_rel = t.memory_byte_s > 0
                               ? std::abs(e.memory_byte_s - t.memory_byte_s) / t.memory_byte_s
                               : (e.memory_byte_s > 0 ? 1.0 : 0.0);
    const double allowed = (bound.count(k) ? bound.at(k) : 0.0) + 1e-9 * t.memory_byte_s;
    if (std::abs(e.memory_byte_s - t.memory_byte_s) > allowed) {
      out.memory_within_bound = false;
      spdlog::warn("memory of {} on {}: {:.6g} byte-s measured, {:.6g} true, bound {:.6g}",
                   k.second, k.first, e.memory_byte_s, t.memory_byte_s, allowed);
    }
    ++sc.n;
    out.containers.push_back({k.first, k.second, tenants[k.first] <= 1, cpu_pp, std::nullopt});
    if (t.energy_j > 0) {
      const double rel = std::abs(e.energy_j - t.energy_j) / t.energy_j;
      ++sc.energy_n;
      sc.energy_sum += rel, sc.energy_worst = std::max(sc.energy_worst, rel);
      out.containers.back().energy_rel = rel;
    }
    sc.cpu_sum += cpu_pp, sc.cpu_worst = std::max(sc.cpu_worst, cpu_pp);
    sc.mem_sum += mem_rel, sc.mem_worst = std::max(sc.mem_worst, mem_rel);
    sc.naive_sum += naive_pp, sc.naive_worst = std::max(sc.naive_worst, naive_pp);
  }
  return out;
}

// The run's line and the per-mode error table.
void PrintTable(const SimulateOptions& o, const scenario::Scenario& s, const Measured& m,
                double end, const Scores& scores) {
  fmt::print(
      "gpumeter simulate: scenario '{}', driver profile {}, t={}..{} s, step {} s, noise {} (seed "
      "{}), "
      "{} intervals, {} unit-intervals{}\n",
      s.name, o.driver_profile, o.from_s, end, o.step_s, o.noise, o.seed, m.intervals,
      m.unit_intervals,
      m.lost_intervals
          ? fmt::format(" ({} GPU-intervals lost: left out of the score)", m.lost_intervals)
          : "");
  fmt::print(
      "per-container error against ground truth (compute in percentage points of the unit's "
      "time)\n");
  fmt::print("{:<13} {:>10} {:>22} {:>22} {:>20} {:>26}\n", "mode", "containers",
             "compute mean / worst", "memory mean / worst", "energy mean / worst",
             "naive compute mean / worst");
  for (const auto& [mode, sc] : scores.by_mode) {
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
  // Per container: whether it was alone on its unit (a tenant of a shared MIG instance has an
  // estimated split, scored apart by readers of this list).
  fmt::print("per container (unit, alone|shared, compute error pp, energy error %):\n");
  for (const auto& c : scores.containers)
    fmt::print("  {} {} {} {:.2f} {}\n", c.container, c.unit, c.alone ? "alone" : "shared",
               c.cpu_pp, c.energy_rel ? fmt::format("{:.2f}", *c.energy_rel * 100) : "n/a");
}

// Conservation, the fitted idle power of the first MIG GPU, the memory bound and the verdict
// against the targets; true when they are met.
bool PrintVerdict(const scenario::Scenario& s, const Measured& m, const Scores& scores,
                  const attribution::Accountant& accountant) {
  fmt::print(
      "conservation: worst |sum of rows / capacity - 1| = {:.1e} (memory, compute, energy)\n",
      m.worst_conservation);
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
             scores.memory_within_bound ? "every container within" : "some container OUTSIDE");
  bool met = m.worst_conservation <= 1e-9 && scores.memory_within_bound;
  for (const auto& [mode, sc] : scores.by_mode)
    met = met && sc.cpu_sum / sc.n <= 2.0 && sc.cpu_worst <= 5.0 &&
          (sc.energy_n == 0 || sc.energy_sum / sc.energy_n <= 0.03);
  fmt::print("targets: {}\n", met ? "met" : "NOT met");
  return met;
}

}  // namespace

int RunSimulate(const SimulateOptions& o, const std::string& argv0) {
  const auto exe_dir = ExeDir(argv0);
  auto loaded = LoadScenario(o.scenario, o.scenario_dir, exe_dir);
  if (!loaded) {
    spdlog::error("{}", loaded.error().message);
    return 2;
  }
  const scenario::Scenario& s = loaded->scenario;
  const double to = o.to_s > 0 ? o.to_s : s.duration_s;
  if (to <= o.from_s + o.step_s) {
    spdlog::error("--from {} / --to {}: the run must span more than one --step", o.from_s, to);
    return 2;
  }

  Harness h;
  if (const int rc = OpenFakeNvml(o, loaded->path, exe_dir, h)) return rc;
  h.dcgm = SimulatedDcgm::For(s);
  attribution::Accountant accountant(ScenarioContext(s, h));
  const Measured m = Measure(o, to, h, accountant);
  CloseFakeNvml(h);

  const Scores scores = ScoreAgainstTruth(o, s, m, h.now);
  PrintTable(o, s, m, h.now, scores);
  return PrintVerdict(s, m, scores, accountant) ? 0 : 1;
}

}  // namespace gpumeter::app
