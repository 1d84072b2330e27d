#include "sinks/metrics/readiness.h"

#include <fmt/format.h>

namespace gpumeter::metrics {

double SecondsSinceLastPass(const gpu::SamplerHealth& health,
                            std::chrono::steady_clock::time_point now) {
  if (!health.latest) return 0;
  const auto finished =
      health.latest->taken + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(health.latest->duration_seconds));
  return std::max(0.0, std::chrono::duration<double>(now - finished).count());
}

domain::SourceStatus NvmlStatus(const gpu::SamplerHealth& h, std::chrono::milliseconds stale_after,
                                std::chrono::steady_clock::time_point now) {
  domain::SourceStatus s;
  s.name = "nvml";
  s.attempts = h.passes;
  s.failures = h.failures;
  if (h.last_good) {
    s.last_success = h.last_good->taken;
    s.last_duration_seconds = h.last_good->duration_seconds;
  }
  const double age = SecondsSinceLastPass(h, now);
  const bool late =
      stale_after.count() > 0 && age * 1000 > static_cast<double>(stale_after.count());
  s.up = h.latest && h.latest->ok && h.stalled_call.empty() && !late;
  if (h.latest && !h.latest->ok)
    s.last_error = h.latest->error;
  else if (!h.stalled_call.empty())
    s.last_error = "call " + h.stalled_call + " stalled";
  else if (late)
    s.last_error = fmt::format("no sampling pass finished for {:.0f} s", age);
  return s;
}

Readiness CheckReadiness(const gpu::SamplerHealth& health, const node::NodeState& state,
                         std::chrono::milliseconds stale_after,
                         std::chrono::steady_clock::time_point now) {
  if (!state.last_good) return {false, "waiting for the first sample"};
  if (stale_after.count() > 0) {
    const double age = SecondsSinceLastPass(health, now);
    if (age * 1000 > static_cast<double>(stale_after.count()))
      return {
          false,
          fmt::format(
              "no sampling pass finished for {:.0f} s{}: usage is not being recorded "
              "(see /api/v1/sources)",
              age, health.stalled_call.empty() ? "" : " (stuck in " + health.stalled_call + ")")};
  }
  return {true, "ready"};
}

}  // namespace gpumeter::metrics
