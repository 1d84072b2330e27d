// Retention: what Prune deletes, and the wall-clock steps (schema 7) that hold it back. A clock
// stepped forward by months makes every row look past retention; the rows within retention of
// the newest interval written before the step are kept whatever the clock says later.
#include <sqlite3.h>

#include <algorithm>

#include "store/schema.h"
#include "store/stmt.h"
#include "store/store.h"

namespace gpumeter::store {

Expected<void> Store::Prune(int64_t now_unix_s) {
  // Minutes go only once their hour is rolled up, a whole hour at a time (so a window's partial
  // first hour is either all in minutes or all in the hourly row), and never after their hour.
  const int64_t hour_cut = FloorDiv(now_unix_s, 3600) - int64_t{options_.hour_retention_days} * 24;
  const int64_t minute_cut =
      std::max(hour_cut, std::min(FloorDiv(FloorDiv(now_unix_s, 60) -
                                               int64_t{options_.minute_retention_days} * 24 * 60,
                                           60),
                                  rolled_up_to_hour_)) *
      60;
  // A clock step's window, in hours before its newest earlier interval (kPrune).
  const int64_t minute_window = int64_t{options_.minute_retention_days} * 24;
  const int64_t hour_window = int64_t{options_.hour_retention_days} * 24;
  if (auto r = Exec("BEGIN IMMEDIATE"); !r) return r;
  auto body = [&]() -> Expected<void> {
    const int64_t cuts[4][2] = {{minute_cut, minute_window},
                                {minute_cut, minute_window},
                                {hour_cut, hour_window},
                                {hour_cut, hour_window}};
    for (size_t i = 0; i < 4; ++i) {
      Stmt d(db_, kPrune[i]);
      if (!d.ok() || !d.Bind(1, cuts[i][0]) || !d.Bind(2, cuts[i][1]) || d.Step() != SQLITE_DONE)
        return tl::unexpected(Fail("pruning"));
    }
    return Exec("COMMIT");
  };
  auto r = body();
  if (!r) (void)Exec("ROLLBACK");
  return r;
}

Expected<void> Store::RecordClockStep(const ClockStep& step) {
  // The first record of a window stays: a second step before the clock settled has the same
  // newest earlier interval, and the window is what matters.
  Stmt s(db_, "INSERT INTO clock_steps VALUES(?1,?2,?3) ON CONFLICT DO NOTHING");
  if (!s.ok() || !s.Bind(1, step.newest_before_unix_s) || !s.Bind(2, step.step_s) ||
      !s.Bind(3, step.seen_unix_s) || s.Step() != SQLITE_DONE)
    return tl::unexpected(Fail("recording a clock step"));
  return {};
}

Expected<std::vector<ClockStep>> Store::ClockSteps() const {
  std::vector<ClockStep> out;
  if (schema_version_ < 7) return out;  // looked for none
  Stmt s(db_, "SELECT newest_before, step_s, seen_at FROM clock_steps ORDER BY newest_before");
  if (!s.ok()) return tl::unexpected(Fail("reading clock steps"));
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back({s.Int(0), s.Int(1), s.Int(2)});
  if (rc != SQLITE_DONE) return tl::unexpected(Fail("reading clock steps"));
  return out;
}

}  // namespace gpumeter::store
