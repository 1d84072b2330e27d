// The one contract every node input the assembler reads meets (pods, the Node, ResourceSlices, the
// kubelet's PodResources, /proc, DCGM): Poll when the sampling pass asks, Current for the last good
// value, Status for how the input is doing. A source whose reads run on a thread of its own (an
// API-server watch, the DCGM exporter's poller) does nothing in Poll. A source that fails keeps its
// last good value in Current and says why in Status: the pipeline never waits on a broken input.
#pragma once

#include <chrono>
#include <memory>

#include "domain/source_status.h"

namespace gpumeter::sources {

template <class T>
class PolledSource {
 public:
  using Value = T;
  virtual ~PolledSource() = default;
  // Reads the input if it is due at `now` (steady clock). Called on the sampling thread once per
  // pass; returns within the source's own read deadline and never throws.
  virtual void Poll(std::chrono::steady_clock::time_point /*now*/) {}
  // The last good value (shared, never changed once published); null before the first one.
  // Thread-safe.
  virtual std::shared_ptr<const T> Current() const = 0;
  // Up, failures, last error and detail, as every output shows them. Thread-safe.
  virtual domain::SourceStatus Status() const = 0;
};

}  // namespace gpumeter::sources
