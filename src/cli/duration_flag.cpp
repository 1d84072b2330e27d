// A duration flag, the same on every command: seconds or a number and a unit (common/duration.h),
// within the range the command allows; the error names the flag.
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/duration_format.h"

namespace gpumeter::cli {

CLI::Option* AddDurationOption(CLI::App* cmd, const std::string& name, Seconds& out,
                               const std::string& help, Seconds min, Seconds max) {
  auto* opt = cmd->add_option_function<std::string>(
      name,
      [&out, name, min, max](const std::string& text) {
        auto d = ParseSeconds(text);
        if (!d) throw CLI::ValidationError(name, d.error().message);
        if (*d < min || *d > max)
          throw CLI::ValidationError(name, fmt::format("'{}': not within [{}, {}]", text,
                                                       FormatDuration(min), FormatDuration(max)));
        out = *d;
      },
      help + " (seconds, or with a unit: 90s, 5m, 1h)");
  opt->default_str(FormatDuration(out));
  return opt;
}

CLI::Option* AddDurationOption(CLI::App* cmd, const std::string& name, double& out_s,
                               const std::string& help, Seconds min, Seconds max) {
  auto* opt = cmd->add_option_function<std::string>(
      name,
      [&out_s, name, min, max](const std::string& text) {
        auto d = ParseSeconds(text);
        if (!d) throw CLI::ValidationError(name, d.error().message);
        if (*d < min || *d > max)
          throw CLI::ValidationError(name, fmt::format("'{}': not within [{}, {}]", text,
                                                       FormatDuration(min), FormatDuration(max)));
        out_s = d->count();
      },
      help + " (seconds, or with a unit: 90s, 5m, 1h)");
  opt->default_str(FormatDuration(Seconds(out_s)));
  return opt;
}

}  // namespace gpumeter::cli
