// The stable serialized form of a NodeSnapshot: one JSON document, camelCase keys, versioned
// ("format": "gpumeter.node-snapshot", "version": 2; version 1, which could not say that a
// process was met between passes only, still reads). An absent key is an unknown value (never a
// 0); the reader refuses what it does not know rather than guessing: an unknown or duplicate key,
// a value of the wrong type, a number out of its range (ratios in [0, 1], percents in [0, 100],
// counts that fit their field), unsorted or repeated PIDs and unit UUIDs, another format or a newer
// version, and nesting deeper than the format has. Text that is not valid UTF-8 (a process's comm
// is raw bytes) is written with U+FFFD in place of each invalid sequence. Pure functions,
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "domain/node_snapshot.h"

namespace gpumeter::domain {

inline constexpr int kNodeSnapshotVersion = 2;

// The snapshot as one line of JSON (no trailing newline).
std::string WriteNodeSnapshot(const NodeSnapshot& snapshot);

// The snapshot written by WriteNodeSnapshot; an error names the key path and what was wrong
// ("gpus.devices[2].memory.totalBytes: not an unsigned integer").
Expected<NodeSnapshot> ReadNodeSnapshot(std::string_view json);

}  // namespace gpumeter::domain
