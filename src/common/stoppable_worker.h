// The one background thread of a source that reads on its own (the API server's pods and
// ResourceSlices, dcgm-exporter's page): it runs a body until Stop, and Stop returns promptly
// whether the body is sleeping between reads or blocked in a request. A request is interruptible
// when the body registers how to cut it (BeginCall) before it starts; Stop calls that again and
// again until the body returns, because a request may be between registering and opening its
// socket, where a cut does nothing yet.
//
// Thread-safety: Start and Stop from the owner's thread; stopping() from any thread; SleepFor,
// BeginCall and EndCall from the body. The destructor stops and joins.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace gpumeter {

class StoppableWorker {
 public:
  StoppableWorker() = default;
  ~StoppableWorker() { Stop(); }
  StoppableWorker(const StoppableWorker&) = delete;
  StoppableWorker& operator=(const StoppableWorker&) = delete;

  // Runs `body` on a new thread; nothing when one is running. A stopped worker can start again.
  void Start(std::function<void()> body) {
    std::lock_guard lock(mu_);
    if (thread_.joinable()) return;
    stopping_ = false, finished_ = false, cancel_ = nullptr;
    thread_ = std::thread([this, body = std::move(body)] {
      body();
      std::lock_guard done(mu_);
      finished_ = true;
      cv_.notify_all();
    });
  }

  // Wakes a sleep, cuts the call in flight (every 20 ms until the body is out) and joins.
  void Stop() {
    {
      std::unique_lock lock(mu_);
      stopping_ = true;
      cv_.notify_all();
      while (thread_.joinable() && !finished_) {
        if (cancel_) cancel_();
        cv_.wait_for(lock, std::chrono::milliseconds(20));
      }
    }
    if (thread_.joinable()) thread_.join();
  }

  bool stopping() const { return stopping_.load(); }

  // Waits `d`, or until Stop: true when the body should go on.
  bool SleepFor(std::chrono::nanoseconds d) {
    std::unique_lock lock(mu_);
    return !cv_.wait_for(lock, d, [this] { return stopping_.load(); });
  }

  // The call about to start is cut by `cancel` (which must be safe from another thread) until
  // EndCall. False when stopping: do not start it.
  bool BeginCall(std::function<void()> cancel) {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    cancel_ = std::move(cancel);
    return true;
  }
  // The call is over; true when the body should go on.
  bool EndCall() {
    std::lock_guard lock(mu_);
    cancel_ = nullptr;
    return !stopping_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stopping_{false};
  bool finished_ = false;         // the body has returned
  std::function<void()> cancel_;  // cuts the call in flight; empty between calls
  std::thread thread_;
};

}  // namespace gpumeter
