#include "sim/node/dcgm_page.h"

#include <fmt/format.h>

#include <cmath>

#include "sim/scenario/truth.h"

namespace gpumeter::sim {

bool HasDcgmExporter(const scenario::Scenario& s) {
  for (const auto& g : s.gpus)
    if (g.dcgm_exporter) return true;
  return false;
}

namespace {

std::string Labels(const scenario::Scenario& s, const scenario::Gpu& g) {
  return fmt::format(
      "gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{}\","
      "modelName=\"{}\",hostname=\"{}\",DCGM_FI_DRIVER_VERSION=\"{}\"",
      g.index, g.uuid, 7 + 8 * g.index, g.index, g.model, s.node_name, s.driver.version);
}

void GpuSeries(const scenario::Scenario& s, const scenario::Gpu& g, double t_s, std::string& power,
               std::string& energy, std::string& active, std::string& dram) {
  const double period = g.dcgm_interval_s;
  const double tc = std::floor(t_s / period) * period;  // the last collection
  const std::string labels = Labels(s, g);
  power += fmt::format("DCGM_FI_DEV_POWER_USAGE{{{}}} {:.3f}\n", labels,
                       scenario::GpuPowerWattsAt(s, g, tc));
  energy += fmt::format("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{}}} {:.0f}\n", labels,
                        scenario::GpuEnergyJoulesAt(s, g, tc) * 1000);
  auto mean = [&](const std::string& unit) {
    return scenario::UnitBusySeconds(s, unit, tc - period, tc) / period;
  };
  // The memory's busy time over the collection (the scenario's `mem`), as DRAM_ACTIVE.
  auto traffic = [&](const std::string& unit) {
    return scenario::UnitMemoryBusySeconds(s, unit, tc - period, tc) / period;
  };
  if (!g.mig_enabled) {
    active += fmt::format("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{}}} {:.6f}\n", labels, mean(g.uuid));
    dram += fmt::format("DCGM_FI_PROF_DRAM_ACTIVE{{{}}} {:.6f}\n", labels, traffic(g.uuid));
    return;
  }
  for (const auto& m : g.mig_instances) {
    const double cap = static_cast<double>(m.compute_slices ? m.compute_slices : m.slices) /
                       static_cast<double>(m.slices);
    active += fmt::format(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{},GPU_I_PROFILE=\"{}\",GPU_I_ID=\"{}\"}} {:.6f}\n", labels,
        m.profile, m.gi_id, mean(m.uuid) * cap);
    dram +=
        fmt::format("DCGM_FI_PROF_DRAM_ACTIVE{{{},GPU_I_PROFILE=\"{}\",GPU_I_ID=\"{}\"}} {:.6f}\n",
                    labels, m.profile, m.gi_id, traffic(m.uuid));
  }
}

}  // namespace

std::string DcgmExporterPage(const scenario::Scenario& s, double t_s) {
  std::string power, energy, active, dram;
  for (const auto& g : s.gpus)
    if (g.dcgm_exporter) GpuSeries(s, g, t_s, power, energy, active, dram);
  if (active.empty()) return "";
  return "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"
         "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n" +
         power +
         "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in "
         "mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n" +
         energy +
         "# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.\n"
         "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n" +
         active +
         "# HELP DCGM_FI_PROF_DRAM_ACTIVE Ratio of cycles the device memory interface is active "
         "sending or receiving data.\n# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge\n" +
         dram;
}

}  // namespace gpumeter::sim
