// Keeps the node's allocations from the kubelet current without ever blocking the agent on it:
// polls PodResources List when its backoff allows, keeps the last good list when a poll fails,
// and says whether the source is up. Failures (missing socket, kubelet restart, rate limit,
// deadline) back off exponentially (1 s doubling to 30 s) and are logged once per outage.
// The clock is passed in. Not thread-safe: one per sampling loop; the allocations it hands out are
// immutable and may be shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sources/kubelet/pod_resources.h"

namespace gpumeter::kubelet {

struct BackoffOptions {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{30000};
};

class PodResourcesSource {
 public:
  using Clock = std::chrono::steady_clock;
  using Allocations = std::vector<ContainerAllocation>;

  struct Status {
    bool up = false;  // the last poll succeeded
    std::optional<Clock::time_point> last_success;
    int consecutive_failures = 0;
    uint64_t attempts = 0, failures = 0;  // totals since start (monotonic)
    double last_duration_seconds = 0;     // of the last List
    std::string last_error;
    Clock::time_point next_attempt{};
  };

  explicit PodResourcesSource(std::unique_ptr<PodResourcesClient> client,
                              BackoffOptions backoff = {});

  // Polls the kubelet unless a backoff is pending; true if it polled.
  bool Poll(Clock::time_point now);

  const Status& status() const { return status_; }
  // The last good list; null before the first success.
  std::shared_ptr<const Allocations> allocations() const { return allocations_; }

 private:
  std::unique_ptr<PodResourcesClient> client_;
  BackoffOptions backoff_;
  std::chrono::milliseconds delay_{0};
  Status status_;
  std::shared_ptr<const Allocations> allocations_;
};

}  // namespace gpumeter::kubelet
