// The read-only seam between the sampling side and every output: the latest published NodeState
// and the sampling loop's health. Outputs (metrics, the JSON API, the demo table) depend on this,
// never on the sampler or the pipeline that produce it. Implementations are thread-safe: both
// calls are cheap copies of shared pointers and counters, taken from any thread.
#pragma once

#include <memory>

#include "domain/sample.h"
#include "node/state/node_state.h"

namespace gpumeter::node {

class StateView {
 public:
  virtual ~StateView() = default;
  // Never null (an empty state before the first pass).
  virtual std::shared_ptr<const NodeState> State() const = 0;
  virtual gpu::SamplerHealth Health() const = 0;
};

}  // namespace gpumeter::node
