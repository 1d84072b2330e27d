#include "store/query.h"

#include <sqlite3.h>

#include <algorithm>
#include <iterator>

#include "store/stmt.h"

namespace gpumeter::store {
namespace {

// The unit and usage rows of a key range, per level (0 minutes, 1 hours), in primary-key order.
constexpr const char* kUnitRows[] = {
    "SELECT minute, unit_id, seconds, memory_capacity_byte_seconds, energy_joules, "
    "energy_unknown_seconds FROM unit_minutes WHERE minute >= ? AND minute < ?",
    "SELECT hour, unit_id, seconds, memory_capacity_byte_seconds, energy_joules, "
    "energy_unknown_seconds FROM unit_hours WHERE hour >= ? AND hour < ?"};
std::string UnrecordedTraffic(const char* table, const char* unit_table, const char* key) {
  return std::string("(CASE WHEN (SELECT kind FROM owners WHERE id = ") + table +
         ".owner_id) IN ('idle', 'unattributed') THEN 0 ELSE (SELECT seconds FROM " + unit_table +
         " u WHERE u." + key + " = " + table + "." + key + " AND u.unit_id = " + table +
         ".unit_id) END)";
}

}  // namespace

void HoldUnrecordedTraffic(UnitRecord& r) {
  auto it = std::find_if(r.owners.begin(), r.owners.end(), [](const OwnerAmounts& o) {
    return o.owner.kind == domain::OwnerKind::kUnattributed;
  });
  if (it == r.owners.end()) {
    OwnerAmounts o;
    o.owner = {domain::OwnerKind::kUnattributed, {}, {}, {}};
    r.owners.push_back(o);
    it = std::prev(r.owners.end());
  }
  it->memory_busy_seconds = r.seconds;
}

std::string UnrecordedTrafficSql(int level) {
  return level == 0 ? UnrecordedTraffic("usage_minutes", "unit_minutes", "minute")
                    : UnrecordedTraffic("usage_hours", "unit_hours", "hour");
}

namespace {

// The usage rows of a store of `version` at `level`: columns a version lacks read as what it
// knew (version 1 has no compute_unknown_seconds, 1-2 no compute_bound_seconds, 1-5 no
// energy_bound_joules: 0; 1-4 no memory busy time: unknown, UnrecordedTraffic).
std::string UsageRowsSql(int64_t version, int level) {
  const char* table = level == 0 ? "usage_minutes" : "usage_hours";
  const char* key = level == 0 ? "minute" : "hour";
  const std::string traffic =
      version >= 5
          ? "memory_busy_seconds, memory_busy_unknown_seconds, memory_busy_bound_seconds"
          : "0, " + UnrecordedTraffic(table, level == 0 ? "unit_minutes" : "unit_hours", key) +
                ", 0";
  return std::string("SELECT ") + key +
         ", unit_id, owner_id, memory_byte_seconds, compute_seconds, energy_joules, "
         "requested_share_seconds, " +
         (version >= 2 ? "compute_unknown_seconds" : "0") + ", " +
         (version >= 3 ? "compute_bound_seconds" : "0") + ", " + traffic + ", " +
         (version >= 6 ? "energy_bound_joules" : "0") + " FROM " + table + " WHERE " + key +
         " >= ? AND " + key + " < ?";
}

// What a query reads: minutes [m0, a) and [b, m1) outside the whole hours [h0, h1) read from the
// rollups (h0 == h1: none).
struct QueryPlan {
  int64_t m0, a, b, m1, h0, h1;
};

// Whole minutes in [from, to); of them, whole hours already rolled up (before `rolled`) come from
// the hourly rows.
Expected<QueryPlan> PlanQuery(sqlite3* db, const FailFn& fail, int64_t rolled, int64_t from,
                              int64_t to, int64_t bucket_s) {
  int64_t m0 = CeilDiv(from, 60);
  const int64_t m1 = FloorDiv(to, 60);
  // A window that starts where minutes were pruned starts at that hour (whole-hour rollups).
  Stmt first(db, "SELECT MIN(minute) FROM unit_minutes");
  if (!first.ok() || first.Step() != SQLITE_ROW)
    return tl::unexpected(fail("reading the oldest minute"));
  const int64_t kept =  // the oldest minute still kept
      sqlite3_column_type(first.get(), 0) == SQLITE_NULL ? rolled * 60 : first.Int(0);
  if (m0 < kept && m0 % 60 != 0) m0 = FloorDiv(m0, 60) * 60;
  // Sums over hours or more read the rollups of every hour rolled up; finer buckets read minutes
  // wherever they are kept, and rollups only for the hours whose minutes were pruned.
  const int64_t last_hour =
      bucket_s > 0 && bucket_s < 3600 ? std::min(rolled, FloorDiv(kept, 60)) : rolled;
  int64_t h0 = CeilDiv(m0, 60), h1 = std::min(FloorDiv(m1, 60), last_hour);
  if (h0 >= h1) h0 = h1 = 0;  // no whole hour: minutes only
  const bool hours = h0 < h1;
  const int64_t a = hours ? h0 * 60 : m1, b = hours ? h1 * 60 : m1;
  return QueryPlan{m0, a, b, m1, h0, h1};
}

// Range scans in primary-key order, summed here: no temporary B-tree over a month of rows.
constexpr int kUsageColumns = 10;  // after the key, unit and owner ids
struct Sums {
  double v[kUsageColumns] = {};  // units use the first 4
};
struct QuerySums {
  std::map<std::pair<int64_t, int64_t>, Sums> units;                     // (bucket, unit)
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, Sums>> usage;  // (bucket, unit) → owner
};

struct Range {
  int level;  // 0: minutes, 1: hours
  int64_t lo, hi;
};

// Adds the unit and usage rows of keys [r.lo, r.hi) to `sums`, per `bucket_s` seconds.
Expected<void> SumRange(sqlite3* db, const FailFn& fail, const Range& r, int64_t schema_version,
                        int64_t bucket_s, QuerySums& sums) {
  if (r.lo >= r.hi) return {};
  const int64_t key_seconds = r.level == 0 ? 60 : 3600;  // what one key of the table is
  auto bucket = [&](int64_t key) {
    return bucket_s > 0 ? FloorDiv(key * key_seconds, bucket_s) * bucket_s : 0;
  };
  int rc;
  Stmt us(db, kUnitRows[r.level]);
  if (!us.ok() || !us.Bind(1, r.lo) || !us.Bind(2, r.hi))
    return tl::unexpected(fail("querying units"));
  while ((rc = us.Step()) == SQLITE_ROW) {
    auto& x = sums.units[{bucket(us.Int(0)), us.Int(1)}];
    for (int i = 0; i < 4; ++i) x.v[i] += us.Real(2 + i);
  }
  if (rc != SQLITE_DONE) return tl::unexpected(fail("querying units"));
  Stmt os(db, UsageRowsSql(schema_version, r.level).c_str());
  if (!os.ok() || !os.Bind(1, r.lo) || !os.Bind(2, r.hi))
    return tl::unexpected(fail("querying usage"));
  // Consecutive rows mostly share (bucket, unit): look the map up once per run. Within a run
  // owners come in ascending id, mostly the ones the bucket's earlier keys had: the entry after
  // the last one is where the next is (a search only where it is not).
  std::pair<int64_t, int64_t> last_key{-1, -1};
  std::map<int64_t, Sums>* per_owner = nullptr;
  std::map<int64_t, Sums>::iterator next;
  while ((rc = os.Step()) == SQLITE_ROW) {
    const std::pair<int64_t, int64_t> key{bucket(os.Int(0)), os.Int(1)};
    if (!per_owner || key != last_key)
      per_owner = &sums.usage[key], last_key = key, next = per_owner->begin();
    const int64_t owner = os.Int(2);
    const auto at = next != per_owner->end() && next->first == owner
                        ? next
                        : per_owner->try_emplace(next, owner);  // placed before the hint
    for (int i = 0; i < kUsageColumns; ++i) at->second.v[i] += os.Real(3 + i);
    next = std::next(at);
  }
  if (rc != SQLITE_DONE) return tl::unexpected(fail("querying usage"));
  return {};
}

// The units and owners the sums refer to, by id: point lookups, not the whole tables. Those grow
// with every pod ever seen, and rightsizing reads an hour at a time (history.h): reading them
// whole per read made a 24 h history over 20,000 owners cost 0.43 s instead of 0.19 s.
Expected<void> ReadIds(sqlite3* db, const FailFn& fail, const std::string& path,
                       const QuerySums& sums, std::map<int64_t, UnitKey>& units,
                       std::map<int64_t, domain::Owner>& owners) {
  // One row by id into `out` (an id with no row is left out: Assemble names it); false on error.
  auto read = [](Stmt& st, int64_t id, auto&& out) {
    if (!st.ok() || !st.Bind(1, id)) return false;
    const int rc = st.Step();
    if (rc == SQLITE_ROW) out();
    return (rc == SQLITE_ROW || rc == SQLITE_DONE) && st.Reset();
  };
  Stmt s(db,
         "SELECT node, uuid, gpu_uuid, model, mig_profile, mode, fraction FROM units WHERE id=?");
  std::string bad_mode;  // a mode no version of the recorder writes: refused, not guessed
  for (const auto& [key, x] : sums.units) {
    if (!units.count(key.second) && !read(s, key.second, [&] {
          const std::string mode = s.Text(5);
          const auto parsed = domain::ParseSharingMode(mode);
          if (!parsed && !mode.empty()) bad_mode = mode;
          units[key.second] = {s.Text(0), s.Text(1), s.Text(2), s.Text(3),
                               s.Text(4), parsed,    s.Real(6)};
        }))
      return tl::unexpected(fail("reading units"));
    if (!bad_mode.empty())
      return MakeError(ErrorCode::kInvalidInput, "store " + path + ": unit id " +
                                                     std::to_string(key.second) +
                                                     " has sharing mode \"" + bad_mode +
                                                     "\", not exclusive, time-slicing, mps or mig");
  }
  Stmt o(db, "SELECT kind, namespace, pod, container FROM owners WHERE id=?");
  for (const auto& [key, per_owner] : sums.usage)
    for (const auto& [oid, x] : per_owner)
      if (!owners.count(oid) && !read(o, oid, [&] {
            owners[oid] = {domain::OwnerKindFromString(o.Text(0)), o.Text(1), o.Text(2), o.Text(3)};
          }))
        return tl::unexpected(fail("reading owners"));
  return {};
}

// The sums as records per bucket, with their units and owners; an unknown id is an internal
// error naming the store at `path`.
Expected<std::map<int64_t, std::vector<UnitRecord>>> Assemble(
    const std::string& path, const QuerySums& sums, const std::map<int64_t, UnitKey>& units,
    const std::map<int64_t, domain::Owner>& owners) {
  std::map<int64_t, std::vector<UnitRecord>> result;
  for (const auto& [key, x] : sums.units) {
    UnitRecord r;
    const auto unit = units.find(key.second);
    if (unit == units.end())
      return MakeError(ErrorCode::kInternal, "store " + path + ": usage of unknown unit id " +
                                                 std::to_string(key.second));
    r.unit = unit->second;
    r.seconds = x.v[0];
    r.memory_capacity_byte_seconds = x.v[1];
    r.energy_joules = x.v[2];
    r.energy_unknown_seconds = x.v[3];
    if (auto it = sums.usage.find(key); it != sums.usage.end())
      for (const auto& [oid, o] : it->second) {
        const auto owner = owners.find(oid);
        if (owner == owners.end())
          return MakeError(ErrorCode::kInternal,
                           "store " + path + ": usage of unknown owner id " + std::to_string(oid));
        r.owners.push_back({owner->second, o.v[0], o.v[1], o.v[2], o.v[3], o.v[4], o.v[5], o.v[6],
                            o.v[7], o.v[8], o.v[9]});
      }
    result[key.first].push_back(std::move(r));
  }
  return result;
}

}  // namespace

Expected<std::map<int64_t, std::vector<UnitRecord>>> ReadSums(
    sqlite3* db, const FailFn& fail, const std::string& path, int64_t schema_version,
    int64_t rolled_up_to_hour, int64_t from_unix_s, int64_t to_unix_s, int64_t bucket_s) {
  auto p = PlanQuery(db, fail, rolled_up_to_hour, from_unix_s, to_unix_s, bucket_s);
  if (!p) return tl::unexpected(p.error());
  const Range ranges[] = {{0, p->m0, p->a}, {0, p->b, p->m1}, {1, p->h0, p->h1}};
  QuerySums sums;
  for (const auto& range : ranges)
    if (auto r = SumRange(db, fail, range, schema_version, bucket_s, sums); !r)
      return tl::unexpected(r.error());
  std::map<int64_t, UnitKey> units;
  std::map<int64_t, domain::Owner> owners;
  if (auto r = ReadIds(db, fail, path, sums, units, owners); !r) return tl::unexpected(r.error());
  auto out = Assemble(path, sums, units, owners);
  if (out && schema_version < 5)
    for (auto& [bucket, records] : *out)
      for (auto& r : records) HoldUnrecordedTraffic(r);
  return out;
}

}  // namespace gpumeter::store
