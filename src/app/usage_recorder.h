// Writes each accounted interval of the node pipeline into the usage store: every unit's ledger
// with what is needed to price it later (model, MIG profile and fraction of the GPU, sharing
// mode) and the labels of the pods in it. A store that fails (locked, full, corrupt) is logged
// once per outage and retried on the next interval; the agent keeps serving metrics. Not
// thread-safe: called on the sampling thread.
#pragma once

#include <cstdint>
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
  explicit UsageRecorder(store::Store& store) : store_(store) {}
  // Records the state's interval unless it was recorded already.
  void Record(const node::NodeState& state);

  uint64_t written() const { return written_; }
  uint64_t failed() const { return failed_; }

 private:
  store::Store& store_;
  std::map<std::string, node::UnitInfo>
      known_;  // every unit seen, by UUID (its model outlives a lost GPU)
  uint64_t last_interval_ = 0;
  uint64_t written_ = 0, failed_ = 0;
  bool failing_ = false;
  int64_t last_prune_s_ = 0;
};

}  // namespace gpumeter::app
