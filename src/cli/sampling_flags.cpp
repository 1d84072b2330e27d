// The sampling loop's flags, the same on every command that samples NVML (agent, demo).
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

}  // namespace gpumeter::cli
