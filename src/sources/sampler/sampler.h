// The sampling loop: takes a GpuSnapshot every interval on its own thread and publishes it as an
// immutable value. Readers (/metrics, the demo table) only read the latest one and its age; they
// never call the source. A watchdog enforces a deadline per driver call: a call that has not
// returned in time marks the source stalled (reported, not hidden) until it returns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "domain/sample.h"
#include "sources/gpu/gpu_source.h"

namespace gpumeter::sampler {

using gpu::SampleResult;
using gpu::SamplerHealth;

// Tracks the driver call in flight. Begin/End on the sampling thread; Stalled() from any thread.
class CallWatch final : public gpu::CallObserver {
 public:
  void Begin(const char* call) override;
  void End() override;
  // The call in flight and for how long, if any.
  struct InFlight {
    const char* call = nullptr;
    std::chrono::nanoseconds elapsed{0};
  };
  InFlight Current() const;

 private:
  std::atomic<const char*> call_{nullptr};
  std::atomic<int64_t> started_ns_{0};  // steady clock; 0 = no call in flight
};

struct SamplerOptions {
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds call_deadline{2000};
  // Run on the sampling thread before each pass, and with each pass just before it is published
  // (the node pipeline), so WaitForPass(n) returns after on_pass(n). Time spent in them delays
  // the next pass, never a reader.
  std::function<void()> before_pass;
  std::function<void(std::shared_ptr<const SampleResult>)> on_pass;
  // After each drain, with the PIDs its per-process samples named (GpuSource::Drain), on the
  // sampling thread: so the process source can identify them while they may still exist.
  std::function<void(const std::vector<uint32_t>&)> on_drain{};
  // Where `interval` is longer, the source's buffers are drained this often between passes
  // (GpuSource::Drain), so a long interval loses none of the driver's samples. 0: never.
  std::chrono::milliseconds drain_interval{0};
};

class Sampler {
 public:
  // `source` and `watch` must outlive the Sampler; `watch` must be the source's observer.
  Sampler(gpu::GpuSource& source, const CallWatch& watch, SamplerOptions options);
  ~Sampler();  // stops and joins
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void Start();
  // Stops the loop. If a driver call hangs, waits for it (a thread cannot be cancelled safely).
  void Stop();
  SamplerHealth Health() const;  // thread-safe, cheap: copies two shared_ptrs and counters
  // Blocks until a pass with sequence >= `sequence` was published or `timeout` passed.
  bool WaitForPass(uint64_t sequence, std::chrono::milliseconds timeout) const;

 private:
  void Run();
  // Waits until `next`, draining the source every drain_interval (from the pass's start) on the
  // way; true when stopped.
  bool WaitDraining(std::chrono::steady_clock::time_point pass_begin,
                    std::chrono::steady_clock::time_point next);
  void Watchdog();

  gpu::GpuSource& source_;
  const CallWatch& watch_;
  SamplerOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stop_ = false;
  std::shared_ptr<const SampleResult> latest_, last_good_;
  uint64_t passes_ = 0, failures_ = 0, deadline_exceeded_ = 0;
  const char* stalled_call_ = nullptr;
  std::thread worker_, watchdog_;
};

}  // namespace gpumeter::sampler
