// The sampling loop's flags, the same on every command that samples NVML (agent, demo).
#include "cli/commands.h"

namespace gpumeter::cli {

void AddSamplingFlags(CLI::App* cmd, double& interval_s, double& call_deadline_s) {
  cmd->add_option("--interval", interval_s, "Sampling interval in seconds")
      ->check(CLI::Range(0.05, 60.0))
      ->capture_default_str();
  cmd->add_option("--call-deadline", call_deadline_s, "Deadline per NVML call in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

}  // namespace gpumeter::cli
