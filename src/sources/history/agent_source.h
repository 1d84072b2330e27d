// `gpumeter top --source agent:URL`: one frame from a gpumeter agent's JSON API
// (/api/v1/units, /api/v1/ledger, /api/v1/findings; docs/api.md): each unit with its latest
// interval's readings, and its owners' means over that interval. Replies are checked before use:
// the shapes, numbers finite and in range, and no more than a sane number of units, owners and
// findings; a reply that fails is an error naming the path and the field, never a frame that
// looks right. Parsing is pure; FetchAgentFrame blocks on HTTP (its client's deadlines).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/top/frame.h"
#include "sources/history/agent_client.h"

namespace gpumeter::history {

// The three replies as parsed JSON into a frame (unpriced) of `source` at `at_unix_s`.
Expected<top::FrameData> FrameFromAgentJson(const nlohmann::json& units,
                                            const nlohmann::json& ledger,
                                            const nlohmann::json& findings,
                                            const std::string& source, int64_t at_unix_s);

// GETs the three paths from `client` and parses them (above).
Expected<top::FrameData> FetchAgentFrame(const AgentClient& client, int64_t at_unix_s);

}  // namespace gpumeter::history
