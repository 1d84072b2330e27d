// --source, parsed as CLI11 reads it: the use cases receive an app::UsageSource.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/usage/usage_source.h"
#include "cli/commands.h"

namespace gpumeter::cli {

CLI::Option* AddSourceFlag(CLI::App* cmd, std::function<void(app::UsageSource)> set,
                           std::vector<app::UsageSource::Kind> accepted, const std::string& help,
                           bool required) {
  const bool stores =
      std::find(accepted.begin(), accepted.end(), app::UsageSource::Kind::kStore) != accepted.end();
  auto* source = cmd->add_option_function<std::string>(
      "--source",
      [set, accepted](const std::string& text) {
        auto parsed = app::ParseUsageSource("--source", text, accepted);
        if (!parsed) throw CLI::ValidationError(parsed.error().message);
        set(std::move(*parsed));
      },
      help);
  CLI::Option* store = nullptr;
  if (stores) {
    store = cmd->add_option_function<std::string>(
        "--store",
        [set, accepted](const std::string& path) {
          auto parsed = app::ParseUsageSource("--store", "sqlite:" + path, accepted);
          if (!parsed) throw CLI::ValidationError(parsed.error().message);
          set(std::move(*parsed));
        },
        "The usage store PATH: the same as --source sqlite:PATH (as agent --store names it)");
    store->excludes(source);
    source->excludes(store);
  }
  if (required && !store) source->required();
  if (required && store)
    cmd->callback([source, store] {
      if (source->count() == 0 && store->count() == 0)
        throw CLI::RequiredError("--source (or --store PATH)");
    });
  return source;
}

}  // namespace gpumeter::cli
