#include "app/sim/simulate.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "app/agent/agent_flags.h"
#include "app/sim/paths.h"
#include "app/sim/scenario_node.h"
#include "app/sim/simulate_dcgm.h"
#include "common/json/key_case.h"
#include "core/attribution/observe.h"
#include "node/pipeline/pipeline.h"
#include "sim/scenario/loader.h"
#include "sim/score/simulate_score.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::app {
namespace {

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
  std::optional<double> dcgm_read_s;            // when it was last read (scenario seconds)
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

// Each pass's window and busy values: a held (DCGM-fed) unit's ledger comes passes later and is
// scored over the time it covers, against the naive values of those passes.
struct PassBusy {
  double from_s, to_s;
  std::map<std::string, double> busy;
};

// A ledger booked late (held for its DCGM collection), scored over the time it covers: the naive
// value is those passes' busy, and where its ends are not sample instants (a held interval split
// at a collection's end) memory is judged by the samples of the passes it touches.
void ScoreLate(const attribution::UnitLedger& l, double to_s, const std::deque<PassBusy>& passes,
               Scorer& scorer) {
  const double end = to_s - l.late_seconds, begin = end - l.seconds;
  double covered = 0, weighted = 0;
  std::vector<std::pair<double, double>> sampled;
  bool on_samples_from = false, on_samples_to = false;
  for (const auto& p : passes) {
    const double overlap = std::min(end, p.to_s) - std::max(begin, p.from_s);
    if (overlap > 0) sampled.emplace_back(p.from_s, p.to_s);
    if (const auto b = p.busy.find(l.uuid); b != p.busy.end() && overlap > 0)
      covered += overlap, weighted += b->second * overlap;
    on_samples_from = on_samples_from || std::abs(p.from_s - begin) < 1e-6;
    on_samples_to = on_samples_to || std::abs(p.to_s - end) < 1e-6;
  }
  if (on_samples_from && on_samples_to) sampled.clear();
  std::map<std::string, double> naive;
  if (covered > 0) naive[l.uuid] = weighted / covered;
  scorer.AddInterval(begin, end, {l}, naive, sampled);
}

// What the run measured: the scores, the intervals, the lost GPU-intervals.
struct Measured {
  ScoreReport report;
  size_t intervals = 0, unit_intervals = 0, lost_intervals = 0;
  std::optional<attribution::Accountant::IdlePower> idle;  // of the first MIG GPU, if any
  double samples_uncovered_s = 0;  // Σ gpumeter_process_samples_uncovered_seconds_total
  double held_at_end_s = 0;        // seconds of DCGM-fed intervals still held when the run ended
};

// Busy value per unit as NVML reported it, for the naive labelling; GPUs that answered nothing
// are counted.
std::map<std::string, double> BusyOf(const gpu::GpuSnapshot& snap, Measured& m) {
  std::map<std::string, double> busy;
  for (const auto& d : snap.devices) {
    m.lost_intervals += d.lost;
    if (const auto b = attribution::BusyFraction(d)) busy[d.uuid] = *b;
    for (const auto& mi : d.mig_instances)
      if (const auto a = attribution::InstanceActivity(mi)) busy[mi.uuid] = *a;
  }
  return busy;
}

// One sampling pass at the harness's time, as the agent's sampler makes it: the /proc tree of that
// moment, the NVML source's snapshot, stamped on the harness's clocks. Null when NVML failed.
std::shared_ptr<gpu::SampleResult> Pass(Harness& h, ScenarioNode& node, uint64_t sequence) {
  h.set_time(h.now);
  if (auto proc = node.RefreshProc(h.now); !proc)
    spdlog::warn("simulated /proc at t={}: {}", h.now, proc.error().message);
  auto snap = h.source->Sample();
  if (!snap) {
    spdlog::error("sample at t={}: {}", h.now, snap.error().message);
    return nullptr;
  }
  // The node's dcgm-exporter page, read as the agent's DCGM thread does: every poll period since
  // the last read (a collection is seen at most that late, whatever the step), then now.
  if (h.dcgm) {
    const double wall = static_cast<double>(snap->timestamp_us) / 1e6;
    const double poll = h.dcgm->source().options().poll_interval_s;
    if (h.dcgm_read_s)
      for (double t = *h.dcgm_read_s + poll; t < h.now; t += poll)
        h.dcgm->Read(t, wall - (h.now - t));
    h.dcgm->Read(h.now, wall);
    h.dcgm_read_s = h.now;
  }
  auto r = std::make_shared<gpu::SampleResult>();
  r->sequence = sequence;
  r->taken = std::chrono::steady_clock::time_point{} +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(h.now));
  r->wall = std::chrono::system_clock::time_point{} +
            std::chrono::microseconds(h.epoch0 + static_cast<uint64_t>(std::llround(h.now * 1e6)));
  r->ok = true;
  r->snapshot = std::move(*snap);
  return r;
}

// As the agent's sampler: between passes longer than the drain interval, the driver's buffers are
// drained at that interval from the pass before, up to the next pass at `t`, and the processes
// each drain met are identified in the /proc tree of that moment.
void DrainUntil(const SimulateOptions& o, Harness& h, ScenarioNode& node,
                node::NodePipeline& pipeline, double t) {
  if (o.drain_s <= 0 || o.step_s <= o.drain_s) return;
  for (double d = h.now + o.drain_s; d < t - 1e-6; d += o.drain_s) {
    h.now = d;
    h.set_time(d);
    const auto met = h.source->Drain();
    if (met.empty()) continue;
    if (auto proc = node.RefreshProc(d); !proc)
      spdlog::warn("simulated /proc at t={}: {}", d, proc.error().message);
    pipeline.OnDrain(met);
  }
}

std::string StepText(const SimulateOptions& o) {
  return o.drain_s > 0 && o.step_s > o.drain_s
             ? fmt::format("{} s (buffers drained every {} s)", o.step_s, o.drain_s)
             : fmt::format("{} s", o.step_s);
}

// Steps the fake's clock through the sample times up to `to`; at each, one pass through the
// production pipeline (kubelet, pods, ResourceSlices, /proc, NVML), whose interval is scored.
Measured Measure(const SimulateOptions& o, const scenario::Scenario& s, double to, Harness& h,
                 ScenarioNode& node, const std::map<std::string, double>& idle_power) {
  Measured m;
  auto sources = node.sources();
  if (h.dcgm) sources.dcgm = &h.dcgm->source();
  auto options = node.pipeline_options();
  options.accountant.idle_power_watts = idle_power;
  node::NodePipeline pipeline(sources, options);
  Scorer scorer(s, o.step_s);
  std::deque<PassBusy> passes;  // the last 10 minutes': more than anything is ever held
  auto score = [&](double to_s, double len, const std::vector<attribution::UnitLedger>& ledgers,
                   const std::map<std::string, double>& busy) {
    std::vector<attribution::UnitLedger> on_time;
    for (const auto& l : ledgers) {
      if (l.late_seconds <= 0 && std::abs(l.seconds - len) < 1e-9) {
        on_time.push_back(l);
        continue;
      }
      ScoreLate(l, to_s, passes, scorer);
    }
    if (!on_time.empty()) scorer.AddInterval(to_s - len, to_s, on_time, busy);
  };
  uint64_t sequence = 0;
  if (auto first = Pass(h, node, ++sequence)) pipeline.OnPass(std::move(first));  // primes
  const double start = h.now;
  for (const double t : SampleTimes(o, to)) {
    const double t_prev = h.now;
    DrainUntil(o, h, node, pipeline, t);
    h.now = t;
    auto pass = Pass(h, node, ++sequence);
    if (!pass) continue;
    const auto busy = BusyOf(pass->snapshot, m);
    pipeline.OnPass(pass);
    passes.push_back({t_prev, h.now, busy});
    while (passes.front().to_s < h.now - 600) passes.pop_front();
    ++m.intervals;  // a DCGM-fed GPU's ledgers of it may come passes later
    const auto state = pipeline.Latest();
    if (state->last_interval.empty()) continue;
    m.unit_intervals += state->last_interval.size();
    score(h.now, h.now - t_prev, state->last_interval, busy);
  }
  // What is still held for DCGM activity when the run ends (at most a collection) is what the
  // agent books unknown at a stop: the scenario's time ends before its collection comes, so it is
  // told, not scored.
  const auto before = pipeline.Latest()->intervals;
  pipeline.Finish();
  if (const auto state = pipeline.Latest(); state->intervals != before)
    for (const auto& l : state->last_interval)
      m.held_at_end_s = std::max(m.held_at_end_s, l.seconds);
  m.report = scorer.Finish(start, h.now);
  if (const auto last = pipeline.Latest())
    for (const auto& [uuid, t] : last->unit_totals)
      m.samples_uncovered_s += t.samples_uncovered_seconds;
  for (const auto& g : s.gpus)
    if (g.mig_enabled) {
      m.idle = pipeline.IdlePower(g.uuid);
      break;
    }
  return m;
}

const char* IdleSourceName(attribution::Accountant::IdleSource s) {
  switch (s) {
    case attribution::Accountant::IdleSource::kConfigured:
      return "configured";
    case attribution::Accountant::IdleSource::kFitted:
      return "fitted";
    case attribution::Accountant::IdleSource::kSeenIdle:
      return "seen idle (board power while nothing ran)";
  }
  return "";
}

std::string Pair(double mean, double worst, const char* fmt_each) {
  return fmt::format(fmt::runtime(fmt_each), mean) + " / " +
         fmt::format(fmt::runtime(fmt_each), worst);
}

// An estimated energy split's line under its mode: how often the truth lay within the bound, and
// how wide the bound was.
void PrintEnergyBound(const GroupScore& g) {
  if (!g.energy_bound_n) return;
  fmt::print(
      "{:<13} energy estimated inside collections: truth within the bound in {:.1f}% of {} "
      "container-intervals, bound mean +/-{:.1f}% of the energy\n",
      "", 100.0 * g.energy_bound_within / g.energy_bound_n, g.energy_bound_n,
      g.energy_bound_mean_width_pct);
}

// The run's line, the per-mode error table, conservation, memory bound and the verdict.
void PrintTable(const SimulateOptions& o, const scenario::Scenario& s, const Measured& m,
                double end) {
  const auto& r = m.report;
  fmt::print(
      "gpumeter simulate: scenario '{}', driver profile {}, t={}..{} s, step {}, noise {} (seed "
      "{}), {} intervals, {} unit-intervals{}\n",
      s.name, o.driver_profile, o.from_s, end, StepText(o), o.noise, o.seed, m.intervals,
      m.unit_intervals,
      m.lost_intervals
          ? fmt::format(" ({} GPU-intervals lost: scored as unknown)", m.lost_intervals)
          : "");
  if (m.held_at_end_s > 0)
    fmt::print(
        "dcgm: the last {:.1f} s were still waiting for the exporter's next collection when the "
        "run "
        "ended (an agent books them unknown at a stop): not scored\n",
        m.held_at_end_s);
  if (m.samples_uncovered_s > 0)
    fmt::print(
        "samples: {:.1f} s of per-process samples were gone from the driver's buffer when read "
        "(the step is longer than the buffer holds; gpumeter_process_samples_uncovered_seconds_"
        "total): the covered part's shares stand for them, as estimates\n",
        m.samples_uncovered_s);
  fmt::print(
      "per-container error against ground truth (compute in percentage points of the unit's "
      "time; '/estimate' rows: estimated splits, judged by their total per unit and each "
      "interval against its bound)\n");
  fmt::print("{:<13} {:>10} {:>22} {:>22} {:>20} {:>10} {:>26}\n", "mode", "containers",
             "compute mean / worst", "memory mean / worst", "energy mean / worst", "unknown",
             "naive compute mean / worst");
  for (const auto& [mode, g] : r.groups) {
    const std::string energy =
        g.energy_n ? Pair(g.energy_mean * 100, g.energy_worst * 100, "{:.2f}%") : "n/a";
    fmt::print(
        "{:<13} {:>10} {:>10.2f} / {:>6.2f} pp {:>9.3f}% / {:>7.3f}% {:>20} {:>9.0f}s {:>14.2f} / "
        "{:>6.2f} pp\n",
        mode, g.n, g.cpu_mean, g.cpu_worst, g.mem_mean * 100, g.mem_worst * 100, energy,
        g.unknown_s + g.compute_unknown_s, g.naive_mean, g.naive_worst);
    if (g.estimate)
      fmt::print("{:<13} split's total per unit: worst {:.2f} pp; {}\n", "", g.unit_total_worst,
                 g.bound_n ? fmt::format("truth within the bound in {:.1f}% of {} container-"
                                         "intervals, bound mean +/-{:.2f} pp",
                                         100.0 * g.bound_within / g.bound_n, g.bound_n,
                                         g.bound_mean_width_pp)
                           : std::string("no estimated interval judged"));
    fmt::print("{:<13} memory traffic: {:.2f} / {:.2f} pp mean / worst{}{}\n", "", g.traffic_mean,
               g.traffic_worst,
               g.traffic_bound_n
                   ? fmt::format("; estimated: truth within the bound in {:.1f}% of {}, bound "
                                 "mean +/-{:.2f} pp",
                                 100.0 * g.traffic_bound_within / g.traffic_bound_n,
                                 g.traffic_bound_n, g.traffic_bound_mean_width_pp)
                   : std::string(),
               g.memory_busy_unknown_s > 0 ? fmt::format("; unknown {:.0f} container-s (no signal)",
                                                         g.memory_busy_unknown_s)
                                           : std::string());
    PrintEnergyBound(g);
  }
  fmt::print(
      "conservation: worst |sum of rows / capacity - 1| = {:.1e} (memory, compute, energy, memory "
      "traffic)\n",
      r.worst_conservation);
  if (const auto* g = [&]() -> const scenario::Gpu* {
        for (const auto& x : s.gpus)
          if (x.mig_enabled) return &x;
        return nullptr;
      }())
    fmt::print("energy: MIG GPU {} idle power {} (scenario: {:.1f} W)\n", g->uuid,
               m.idle ? fmt::format("{} {:.1f} W", IdleSourceName(m.idle->source), m.idle->watts)
                      : std::string("not estimated"),
               g->power.idle_watts);
  for (const auto& line : r.outside_bound) spdlog::warn("memory of {}", line);
  fmt::print(
      "memory: {} what sampling cannot see (per interval, the true memory's trapezoid at the two "
      "samples against its integral: starts, exits, growth)\n",
      r.memory_within_bound ? "every container within" : "some container OUTSIDE");
  for (const auto& why : r.misses) fmt::print("miss: {}\n", why);
  fmt::print("targets: {}\n", r.met ? "met" : "NOT met");
}

nlohmann::json Errors(double mean, double worst) { return {{"mean", mean}, {"worst", worst}}; }

// One mode's scores in PrintJson's document.
nlohmann::json ModeJson(const std::string& mode, const GroupScore& g) {
  using nlohmann::json;
  return {
      {"mode", mode},
      {"estimate", g.estimate},
      {"containers", g.n},
      {"compute_error_pp", Errors(g.cpu_mean, g.cpu_worst)},
      {"memory_error", Errors(g.mem_mean, g.mem_worst)},
      {"energy_error", g.energy_n ? Errors(g.energy_mean, g.energy_worst) : json(nullptr)},
      {"naive_compute_error_pp", Errors(g.naive_mean, g.naive_worst)},
      {"unknown_seconds", g.unknown_s},
      {"compute_unknown_seconds", g.compute_unknown_s},
      {"estimate_unit_total_error_pp_worst", g.estimate ? json(g.unit_total_worst) : json(nullptr)},
      {"bound_intervals", g.bound_n},
      {"within_bound_fraction",
       g.bound_n ? json(static_cast<double>(g.bound_within) / g.bound_n) : json(nullptr)},
      {"bound_mean_width_pp", g.bound_n ? json(g.bound_mean_width_pp) : json(nullptr)},
      {"memory_traffic_error_pp", Errors(g.traffic_mean, g.traffic_worst)},
      {"memory_traffic_unknown_seconds", g.memory_busy_unknown_s},
      {"memory_traffic_bound_intervals", g.traffic_bound_n},
      {"memory_traffic_within_bound_fraction",
       g.traffic_bound_n ? json(static_cast<double>(g.traffic_bound_within) / g.traffic_bound_n)
                         : json(nullptr)},
      {"memory_traffic_bound_mean_width_pp",
       g.traffic_bound_n ? json(g.traffic_bound_mean_width_pp) : json(nullptr)},
      {"energy_bound_intervals", g.energy_bound_n},
      {"energy_within_bound_fraction",
       g.energy_bound_n ? json(static_cast<double>(g.energy_bound_within) / g.energy_bound_n)
                        : json(nullptr)},
      {"energy_bound_mean_width_pct",
       g.energy_bound_n ? json(g.energy_bound_mean_width_pct) : json(nullptr)}};
}

// One container's scores in PrintJson's document; `span` the run's seconds.
nlohmann::json ContainerJson(const ContainerScore& c, double span) {
  using nlohmann::json;
  const auto rel = [](double est, double truth) {
    return truth > 0 ? json(std::abs(est - truth) / truth) : json(nullptr);
  };
  return {
      {"container", c.container},
      {"unit", c.unit},
      {"mode", c.group},
      {"estimate", c.estimate},
      {"scored", c.scored},
      {"compute_error_pp", std::abs(c.est.compute_s - c.truth.compute_s) / span * 100},
      {"memory_error", rel(c.est.memory_byte_s, c.truth.memory_byte_s)},
      {"energy_error", rel(c.energy_est.energy_j, c.energy_truth.energy_j)},
      {"naive_compute_error_pp", std::abs(c.naive_compute_s - c.truth.compute_s) / span * 100},
      {"unknown_seconds", c.unknown_s},
      {"compute_unknown_seconds", c.compute_unknown_s},
      {"compute_bound_pp", c.bound_n ? json(c.bound_s / span * 100) : json(nullptr)},
      {"within_bound_fraction",
       c.bound_n ? json(static_cast<double>(c.bound_within) / c.bound_n) : json(nullptr)},
      {"energy_estimate", c.energy_estimate},
      {"energy_within_bound_fraction",
       c.energy_bound_n ? json(static_cast<double>(c.energy_bound_within) / c.energy_bound_n)
                        : json(nullptr)},
      {"energy_bound_mean_width_pct",
       c.energy_bound_n ? json(c.energy_bound_width_pct_sum / c.energy_bound_n) : json(nullptr)},
      {"compute_seconds", {{"measured", c.est.compute_s}, {"true", c.truth.compute_s}}},
      {"memory_traffic_error_pp",
       std::abs(c.est.memory_busy_s - c.truth.memory_busy_s) / span * 100},
      {"memory_busy_seconds", {{"measured", c.est.memory_busy_s}, {"true", c.truth.memory_busy_s}}},
      {"memory_traffic_unknown_seconds", c.memory_busy_unknown_s},
      {"energy_joules",
       {{"measured", c.energy_est.energy_j},
        {"true", c.energy_truth.energy_j},
        {"measured_activity_known_or_not", c.energy_any_activity_j}}}};
}

// The same scores as one JSON document, per mode and per container, to compare runs.
void PrintJson(const SimulateOptions& o, const scenario::Scenario& s, const Measured& m,
               double end) {
  using nlohmann::json;
  const auto& r = m.report;
  json modes = json::array(), containers = json::array();
  for (const auto& [mode, g] : r.groups) modes.push_back(ModeJson(mode, g));
  for (const auto& c : r.containers) containers.push_back(ContainerJson(c, r.span_s));
  const json doc = {{"scenario", s.name},
                    {"driver_profile", o.driver_profile},
                    {"seed", o.seed},
                    {"noise", o.noise},
                    {"step_s", o.step_s},
                    {"drain_interval_s", o.drain_s},
                    {"from_s", o.from_s},
                    {"to_s", end},
                    {"intervals", m.intervals},
                    {"samples_uncovered_seconds", m.samples_uncovered_s},
                    {"dcgm_held_at_end_seconds", m.held_at_end_s},
                    {"mig_idle_power", m.idle ? json{{"watts", m.idle->watts},
                                                     {"source", IdleSourceName(m.idle->source)}}
                                              : json(nullptr)},
                    {"modes", modes},
                    {"containers", containers},
                    {"conservation_worst", r.worst_conservation},
                    {"memory_within_bound", r.memory_within_bound},
                    {"misses", r.misses},
                    {"verdict", r.met ? "met" : "NOT met"}};
  // Built in snake_case beside the table's wording; written in camelCase, as all gpumeter JSON.
  const auto camel = json_case::ToCamelCase(doc);
  fmt::print("{}\n", (camel ? *camel : doc).dump(2));
}
}  // namespace

int RunSimulate(const SimulateOptions& o, const std::string& argv0) {
  const auto exe_dir = ExeDir(argv0);
  auto loaded = LoadScenario(o.scenario, o.scenario_dir, exe_dir);
  if (!loaded) {
    spdlog::error("{}", loaded.error().message);
    return 2;
  }
  if (!o.dcgm_exporter)  // the node as it would be without the exporter (also the scores' rows)
    for (auto& g : loaded->scenario.gpus) g.dcgm_exporter = false;
  const scenario::Scenario& s = loaded->scenario;
  const double to = o.to_s > 0 ? o.to_s : s.duration_s;
  if (to <= o.from_s + o.step_s) {
    spdlog::error("--from {} / --to {}: the run must span more than one --step", o.from_s, to);
    return 2;
  }

  Harness h;
  if (const int rc = OpenFakeNvml(o, loaded->path, exe_dir, h)) return rc;
  if (o.dcgm_exporter) h.dcgm = SimulatedDcgm::For(s);  // null unless a GPU has dcgm_exporter
  auto idle_power = ParseIdlePower(o.idle_power);
  if (!idle_power) {
    spdlog::error("{}", idle_power.error().message);
    CloseFakeNvml(h);
    return 2;
  }
  auto node = ScenarioNode::Start(*loaded, exe_dir);
  if (!node) {
    spdlog::error("{}", node.error().message);
    CloseFakeNvml(h);
    return 1;
  }
  const Measured m = Measure(o, s, to, h, **node, *idle_power);
  CloseFakeNvml(h);
  if (o.format == "json")
    PrintJson(o, s, m, h.now);
  else
    PrintTable(o, s, m, h.now);
  return m.report.met ? 0 : 1;
}

}  // namespace gpumeter::app
