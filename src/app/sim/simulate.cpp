#include "app/sim/simulate.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

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
#include "core/attribution/observe.h"
#include "node/pipeline/pipeline.h"
#include "sim/scenario/loader.h"
#include "sim/score/simulate_score.h"
#include "sinks/sim/score_report.h"
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

// Busy value per unit as NVML reported it, for the naive labelling; GPUs that answered nothing
// are counted.
std::map<std::string, double> BusyOf(const gpu::GpuSnapshot& snap, SimulateMeasured& m) {
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

// Steps the fake's clock through the sample times up to `to`; at each, one pass through the
// production pipeline (kubelet, pods, ResourceSlices, /proc, NVML), whose interval is scored.
SimulateMeasured Measure(const SimulateOptions& o, const scenario::Scenario& s, double to,
                         Harness& h, ScenarioNode& node,
                         const std::map<std::string, double>& idle_power) {
  SimulateMeasured m;
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
  const SimulateMeasured m = Measure(o, s, to, h, **node, *idle_power);
  CloseFakeNvml(h);
  const SimulateRun run{o.driver_profile, o.noise, o.seed, o.step_s, o.drain_s, o.from_s};
  if (o.format == "json")
    PrintSimulateJson(run, s, m, h.now);
  else
    PrintSimulateTable(run, s, m, h.now);
  return m.report.met ? 0 : 1;
}

}  // namespace gpumeter::app
