// Where a command reads recorded usage from, as --source names it: a store file (sqlite:PATH), a
// Prometheus-compatible server (prometheus:URL), an agent's JSON API (agent:URL, `top` only) or
// a frame saved by `top --once --format json` (file:PATH, `top` only). Parsed once, as the flag
// is read (cli/), so the use cases receive the kind and never look at the prefix. Pure values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpumeter::app {

struct UsageSource {
  enum class Kind { kStore, kPrometheus, kAgent, kFile };
  Kind kind = Kind::kStore;
  std::string where;  // the path or URL after the prefix; never empty once parsed

  bool operator==(const UsageSource&) const = default;
};

// The prefix of `kind`, with its colon: "sqlite:", "prometheus:", "agent:", "file:".
std::string_view PrefixOf(UsageSource::Kind kind);
// "sqlite:/var/lib/gpumeter/usage.db": as the user would write it again.
std::string ToString(const UsageSource& source);

// `text` as a source of one of the `accepted` kinds. Errors name `flag` and `text` and list what
// the command accepts, in the order given ("--source 'mysql:x': expected sqlite:PATH or
// prometheus:URL"); an empty path or URL is refused.
Expected<UsageSource> ParseUsageSource(const std::string& flag, const std::string& text,
                                       const std::vector<UsageSource::Kind>& accepted);

}  // namespace gpumeter::app
