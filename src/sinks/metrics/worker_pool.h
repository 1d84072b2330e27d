// The agent's HTTP server's task queue (httplib calls it once per accepted connection): at most
// `max_threads` connections are served at once, the rest wait in order, and each thread is started
// when there is more work than idle threads and ends after `linger` without work.
//
// Why not httplib::ThreadPool: its workers live as long as the server, and glibc gives every
// thread a cache of freed chunks (tcache: up to 7 of each size up to 1 KiB) that neither free()
// of other threads nor malloc_trim reaches. Sixteen workers taking turns at the scrapes each kept
// what a scrape had freed there, and that grew for hours (bench/soak.sh: malloc's in-use bytes
// +270 KB in 8 minutes of back-to-back scrapes with the pool, flat with tcache off). A thread that
// ends hands its cache back to the arena, where malloc_trim can return it to the kernel.
//
// When no thread can be started (std::system_error: the node's or the cgroup's thread limit), a
// live thread takes the task later; with none alive, enqueue() runs it on the caller's thread, as
// every task must run to close its connection.
//
// Thread-safe: enqueue() from httplib's listen thread, shutdown() once, from any thread.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/start_thread.h"

namespace gpumeter::metrics {

class OnDemandPool final : public httplib::TaskQueue {
 public:
  // `start` is replaced only in tests, to refuse threads (common/start_thread.h).
  OnDemandPool(std::size_t max_threads, std::chrono::milliseconds linger,
               StartThread start = nullptr);
  ~OnDemandPool() override;  // shutdown()
  OnDemandPool(const OnDemandPool&) = delete;
  OnDemandPool& operator=(const OnDemandPool&) = delete;

  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins every thread; later enqueues are dropped.
  void shutdown() override;

  std::size_t threads() const;  // threads alive now (running a task or lingering)

 private:
  void Work();
  std::vector<std::thread> TakeFinishedLocked();

  const std::size_t max_threads_;
  const std::chrono::milliseconds linger_;
  const StartThread start_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::map<std::thread::id, std::thread> workers_;  // started, not yet joined
  std::vector<std::thread::id> finished_;           // returned from Work, to join
  std::size_t live_ = 0, busy_ = 0;
  bool shutdown_ = false;
};

}  // namespace gpumeter::metrics
