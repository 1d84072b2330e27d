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

#include "domain/source_status.h"
#include "sources/kubelet/pod_resources.h"
#include "sources/polled/polled_source.h"

namespace gpumeter::kubelet {

struct BackoffOptions {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{30000};
};

class PodResourcesSource final : public sources::PolledSource<std::vector<ContainerAllocation>> {
 public:
  using Clock = std::chrono::steady_clock;
  using Allocations = std::vector<ContainerAllocation>;

  // The source's status ("kubelet"), and when the next poll may run (backoff).
  struct BackoffStatus : domain::SourceStatus {
    Clock::time_point next_attempt{};
  };

  explicit PodResourcesSource(std::unique_ptr<PodResourcesClient> client,
                              BackoffOptions backoff = {});

  // Polls the kubelet unless a backoff is pending; true if it polled.
  bool PollIfDue(Clock::time_point now);
  void Poll(Clock::time_point now) override { PollIfDue(now); }

  // With when the next poll may run.
  const BackoffStatus& status() const { return status_; }
  domain::SourceStatus Status() const override { return status_; }
  // The last good list; null before the first success.
  std::shared_ptr<const Allocations> Current() const override { return allocations_; }

 private:
  std::unique_ptr<PodResourcesClient> client_;
  BackoffOptions backoff_;
  std::chrono::milliseconds delay_{0};
  domain::SourceTracker tracker_{"kubelet", "socket"};
  Clock::time_point next_attempt_{};
  BackoffStatus status_;  // tracker_'s status with next_attempt_, refreshed after each poll
  std::shared_ptr<const Allocations> allocations_;
};

}  // namespace gpumeter::kubelet
