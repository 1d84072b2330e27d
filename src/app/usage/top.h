// `gpumeter top`: the live view of who uses which GPU, per pod (docs/top.md). From an agent's
// JSON API (one node) or from Prometheus (the cluster), refreshed every --interval in a
// full-screen terminal view (ncurses), or one frame as plain text or JSON with --once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/usage/usage_source.h"
#include "common/duration.h"
#include "core/cost/allocate.h"

namespace gpumeter::app {

struct TopOptions {
  std::optional<UsageSource> source;  // an agent, Prometheus or a saved frame; none: agent:<agent>
  std::string agent;  // --agent URL, the shorthand for agent:URL; empty: the local agent
  std::string agent_token_file, agent_ca_file;
  Seconds interval{1};  // refresh; cli checks [0.1 s, 1 h]
  Seconds window{60};   // prometheus: the rates' window; cli checks [1 s, 1 d]
  std::string pricing_file;
  cost::Policy policy;         // --policy and --idle
  std::string view = "units";  // units | pods | findings
  std::string sort = "compute";
  std::string by = "container";
  std::string ns;  // namespace filter
  bool once = false;
  std::string format = "text";  // --once: text | json
  // --once from Prometheus: the frame as it was at this instant (Unix seconds); 0: now. A past
  // instant is settled: every scrape up to it has landed, so the frame no longer changes.
  int64_t at_s = 0;
};

// The local agent's address (agent and demo listen on port 9402 by default).
inline constexpr const char* kLocalAgent = "http://127.0.0.1:9402";

// 0 ok; 1 the source failed (--once) or the terminal could not be driven; 2 bad input.
int RunTop(const TopOptions& options);

}  // namespace gpumeter::app
