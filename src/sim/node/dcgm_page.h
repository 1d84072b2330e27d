// The dcgm-exporter page of a scenario's node at scenario time t: for every GPU with
// `dcgm_exporter: true`, what dcgm-exporter (default counters) would show at its last collection
// (every dcgm_interval_s, 30 s by default, at multiples of it since t = 0, as an exporter that
// has run since before the scenario): DCGM_FI_PROF_GR_ENGINE_ACTIVE per MIG GPU instance (or
// for the whole GPU without MIG) = the unit's mean busy fraction over the collection interval
// just ended, capped by its compute instance's share of the GPU instance (compute_slices /
// slices); DCGM_FI_PROF_DRAM_ACTIVE per unit likewise = its mean memory busy time (the scenario's
// `mem`) over the collection; DCGM_FI_DEV_POWER_USAGE and DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ)
// at the collection. Labels as dcgm-exporter ≥ PR #655 writes them (`hostname`). Pure.
#pragma once

#include <string>

#include "sim/scenario/model.h"

namespace gpumeter::sim {

bool HasDcgmExporter(const scenario::Scenario& s);

// "" when no GPU has dcgm_exporter.
std::string DcgmExporterPage(const scenario::Scenario& s, double t_s);

}  // namespace gpumeter::sim
