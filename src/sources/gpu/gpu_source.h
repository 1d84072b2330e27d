// The GPU source seam. The real implementation is NvmlGpuSource (dlopen of libnvidia-ml.so.1);
// tests drive it through the fake libnvidia-ml.so.1, never through a mock of this interface.
#pragma once

#include <cstdint>
#include <vector>

#include "common/error.h"
#include "domain/gpu_types.h"

namespace gpumeter::gpu {

// Told when each driver call begins and ends, so a watchdog can enforce a deadline per call.
// Called on the sampling thread; `call` points to a string literal. Implementations must be
// thread-safe against their readers.
class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void Begin(const char* call) = 0;
  virtual void End() = 0;
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // Takes one sample of every device. A failing device degrades that device only (its errors are
  // in DeviceSample::errors); an Error means nothing could be sampled at all.
  // Not thread-safe: call from one thread (the sampler's worker).
  virtual Expected<GpuSnapshot> Sample() = 0;
  // Between samples, when the interval is longer than the driver's sample buffers hold: reads
  // what they hold so far and keeps it for the next Sample(). Never fails (a failure is reported
  // with the next sample). Optional: sources without such buffers do nothing. Same thread as
  // Sample().
  // Returns the PIDs met in the per-process utilization samples this drain read (sorted, unique;
  // samples an earlier drain read are not read again), so the process source can identify a
  // process that lives between two passes while it still exists. Empty for sources without such
  // buffers.
  virtual std::vector<uint32_t> Drain() { return {}; }
  virtual const Capabilities& capabilities() const = 0;
};

}  // namespace gpumeter::gpu
