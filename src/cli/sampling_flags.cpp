// The sampling loop's flags, the same on every command that samples NVML (agent, demo).
#include "cli/commands.h"

namespace gpumeter::cli {

void AddSamplingFlags(CLI::App* cmd, Seconds& interval, Seconds& call_deadline) {
  AddDurationOption(cmd, "--interval", interval, "Sampling interval", Seconds(0.05), Seconds(60));
  AddDurationOption(cmd, "--call-deadline", call_deadline, "Deadline per NVML call", Seconds(0.001),
                    Seconds(600));
}

}  // namespace gpumeter::cli
