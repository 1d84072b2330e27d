// Reading usage back from the store's tables: the minutes of a window, or their hourly rollups
// where the window covers whole hours already rolled up (or the minutes were pruned), summed per
// bucket by range scans in primary-key order, with their units and owners looked up by id.
// Internal to the store (Store::QuerySnapshot calls it inside its read transaction).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "store/store.h"

struct sqlite3;

namespace gpumeter::store {

// Store::Fail: an error naming the store and SQLite's message, called while the failed
// statement is still open.
using FailFn = std::function<Error(const std::string&)>;

// The memory busy time an owner row of a store before schema 5 did not record, as an SQL expression
// over a row of usage_minutes (level 0) or usage_hours (1): unknown for the time its unit was
// accounted in that minute or hour, for every owner but idle and unattributed (as compute's
// unknown is). Read-only readers select it; the migration to 5 writes it.
std::string UnrecordedTrafficSql(int level);
// The same store's unit: its unattributed owner holds the unit's seconds of traffic (added if
// the unit has none), so the unit's traffic adds up to its time, as the migration to 5 writes it.
void HoldUnrecordedTraffic(UnitRecord& r);

// The usage of [from_unix_s, to_unix_s) per `bucket_s` seconds (0: one bucket), keyed by each
// bucket's start; `rolled_up_to_hour` is the store's meta row (hours before it are rolled up);
// `schema_version` the file's (1 has no unknown compute, 1-2 no bounds: read as 0, what they knew;
// 1-4 no memory busy time: unknown).
// An id with no row is an internal error naming the store at `path`. Borrows `db`.
Expected<std::map<int64_t, std::vector<UnitRecord>>> ReadSums(
    sqlite3* db, const FailFn& fail, const std::string& path, int64_t schema_version,
    int64_t rolled_up_to_hour, int64_t from_unix_s, int64_t to_unix_s, int64_t bucket_s);

}  // namespace gpumeter::store
