#include "sources/kubelet/pod_resources_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpumeter::kubelet {

PodResourcesSource::PodResourcesSource(std::unique_ptr<PodResourcesClient> client,
                                       BackoffOptions backoff)
    : client_(std::move(client)), backoff_(backoff) {}

bool PodResourcesSource::Poll(Clock::time_point now) {
  if (now < status_.next_attempt) return false;
  const auto begin = Clock::now();
  auto list = client_->List();
  ++status_.attempts;
  status_.last_duration_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  if (list) {
    if (status_.consecutive_failures > 0)
      spdlog::info("kubelet PodResources at {}: back after {} failed polls",
                   client_->options().socket_path, status_.consecutive_failures);
    allocations_ = std::make_shared<const Allocations>(std::move(*list));
    status_.up = true;
    status_.last_success = now;
    status_.consecutive_failures = 0;
    status_.last_error.clear();
    status_.next_attempt = now;
    delay_ = std::chrono::milliseconds(0);
    return true;
  }
  // Log the first failure of an outage, not every retry; the status carries the latest.
  if (status_.consecutive_failures == 0)
    spdlog::warn("{} (keeping the last good allocations; retrying with backoff)",
                 list.error().message);
  status_.up = false;
  ++status_.consecutive_failures;
  ++status_.failures;
  status_.last_error = list.error().message;
  delay_ = delay_.count() == 0 ? backoff_.initial : std::min(backoff_.max, delay_ * 2);
  status_.next_attempt = now + delay_;
  return true;
}

}  // namespace gpumeter::kubelet
