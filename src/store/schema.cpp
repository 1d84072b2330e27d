// The store's schema as SQL: the migrations, the upserts, the hourly rollup and the pruning.
#include "store/schema.h"

#include <iterator>

namespace gpumeter::store {

const char* const kMigrations[] = {
    R"sql(
CREATE TABLE units(id INTEGER PRIMARY KEY, node TEXT NOT NULL, uuid TEXT NOT NULL, gpu_uuid TEXT NOT NULL,
  model TEXT NOT NULL, mig_profile TEXT NOT NULL, mode TEXT NOT NULL, fraction REAL NOT NULL,
  UNIQUE(node, uuid, gpu_uuid, model, mig_profile, mode, fraction));
CREATE TABLE owners(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, namespace TEXT NOT NULL, pod TEXT NOT NULL,
  container TEXT NOT NULL, UNIQUE(kind, namespace, pod, container));
CREATE TABLE unit_minutes(minute INTEGER NOT NULL, unit_id INTEGER NOT NULL, seconds REAL NOT NULL,
  memory_capacity_byte_seconds REAL NOT NULL, energy_joules REAL NOT NULL, energy_unknown_seconds REAL NOT NULL,
  PRIMARY KEY(minute, unit_id)) WITHOUT ROWID;
CREATE TABLE usage_minutes(minute INTEGER NOT NULL, unit_id INTEGER NOT NULL, owner_id INTEGER NOT NULL,
  memory_byte_seconds REAL NOT NULL, compute_seconds REAL NOT NULL, energy_joules REAL NOT NULL,
  requested_share_seconds REAL NOT NULL, PRIMARY KEY(minute, unit_id, owner_id)) WITHOUT ROWID;
CREATE TABLE unit_hours(hour INTEGER NOT NULL, unit_id INTEGER NOT NULL, seconds REAL NOT NULL,
  memory_capacity_byte_seconds REAL NOT NULL, energy_joules REAL NOT NULL, energy_unknown_seconds REAL NOT NULL,
  PRIMARY KEY(hour, unit_id)) WITHOUT ROWID;
CREATE TABLE usage_hours(hour INTEGER NOT NULL, unit_id INTEGER NOT NULL, owner_id INTEGER NOT NULL,
  memory_byte_seconds REAL NOT NULL, compute_seconds REAL NOT NULL, energy_joules REAL NOT NULL,
  requested_share_seconds REAL NOT NULL, PRIMARY KEY(hour, unit_id, owner_id)) WITHOUT ROWID;
CREATE TABLE pod_labels(namespace TEXT NOT NULL, pod TEXT NOT NULL, labels TEXT NOT NULL,
  PRIMARY KEY(namespace, pod)) WITHOUT ROWID;
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES('rolled_up_to_hour', 0);
)sql",
    // 2: compute whose owner could not be told: unknown, not 0. Older rows had none
    // recorded, so 0 is what they knew.
    R"sql(
ALTER TABLE usage_minutes ADD COLUMN compute_unknown_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN compute_unknown_seconds REAL NOT NULL DEFAULT 0;
)sql",
    // 3: the ± of estimated compute splits. Older rows recorded none: their
    // estimates read as exact, which is what they claimed.
    R"sql(
ALTER TABLE usage_minutes ADD COLUMN compute_bound_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN compute_bound_seconds REAL NOT NULL DEFAULT 0;
)sql",
    // 4: each node's cloud identity, to match a cloud bill to it; a VM recreated
    // under its name (GKE keeps the provider ID, not the numeric id) is another row. Older stores
    // did not record it: their nodes are listed as without one.
    R"sql(
CREATE TABLE nodes(name TEXT NOT NULL, provider_id TEXT NOT NULL, instance_id TEXT NOT NULL,
  instance_type TEXT NOT NULL, region TEXT NOT NULL, zone TEXT NOT NULL, capacity_type TEXT NOT NULL,
  gpu_count INTEGER, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
  PRIMARY KEY(name, provider_id, instance_id)) WITHOUT ROWID;
)sql",
    // 5: memory busy time, a second measure of use, with its unknown and bound. Older
    // rows did not measure it: unknown over their unit's time (query.cpp, UnrecordedTraffic), not
    // 0, for every owner but idle and unattributed; and unattributed holds that time, so a unit's
    // traffic adds up to its seconds (as a unit with no signal is booked).
    R"sql(
ALTER TABLE usage_minutes ADD COLUMN memory_busy_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_minutes ADD COLUMN memory_busy_unknown_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_minutes ADD COLUMN memory_busy_bound_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN memory_busy_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN memory_busy_unknown_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN memory_busy_bound_seconds REAL NOT NULL DEFAULT 0;
UPDATE usage_minutes SET memory_busy_unknown_seconds = @MINUTES@;
UPDATE usage_hours SET memory_busy_unknown_seconds = @HOURS@;
INSERT OR IGNORE INTO owners(kind, namespace, pod, container) VALUES('unattributed', '', '', '');
INSERT INTO usage_minutes(minute, unit_id, owner_id, memory_byte_seconds, compute_seconds,
  energy_joules, requested_share_seconds, memory_busy_seconds)
  SELECT minute, unit_id, (SELECT id FROM owners WHERE kind = 'unattributed' AND namespace = ''
  AND pod = '' AND container = ''), 0, 0, 0, 0, seconds FROM unit_minutes WHERE 1
  ON CONFLICT DO UPDATE SET memory_busy_seconds = excluded.memory_busy_seconds;
INSERT INTO usage_hours(hour, unit_id, owner_id, memory_byte_seconds, compute_seconds,
  energy_joules, requested_share_seconds, memory_busy_seconds)
  SELECT hour, unit_id, (SELECT id FROM owners WHERE kind = 'unattributed' AND namespace = ''
  AND pod = '' AND container = ''), 0, 0, 0, 0, seconds FROM unit_hours WHERE 1
  ON CONFLICT DO UPDATE SET memory_busy_seconds = excluded.memory_busy_seconds;
)sql",
    // 6: the ± of estimated energy splits (a DCGM-fed unit's energy inside a collection). Older
    // rows recorded none: their energy reads as exact, which is what they claimed.
    R"sql(
ALTER TABLE usage_minutes ADD COLUMN energy_bound_joules REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN energy_bound_joules REAL NOT NULL DEFAULT 0;
)sql",
    // 7: wall-clock steps (UsageRecorder: the wall clock moved more than a day apart from the
    // monotonic clock between two intervals). Rows written while a step is suspected are marked
    // clock_suspect = 1; older rows are 0, as no step was looked for. clock_steps keeps each
    // step's newest earlier interval: pruning keeps the rows within retention of it.
    R"sql(
ALTER TABLE unit_minutes ADD COLUMN clock_suspect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_minutes ADD COLUMN clock_suspect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE unit_hours ADD COLUMN clock_suspect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN clock_suspect INTEGER NOT NULL DEFAULT 0;
CREATE TABLE clock_steps(newest_before INTEGER PRIMARY KEY, step_s INTEGER NOT NULL,
  seen_at INTEGER NOT NULL);
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

// The memory-busy-time (schema 5) and energy-bound (6) columns of an upsert's conflict clause.
#define GPUMETER_TRAFFIC_SUMS                                                                      \
  ", memory_busy_seconds = memory_busy_seconds + excluded.memory_busy_seconds, "                   \
  "memory_busy_unknown_seconds = memory_busy_unknown_seconds + "                                   \
  "excluded.memory_busy_unknown_seconds, memory_busy_bound_seconds = memory_busy_bound_seconds + " \
  "excluded.memory_busy_bound_seconds, energy_bound_joules = energy_bound_joules + "               \
  "excluded.energy_bound_joules"
// The clock-step mark (schema 7): a bucket holding one suspect row is suspect.
#define GPUMETER_SUSPECT_MAX ", clock_suspect = MAX(clock_suspect, excluded.clock_suspect)"

const char* const kUnitUpsert[2] = {
    "INSERT INTO unit_minutes VALUES(?1,?2,?3,?4,?5,?6,?7) ON CONFLICT DO UPDATE SET seconds = "
    "seconds + excluded.seconds, "
    "memory_capacity_byte_seconds = memory_capacity_byte_seconds + "
    "excluded.memory_capacity_byte_seconds, "
    "energy_joules = energy_joules + excluded.energy_joules, energy_unknown_seconds = "
    "energy_unknown_seconds + excluded.energy_unknown_seconds" GPUMETER_SUSPECT_MAX,
    "INSERT INTO unit_hours VALUES(?1,?2,?3,?4,?5,?6,?7) ON CONFLICT DO UPDATE SET seconds = "
    "seconds + excluded.seconds, "
    "memory_capacity_byte_seconds = memory_capacity_byte_seconds + "
    "excluded.memory_capacity_byte_seconds, "
    "energy_joules = energy_joules + excluded.energy_joules, energy_unknown_seconds = "
    "energy_unknown_seconds + excluded.energy_unknown_seconds" GPUMETER_SUSPECT_MAX};
const char* const kUsageUpsert[2] = {
    "INSERT INTO usage_minutes VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14) ON CONFLICT "
    "DO UPDATE SET "
    "memory_byte_seconds = memory_byte_seconds + excluded.memory_byte_seconds, compute_seconds = "
    "compute_seconds + excluded.compute_seconds, "
    "energy_joules = energy_joules + excluded.energy_joules, requested_share_seconds = "
    "requested_share_seconds + excluded.requested_share_seconds, compute_unknown_seconds = "
    "compute_unknown_seconds + excluded.compute_unknown_seconds, compute_bound_seconds = "
    "compute_bound_seconds + excluded.compute_bound_seconds" GPUMETER_TRAFFIC_SUMS
        GPUMETER_SUSPECT_MAX,
    "INSERT INTO usage_hours VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14) ON CONFLICT "
    "DO UPDATE SET "
    "memory_byte_seconds = memory_byte_seconds + excluded.memory_byte_seconds, compute_seconds = "
    "compute_seconds + excluded.compute_seconds, "
    "energy_joules = energy_joules + excluded.energy_joules, requested_share_seconds = "
    "requested_share_seconds + excluded.requested_share_seconds, compute_unknown_seconds = "
    "compute_unknown_seconds + excluded.compute_unknown_seconds, compute_bound_seconds = "
    "compute_bound_seconds + excluded.compute_bound_seconds" GPUMETER_TRAFFIC_SUMS
        GPUMETER_SUSPECT_MAX};

const char* const kRollUp[3] = {
    "INSERT INTO unit_hours SELECT minute / 60, unit_id, SUM(seconds), "
    "SUM(memory_capacity_byte_seconds), SUM(energy_joules), "
    "SUM(energy_unknown_seconds), MAX(clock_suspect) FROM unit_minutes WHERE minute >= ?1 AND "
    "minute < ?2 GROUP BY minute / 60, unit_id "
    "ON CONFLICT DO UPDATE SET seconds = seconds + excluded.seconds, "
    "memory_capacity_byte_seconds = memory_capacity_byte_seconds + "
    "excluded.memory_capacity_byte_seconds, "
    "energy_joules = energy_joules + excluded.energy_joules, energy_unknown_seconds = "
    "energy_unknown_seconds + excluded.energy_unknown_seconds" GPUMETER_SUSPECT_MAX,
    "INSERT INTO usage_hours SELECT minute / 60, unit_id, owner_id, SUM(memory_byte_seconds), "
    "SUM(compute_seconds), SUM(energy_joules), "
    "SUM(requested_share_seconds), SUM(compute_unknown_seconds), SUM(compute_bound_seconds), "
    "SUM(memory_busy_seconds), SUM(memory_busy_unknown_seconds), SUM(memory_busy_bound_seconds), "
    "SUM(energy_bound_joules), MAX(clock_suspect) FROM usage_minutes "
    "WHERE minute >= ?1 AND minute < ?2 GROUP BY minute / 60, unit_id, owner_id "
    "ON CONFLICT DO UPDATE SET memory_byte_seconds = memory_byte_seconds + "
    "excluded.memory_byte_seconds, "
    "compute_seconds = compute_seconds + excluded.compute_seconds, energy_joules = energy_joules "
    "+ excluded.energy_joules, "
    "requested_share_seconds = requested_share_seconds + excluded.requested_share_seconds, "
    "compute_unknown_seconds = compute_unknown_seconds + excluded.compute_unknown_seconds, "
    "compute_bound_seconds = compute_bound_seconds + "
    "excluded.compute_bound_seconds" GPUMETER_TRAFFIC_SUMS GPUMETER_SUSPECT_MAX,
    "UPDATE meta SET value = ?2 / 60 WHERE key = 'rolled_up_to_hour' AND ?1 = ?1"};

// A clock step's window, in whole hours: from ?2 hours before the hour of its newest earlier
// interval to the end of that hour.
#define GPUMETER_KEPT_MINUTE(table)                          \
  "NOT EXISTS (SELECT 1 FROM clock_steps s WHERE " table     \
  ".minute >= (s.newest_before / 3600 - ?2) * 60 AND " table \
  ".minute < (s.newest_before / 3600 + 1) * 60)"
#define GPUMETER_KEPT_HOUR(table)                        \
  "NOT EXISTS (SELECT 1 FROM clock_steps s WHERE " table \
  ".hour >= s.newest_before / 3600 - ?2 AND " table ".hour <= s.newest_before / 3600)"

const char* const kPrune[4] = {
    "DELETE FROM unit_minutes WHERE minute < ?1 AND " GPUMETER_KEPT_MINUTE("unit_minutes"),
    "DELETE FROM usage_minutes WHERE minute < ?1 AND " GPUMETER_KEPT_MINUTE("usage_minutes"),
    "DELETE FROM unit_hours WHERE hour < ?1 AND " GPUMETER_KEPT_HOUR("unit_hours"),
    "DELETE FROM usage_hours WHERE hour < ?1 AND " GPUMETER_KEPT_HOUR("usage_hours")};

}  // namespace gpumeter::store
