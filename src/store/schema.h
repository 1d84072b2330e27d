// The store's schema as SQL: its version, the migration to each version, and the statements that
// write, roll up and prune rows (their column order is the one the migrations leave: every
// column is added at the end of its table). Internal to the store.
#pragma once

namespace gpumeter::store {

constexpr int kSchemaVersion = 7;
// Read-only readers take these too (1: no unknown compute; 1-2: no estimate bounds; 1-4: no
// memory busy time; 1-5: no energy bounds; 1-6: no clock-step marks).
constexpr int kOldestReadable = 1;

// Migration i takes a database from user_version i to i + 1 (kSchemaVersion of them); "@MINUTES@"
// and "@HOURS@" stand for UnrecordedTrafficSql(0) and (1) (query.h).
extern const char* const kMigrations[];
// Per level (0 minutes, 1 hours): the unit row (7 values, the last the clock-step mark) and the
// owner row (14 values, the same mark last), added to the row already there.
extern const char* const kUnitUpsert[2];
extern const char* const kUsageUpsert[2];
// The minutes of [?1, ?2) (minute numbers) summed into hourly unit and owner rows, then the
// rollup mark moved to ?2's hour.
extern const char* const kRollUp[3];
// Per table (unit_minutes, usage_minutes, unit_hours, usage_hours): deletes the rows before ?1
// (a minute or hour number) that no clock step keeps: those of the ?2 hours before the hour of
// the step's newest earlier interval, and of that hour.
extern const char* const kPrune[4];

}  // namespace gpumeter::store
