#include "sources/kubelet/pod_resources_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpumeter::kubelet {

PodResourcesSource::PodResourcesSource(std::unique_ptr<PodResourcesClient> client,
                                       BackoffOptions backoff)
    : client_(std::move(client)), backoff_(backoff) {
  static_cast<domain::SourceStatus&>(status_) = tracker_.status();
}

bool PodResourcesSource::PollIfDue(Clock::time_point now) {
  if (now < next_attempt_) return false;
  const auto begin = Clock::now();
  auto list = client_->List();
  tracker_.Attempt();
  tracker_.SetDuration(std::chrono::duration<double>(Clock::now() - begin).count());
  if (list) {
    const int failed = tracker_.status().consecutive_failures;
    if (tracker_.Succeeded(now))
      spdlog::info("kubelet PodResources at {}: back after {} failed polls",
                   client_->options().socket_path, failed);
    allocations_ = std::make_shared<const Allocations>(std::move(*list));
    next_attempt_ = now;
    delay_ = std::chrono::milliseconds(0);
  } else {
    // Log the first failure of an outage, not every retry; the status carries the latest.
    if (tracker_.Failed(list.error().message))
      spdlog::warn("{} (keeping the last good allocations; retrying with backoff)",
                   list.error().message);
    delay_ = delay_.count() == 0 ? backoff_.initial : std::min(backoff_.max, delay_ * 2);
    next_attempt_ = now + delay_;
  }
  static_cast<domain::SourceStatus&>(status_) = tracker_.status();
  status_.next_attempt = next_attempt_;
  return true;
}

}  // namespace gpumeter::kubelet
