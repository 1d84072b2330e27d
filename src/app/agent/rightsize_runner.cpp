#include "app/agent/rightsize_runner.h"

#include <spdlog/spdlog.h>

#include "app/agent/runtime.h"

namespace gpumeter::app {

std::vector<node::RightsizingRow> ToRows(const std::vector<rightsize::Recommendation>& rs) {
  std::vector<node::RightsizingRow> out;
  for (const auto& r : rs)
    out.push_back({r.key.ns, r.key.workload, r.key.container, rightsize::ToString(r.action),
                   r.current, r.recommended, r.current_gpu, r.recommended_gpu, r.replicas,
                   r.monthly_savings, r.currency, r.current_code, r.recommended_code});
  return out;
}

RightsizeRunner::RightsizeRunner(const usage::UsageHistorySource& history, RightsizeOptions options,
                                 std::chrono::milliseconds first,
                                 std::chrono::milliseconds interval)
    : history_(history),
      options_(std::move(options)),
      thread_([this, first, interval] { Loop(first, interval); }) {}

RightsizeRunner::~RightsizeRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<const std::vector<node::RightsizingRow>> RightsizeRunner::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

uint64_t RightsizeRunner::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

void RightsizeRunner::Loop(std::chrono::milliseconds first, std::chrono::milliseconds interval) {
  auto wait = first;
  bool failing = false;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, wait, [this] { return stop_; })) return;
    }
    wait = interval;
    auto rs = Rightsize(history_, options_);
    ReturnFreeHeap();  // the run's reads are freed: their pages go back now, not at the next trim
    if (!rs) {
      // An empty store at start is expected; say it once per outage.
      if (!failing) spdlog::warn("rightsizing: {} (keeping the last result)", rs.error().message);
      failing = true;
      continue;
    }
    if (failing) spdlog::info("rightsizing: computed again");
    failing = false;
    auto rows = std::make_shared<const std::vector<node::RightsizingRow>>(ToRows(*rs));
    std::lock_guard lock(mu_);
    latest_ = std::move(rows);
    ++runs_;
  }
}

}  // namespace gpumeter::app
