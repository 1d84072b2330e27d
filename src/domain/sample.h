// One sampling pass as the sampler publishes it and every later stage reads it: when it was taken,
// whether it worked, and the GPU snapshot; and the health of the loop that takes them. Plain
// values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "domain/gpu_types.h"

namespace gpumeter::gpu {

// One published sampling pass.
struct SampleResult {
  uint64_t sequence = 0;  // 1, 2, … per successful or failed pass
  std::chrono::steady_clock::time_point taken;
  std::chrono::system_clock::time_point
      wall;  // when it was taken, by the wall clock (for first/last seen)
  double duration_seconds = 0;
  bool ok = false;
  std::string error;          // when !ok
  gpu::GpuSnapshot snapshot;  // when ok
};

// The sampling loop's health as its readers see it (the NVML source's status).
struct SamplerHealth {
  std::shared_ptr<const SampleResult> latest;     // null before the first pass
  std::shared_ptr<const SampleResult> last_good;  // null before the first good pass
  uint64_t passes = 0, failures = 0, deadline_exceeded = 0;
  std::string stalled_call;  // non-empty while a call is past its deadline
  double stalled_seconds = 0;
};

}  // namespace gpumeter::gpu
