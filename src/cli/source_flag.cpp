// --source, parsed as CLI11 reads it: the use cases receive an app::UsageSource.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/usage/usage_source.h"
#include "cli/commands.h"

namespace gpumeter::cli {

CLI::Option* AddSourceFlag(CLI::App* cmd, std::function<void(app::UsageSource)> set,
                           std::vector<app::UsageSource::Kind> accepted, const std::string& help) {
  return cmd->add_option_function<std::string>(
      "--source",
      [set = std::move(set), accepted = std::move(accepted)](const std::string& text) {
        auto source = app::ParseUsageSource("--source", text, accepted);
        if (!source) throw CLI::ValidationError(source.error().message);
        set(std::move(*source));
      },
      help);
}

}  // namespace gpumeter::cli
