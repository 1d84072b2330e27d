#include "sinks/sim/score_report.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "common/json/key_case.h"

namespace gpumeter::app {
namespace {

std::string StepText(const SimulateRun& o) {
  return o.drain_s > 0 && o.step_s > o.drain_s
             ? fmt::format("{} s (buffers drained every {} s)", o.step_s, o.drain_s)
             : fmt::format("{} s", o.step_s);
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

nlohmann::json Errors(double mean, double worst) { return {{"mean", mean}, {"worst", worst}}; }

// One mode's scores in PrintSimulateJson's document.
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

// One container's scores in PrintSimulateJson's document; `span` the run's seconds.
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

}  // namespace

// The run's line, the per-mode error table, conservation, memory bound and the verdict.
void PrintSimulateTable(const SimulateRun& o, const scenario::Scenario& s,
                        const SimulateMeasured& m, double end) {
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

// The same scores as one JSON document, per mode and per container, to compare runs.
void PrintSimulateJson(const SimulateRun& o, const scenario::Scenario& s, const SimulateMeasured& m,
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

}  // namespace gpumeter::app
