// `simulate`'s dcgm-exporter: where a scenario has GPUs with `dcgm_exporter: true`, the page the
// node's exporter would show at the harness's time (sim::DcgmExporterPage) goes through the
// agent's own DCGM source, as `--dcgm-metrics` would read it (without HTTP: the page is handed
// over, so the gpumeter binary carries no fake server). A harness that runs NodePipeline gives it
// source() as PipelineSources::dcgm and calls Read as the agent's DCGM thread would: every poll
// period (2 s) between passes and before each. Not thread-safe.
#pragma once

#include <memory>

#include "domain/gpu_types.h"
#include "sim/scenario/model.h"
#include "sources/dcgm/dcgm_source.h"

namespace gpumeter::app {

class SimulatedDcgm {
 public:
  // Null when the scenario has no dcgm-exporter. `s` must outlive it.
  static std::unique_ptr<SimulatedDcgm> For(const scenario::Scenario& s);

  // The page at scenario time `t_s`, read at `wall_s` (the snapshot's clock, in seconds).
  void Read(double t_s, double wall_s);

  const dcgm::DcgmSource& source() const { return source_; }

 private:
  explicit SimulatedDcgm(const scenario::Scenario& s);
  const scenario::Scenario& scenario_;
  dcgm::DcgmSource source_;
};

}  // namespace gpumeter::app
