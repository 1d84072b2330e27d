// Reading usage back from the store's tables: the minutes of a window, or their hourly rollups
// where the window covers whole hours already rolled up (or the minutes were pruned), summed per
// bucket by range scans in primary-key order, with their units and owners looked up by id.
// Internal to the store (Store::QuerySnapshot calls it inside its read transaction).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "store/store.h"

struct sqlite3;

namespace gpumeter::store {

// Store::Fail: an error naming the store and SQLite's message, called while the failed
// statement is still open.
using FailFn = std::function<Error(const std::string&)>;

// The usage of [from_unix_s, to_unix_s) per `bucket_s` seconds (0: one bucket), keyed by each
// bucket's start; `rolled_up_to_hour` is the store's meta row (hours before it are rolled up);
// `schema_version` the file's (1 has no unknown compute, 1-2 no bounds: read as 0, what they knew).
// An id with no row is an internal error naming the store at `path`. Borrows `db`.
Expected<std::map<int64_t, std::vector<UnitRecord>>> ReadSums(
    sqlite3* db, const FailFn& fail, const std::string& path, int64_t schema_version,
    int64_t rolled_up_to_hour, int64_t from_unix_s, int64_t to_unix_s, int64_t bucket_s);

}  // namespace gpumeter::store
