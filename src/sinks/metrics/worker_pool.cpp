#include "sinks/metrics/worker_pool.h"

#include <system_error>

namespace gpumeter::metrics {

OnDemandPool::OnDemandPool(std::size_t max_threads, std::chrono::milliseconds linger,
                           StartThread start)
    : max_threads_(max_threads > 0 ? max_threads : 1), linger_(linger), start_(std::move(start)) {}

OnDemandPool::~OnDemandPool() { shutdown(); }

std::vector<std::thread> OnDemandPool::TakeFinishedLocked() {
  std::vector<std::thread> done;
  for (const auto& id : finished_) {
    auto it = workers_.find(id);
    done.push_back(std::move(it->second));
    workers_.erase(it);
  }
  finished_.clear();
  return done;
}

void OnDemandPool::enqueue(std::function<void()> fn) {
  std::vector<std::thread> done;
  std::function<void()> inline_fn;
  {
    std::lock_guard lock(mu_);
    if (shutdown_) return;
    jobs_.push_back(std::move(fn));
    done = TakeFinishedLocked();
    if (live_ - busy_ < jobs_.size() && live_ < max_threads_) {
      try {
        // Under the lock: the new thread cannot finish (and list itself) before it is recorded.
        std::thread t = StartWith(start_, [this] { Work(); });
        const auto id = t.get_id();
        workers_.emplace(id, std::move(t));
        ++live_;
      } catch (const std::system_error&) {
        // A live thread takes the task later; with none, it runs here (worker_pool.h).
        if (live_ == 0) {
          inline_fn = std::move(jobs_.back());
          jobs_.pop_back();
        } else {
          cv_.notify_one();
        }
      }
    } else {
      cv_.notify_one();
    }
  }
  for (auto& t : done) t.join();  // they have left Work(): joins at once
  if (inline_fn) inline_fn();
}

void OnDemandPool::Work() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!cv_.wait_for(lock, linger_, [this] { return !jobs_.empty() || shutdown_; })) break;
    if (jobs_.empty()) break;  // shutting down, nothing left to run
    auto fn = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    fn();
    fn = nullptr;  // what the task captured is freed on this thread, before it ends
    lock.lock();
    --busy_;
  }
  --live_;
  finished_.push_back(std::this_thread::get_id());
}

void OnDemandPool::shutdown() {
  std::map<std::thread::id, std::thread> all;
  {
    std::lock_guard lock(mu_);
    shutdown_ = true;
    all = std::move(workers_);
    workers_.clear();
    finished_.clear();
  }
  cv_.notify_all();
  for (auto& [id, t] : all) t.join();
}

std::size_t OnDemandPool::threads() const {
  std::lock_guard lock(mu_);
  return live_;
}

}  // namespace gpumeter::metrics
