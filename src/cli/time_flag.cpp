// A flag that takes an instant: RFC 3339 or Unix seconds, checked as CLI11 parses it.
#include <functional>
#include <string>
#include <utility>

#include "app/usage/rightsize.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddTimeFlag(CLI::App* cmd, const std::string& name, std::function<void(int64_t)> set,
                 const std::string& help) {
  cmd->add_option_function<std::string>(
      name,
      [name, set = std::move(set)](const std::string& text) {
        auto t = app::ParseTimeFlag(name, text);
        if (!t) throw CLI::ValidationError(t.error().message);
        set(*t);
      },
      help + ": RFC 3339 (2026-12-01T00:00:00Z) or Unix seconds");
}

}  // namespace gpumeter::cli
