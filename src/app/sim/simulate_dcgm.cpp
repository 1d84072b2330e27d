#include "app/sim/simulate_dcgm.h"

#include <spdlog/spdlog.h>

#include "sim/node/dcgm_page.h"

namespace gpumeter::app {
namespace {

dcgm::DcgmSourceOptions Options() {
  dcgm::DcgmSourceOptions o;
  o.url = "http://simulated-node:9400/metrics";  // only named in messages: no request is made
  return o;
}

}  // namespace

std::unique_ptr<SimulatedDcgm> SimulatedDcgm::For(const scenario::Scenario& s) {
  if (!sim::HasDcgmExporter(s)) return nullptr;
  return std::unique_ptr<SimulatedDcgm>(new SimulatedDcgm(s));
}

SimulatedDcgm::SimulatedDcgm(const scenario::Scenario& s) : scenario_(s), source_(Options()) {}

void SimulatedDcgm::Read(double t_s, double wall_s) {
  if (auto r = source_.Ingest(sim::DcgmExporterPage(scenario_, t_s), wall_s); !r)
    spdlog::error("simulated dcgm-exporter at t={}: {}", t_s, r.error().message);
}

}  // namespace gpumeter::app
