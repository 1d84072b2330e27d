// Writes each accounted interval of the node pipeline into the usage store: every unit's ledger
// with what is needed to price it later (model, MIG profile and fraction of the GPU, sharing
// mode) and the labels of the pods in it. An interval the store refuses (locked by another
// process, disk full) is kept in memory and written, oldest first, when the store accepts again,
// so an outage shorter than `max_pending_s` (1 h by default) loses no usage; older ones are
// dropped and counted. Logged once per outage; the agent keeps serving metrics throughout. The
// store is reached through its StoreKeeper: not open yet (retried), or opened again after its
// file was deleted or replaced, in which case the intervals written in the last check period are
// written again (they may have gone to the deleted file). Flush() bounds what a stop waits for
// and logs and counts what it could not write. A wall-clock step of more than a day between two
// intervals (ClockStepGuard: the samples' times against the monotonic clock) is logged and
// counted, suspends the hourly pruning until the clocks have moved together for an hour, marks
// the rows written meanwhile, and is recorded in the store, whose pruning then keeps the rows
// within retention of the newest interval before the step (docs/pricing.md, "Clock steps"). Not
// thread-safe: called on the sampling thread (Health() too, by the pipeline), Flush() once
// sampling has stopped.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "node/state/node_state.h"
#include "store/store.h"
#include "store/writer/clock_step_guard.h"
#include "store/writer/store_keeper.h"

namespace gpumeter::app {

// The interval of `state` (its last_interval ledgers) as a store record; the end is the wall
// time of the sample that closed it. A unit the state no longer describes (a GPU that fell off
// the bus) is described from `known` (by unit UUID) when there.
store::IntervalRecord ToIntervalRecord(const node::NodeState& state,
                                       const std::map<std::string, node::UnitInfo>& known = {});

class UsageRecorder {
 public:
  // `max_pending_s`: how much usage (seconds of intervals, by their end times) is kept while the
  // store refuses writes. `clock`: the monotonic clock (the wall clock is the samples' times).
  using Clock = std::chrono::steady_clock;
  explicit UsageRecorder(StoreKeeper& keeper, int64_t max_pending_s = 3600,
                         std::function<Clock::time_point()> clock = Clock::now)
      : keeper_(keeper), max_pending_s_(max_pending_s), clock_(std::move(clock)) {}
  // Records the state's interval unless it was recorded already, after any still pending.
  void Record(const node::NodeState& state);
  // At a stop: writes what is pending until `within` has passed; what is still pending then is
  // logged as an error (how many intervals, which times, why) and counted as dropped and as lost
  // at the stop. Returns that count.
  size_t Flush(std::chrono::milliseconds within);

  uint64_t written() const { return health_.written; }
  uint64_t failed() const { return health_.write_failures; }
  // Whether a wall-clock step is suspected now (pruning suspended, rows marked).
  bool clock_suspect() const { return guard_.suspect(); }
  node::StoreHealth Health() const {
    auto h = health_;
    h.status = keeper_.Status();
    return h;
  }

 private:
  void WritePending();
  // Compares the record's wall time with the monotonic `now`, marks it under a suspected step,
  // and logs and counts a step.
  void WatchClock(store::IntervalRecord& rec, Clock::time_point now);

  StoreKeeper& keeper_;
  int64_t max_pending_s_;
  std::function<Clock::time_point()> clock_;
  // Intervals written in the last check period (and a little more): written again when the file
  // turns out to have been deleted or replaced.
  std::deque<store::IntervalRecord> recent_;
  std::map<std::string, node::UnitInfo>
      known_;  // every unit seen, by UUID (its model outlives a lost GPU)
  std::deque<store::IntervalRecord> pending_;  // oldest first
  uint64_t last_interval_ = 0;
  node::StoreHealth health_;
  bool failing_ = false;
  int64_t last_prune_s_ = 0;
  int64_t last_release_s_ = 0;
  ClockStepGuard guard_;
  // The latest clock step, and whether the store open now has it recorded.
  std::optional<store::ClockStep> step_;
  bool step_recorded_ = false;
};

}  // namespace gpumeter::app
