// The flags that price and group usage, the same on report and top: --policy and --idle into the
// options' cost::Policy, --by into dimensions, each checked as CLI11 reads it.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/usage/cost_flags.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddPolicyFlags(CLI::App* cmd, cost::Policy& policy) {
  cmd->add_option_function<std::string>(
         "--policy",
         [&policy](const std::string& text) {
           if (auto r = app::SetPolicyFlag(text, policy); !r)
             throw CLI::ValidationError(r.error().message);
         },
         "Cost follows memory, compute, blend:ALPHA or request")
      ->default_str("memory");
  cmd->add_option_function<std::string>(
         "--idle",
         [&policy](const std::string& text) {
           if (auto r = app::SetIdleFlag(text, policy); !r)
             throw CLI::ValidationError(r.error().message);
         },
         "Idle cost: share (by use), owner (by request) or separate")
      ->default_str("share");
}

void AddGroupByFlag(CLI::App* cmd, std::vector<std::string>& by, const std::string& help) {
  cmd->add_option_function<std::string>(
         "--by",
         [&by](const std::string& text) {
           auto dims = app::ParseByFlag(text);
           if (!dims) throw CLI::ValidationError(dims.error().message);
           by = std::move(*dims);
         },
         help)
      ->default_str(fmt::format("{}", fmt::join(by, ",")));
}

}  // namespace gpumeter::cli
