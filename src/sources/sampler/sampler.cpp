#include "sources/sampler/sampler.h"

#include <algorithm>

namespace gpumeter::sampler {
namespace {
int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
constexpr auto kWatchdogTick = std::chrono::milliseconds(50);
}  // namespace

void CallWatch::Begin(const char* call) {
  call_.store(call, std::memory_order_relaxed);
  started_ns_.store(SteadyNs(), std::memory_order_release);
}

void CallWatch::End() { started_ns_.store(0, std::memory_order_release); }

CallWatch::InFlight CallWatch::Current() const {
  const int64_t started = started_ns_.load(std::memory_order_acquire);
  if (started == 0) return {};
  return {call_.load(std::memory_order_relaxed), std::chrono::nanoseconds(SteadyNs() - started)};
}

Sampler::Sampler(gpu::GpuSource& source, const CallWatch& watch, SamplerOptions options)
    : source_(source), watch_(watch), options_(options) {}

Sampler::~Sampler() { Stop(); }

void Sampler::Start() {
  std::lock_guard lock(mu_);
  if (worker_.joinable()) return;
  stop_ = false;
  worker_ = std::thread([this] { Run(); });
  watchdog_ = std::thread([this] { Watchdog(); });
}

void Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

void Sampler::Run() {
  auto next = std::chrono::steady_clock::now();
  for (uint64_t seq = 1;; ++seq) {
    const auto begin = std::chrono::steady_clock::now();
    auto result = std::make_shared<SampleResult>();
    result->sequence = seq;
    result->taken = begin;
    result->wall = std::chrono::system_clock::now();
    if (options_.before_pass) options_.before_pass();
    auto snap = source_.Sample();
    result->duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (snap) {
      result->ok = true;
      result->snapshot = std::move(*snap);
    } else {
      result->error = snap.error().message;
    }
    // The hook runs before the pass is published, so a reader woken by WaitForPass(n) also sees
    // what the hook made of pass n.
    if (options_.on_pass) options_.on_pass(result);
    {
      std::lock_guard lock(mu_);
      ++passes_;
      if (!result->ok) ++failures_;
      latest_ = result;
      if (result->ok) last_good_ = result;
      stalled_call_ = nullptr;
    }
    cv_.notify_all();
    // Fixed-rate schedule; after an overrun, start again from now instead of bursting.
    next += options_.interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;
    if (WaitDraining(begin, next)) return;
  }
}

bool Sampler::WaitDraining(std::chrono::steady_clock::time_point pass_begin,
                           std::chrono::steady_clock::time_point next) {
  const auto drain = options_.drain_interval;
  auto last = pass_begin;
  std::unique_lock lock(mu_);
  for (;;) {
    const bool drains = drain.count() > 0 && options_.interval > drain;
    const auto wake = drains ? std::min(next, last + drain) : next;
    if (cv_.wait_until(lock, wake, [this] { return stop_; })) return true;
    if (wake >= next) return false;
    lock.unlock();
    last = std::chrono::steady_clock::now();
    const auto met = source_.Drain();  // its calls are watched like a pass's
    if (options_.on_drain) options_.on_drain(met);
    lock.lock();
    stalled_call_ = nullptr;  // a drain call that overran has returned
  }
}

void Sampler::Watchdog() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, kWatchdogTick, [this] { return stop_; })) {
    const auto in_flight = watch_.Current();
    if (in_flight.call && in_flight.elapsed > options_.call_deadline &&
        stalled_call_ != in_flight.call) {
      stalled_call_ = in_flight.call;
      ++deadline_exceeded_;
    }
  }
}

SamplerHealth Sampler::Health() const {
  std::lock_guard lock(mu_);
  SamplerHealth h;
  h.latest = latest_;
  h.last_good = last_good_;
  h.passes = passes_;
  h.failures = failures_;
  h.deadline_exceeded = deadline_exceeded_;
  if (stalled_call_) {
    h.stalled_call = stalled_call_;
    h.stalled_seconds = std::chrono::duration<double>(watch_.Current().elapsed).count();
  }
  return h;
}

bool Sampler::WaitForPass(uint64_t sequence, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return latest_ && latest_->sequence >= sequence; });
}

}  // namespace gpumeter::sampler
