// Writes each accounted interval of the node pipeline into the usage store: every unit's ledger
// with what is needed to price it later (model, MIG profile and fraction of the GPU, sharing
// mode) and the labels of the pods in it. An interval the store refuses (locked by another
// process, disk full) is kept in memory and written, oldest first, when the store accepts again,
// so an outage shorter than `max_pending_s` (1 h by default) loses no usage; older ones are
// dropped and counted. Logged once per outage; the agent keeps serving metrics throughout. Not
// thread-safe: called on the sampling thread (Health() too, by the pipeline).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "node/state/node_state.h"
#include "sinks/store/store.h"

namespace gpumeter::app {

// The interval of `state` (its last_interval ledgers) as a store record; the end is the wall
// time of the sample that closed it. A unit the state no longer describes (a GPU that fell off
// the bus) is described from `known` (by unit UUID) when there.
store::IntervalRecord ToIntervalRecord(const node::NodeState& state,
                                       const std::map<std::string, node::UnitInfo>& known = {});

class UsageRecorder {
 public:
  // `max_pending_s`: how much usage (seconds of intervals, by their end times) is kept while the
  // store refuses writes.
  explicit UsageRecorder(store::Store& store, int64_t max_pending_s = 3600)
      : store_(store), max_pending_s_(max_pending_s) {}
  // Records the state's interval unless it was recorded already, after any still pending.
  void Record(const node::NodeState& state);

  uint64_t written() const { return health_.written; }
  uint64_t failed() const { return health_.write_failures; }
  node::StoreHealth Health() const { return health_; }

 private:
  void WritePending();

  store::Store& store_;
  int64_t max_pending_s_;
  std::map<std::string, node::UnitInfo>
      known_;  // every unit seen, by UUID (its model outlives a lost GPU)
  std::deque<store::IntervalRecord> pending_;  // oldest first
  uint64_t last_interval_ = 0;
  node::StoreHealth health_;
  bool failing_ = false;
  int64_t last_prune_s_ = 0;
  int64_t last_release_s_ = 0;
};

}  // namespace gpumeter::app
