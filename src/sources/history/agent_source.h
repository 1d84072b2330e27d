// The one reader of a gpumeter agent's JSON API (/api/v1/units, /api/v1/ledger,
// /api/v1/findings; docs/api.md), for `gpumeter top --source agent:URL` (one frame: each unit with
// its latest interval's readings, and its owners' means over that interval) and for
// `gpumeter audit --agent` (the findings, and the split of a GPU). Replies are checked before use:
// the shapes, numbers finite and in range, and no more than a sane number of units, owners and
// findings; a reply that fails is an error (kInvalidInput) naming the path and the field, never
// data that looks right. Parsing is pure; FetchAgentFrame blocks on HTTP (its client's
// deadlines).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/guard/findings.h"
#include "core/top/frame.h"
#include "sources/history/agent_client.h"

namespace gpumeter::history {

// /api/v1/units: the node, the longest interval the readings are means over, and each unit with
// its identity, latest readings and holders (each holder an owner with its share and no use yet).
struct AgentUnits {
  std::string node;
  double span_seconds = 0;
  std::vector<top::UnitNow> units;
};
Expected<AgentUnits> ParseAgentUnits(const nlohmann::json& units);

// One unit of /api/v1/ledger: what it accounted since the agent started (seconds, and memory
// capacity × seconds), and the owners with a row in its latest interval, in the reply's order
// (held_share 0: the holders' shares are the units reply's).
struct AgentLedgerUnit {
  std::string uuid;
  top::Amount seconds, memory_capacity_byte_seconds;
  std::vector<top::OwnerNow> owners;
};
Expected<std::vector<AgentLedgerUnit>> ParseAgentLedger(const nlohmann::json& ledger);

// /api/v1/findings: the agent's node, whether it has taken a good sample yet (before one, nothing
// has been checked), and its open findings.
struct AgentFindings {
  std::string node;
  bool checked = false;
  std::vector<guard::Finding> findings;
};
Expected<AgentFindings> ParseAgentFindings(const nlohmann::json& findings);

// The three replies as parsed JSON into a frame (unpriced) of `source` at `at_unix_s`.
Expected<top::FrameData> FrameFromAgentJson(const nlohmann::json& units,
                                            const nlohmann::json& ledger,
                                            const nlohmann::json& findings,
                                            const std::string& source, int64_t at_unix_s);

// GETs the three paths from `client` and parses them (above).
Expected<top::FrameData> FetchAgentFrame(const AgentClient& client, int64_t at_unix_s);

}  // namespace gpumeter::history
