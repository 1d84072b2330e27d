// The sampling loop's flags, the same on every command that samples NVML (agent, demo), and the
// set of series they serve.
#include "cli/commands.h"

namespace gpumeter::cli {

void AddSamplingFlags(CLI::App* cmd, Seconds& interval, Seconds& call_deadline,
                      Seconds& drain_interval) {
  AddDurationOption(cmd, "--interval", interval, "Sampling interval", Seconds(0.05), Seconds(60));
  AddDurationOption(cmd, "--call-deadline", call_deadline, "Deadline per NVML call", Seconds(0.001),
                    Seconds(600));
  AddDurationOption(cmd, "--drain-interval", drain_interval,
                    "Read NVML's per-process and power sample buffers this often between passes "
                    "when --interval is longer (the driver keeps ~10 s of them; 0: only at each "
                    "pass)",
                    Seconds(0), Seconds(60));
}

void AddContainerSeriesFlag(CLI::App* cmd, bool& full) {
  cmd->add_option_function<std::string>(
         "--container-series", [&full](const std::string& set) { full = set == "full"; },
         "Per-container series on /metrics: default (at most 8 per container and GPU or MIG "
         "instance: usage, energy, cost and their unknowns and bounds; docs/metrics.md) or full "
         "(adds memory traffic, idle cost and the last interval's gauges)")
      ->check(CLI::IsMember({"default", "full"}))
      ->default_str("default");
}

}  // namespace gpumeter::cli
