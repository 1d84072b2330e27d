// Recomputes the rightsizing of this node's workloads from its usage store on a thread of its own
// (a store holding weeks of minutes takes seconds to read: never on the sampling thread), every
// `interval`, and keeps the latest for the pipeline to publish (NodeState::rightsizing). A run that
// fails is logged and the last good result kept. Stops with the object. Latest() is thread-safe.
// The history source is borrowed (the agent's or demo's open store::Store): it must outlive the
// runner, and is read on the runner's thread while the sampling thread writes to the store, which
// the store's UsageHistorySource reads allow (they have a connection of their own).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "app/usage/rightsize.h"
#include "core/usage/usage_reader.h"
#include "node/state/node_state.h"

namespace gpumeter::app {

// The recommendations as the agent exports them.
std::vector<node::RightsizingRow> ToRows(const std::vector<rightsize::Recommendation>& rs);

class RightsizeRunner {
 public:
  // The first run is `first` after the start (the store needs some intervals), then every
  // `interval`. `options`: all but `source` (the history is read from `history`).
  RightsizeRunner(const usage::UsageHistorySource& history, RightsizeOptions options,
                  std::chrono::milliseconds first, std::chrono::milliseconds interval);
  ~RightsizeRunner();
  RightsizeRunner(const RightsizeRunner&) = delete;
  RightsizeRunner& operator=(const RightsizeRunner&) = delete;

  std::shared_ptr<const std::vector<node::RightsizingRow>> Latest() const;
  uint64_t runs() const;

 private:
  void Loop(std::chrono::milliseconds first, std::chrono::milliseconds interval);

  const usage::UsageHistorySource& history_;  // borrowed; read on thread_ only
  RightsizeOptions options_;                  // read on thread_ only
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  uint64_t runs_ = 0;
  std::shared_ptr<const std::vector<node::RightsizingRow>> latest_;
  std::thread thread_;  // last: starts once everything above is ready
};

}  // namespace gpumeter::app
