#include "sinks/top/fetcher.h"

namespace gpumeter::top {

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Fetcher::Fetcher(FetchFn fetch, std::chrono::milliseconds interval)
    : fetch_(std::move(fetch)), interval_(interval), thread_([this] { Run(); }) {}

Fetcher::~Fetcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

Fetcher::Latest Fetcher::Get() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void Fetcher::Run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    lock.unlock();  // the fetch runs unlocked: Get() never waits on the network
    const int64_t now = NowUnix();
    auto result = fetch_(now);
    lock.lock();
    ++latest_.generation;
    if (result) {
      latest_.frame = std::make_shared<const FrameData>(std::move(*result));
      latest_.failing_since_unix_s.reset();
      latest_.error.clear();
    } else {
      if (!latest_.failing_since_unix_s) latest_.failing_since_unix_s = now;
      latest_.error = result.error().message;
    }
    wake_.wait_for(lock, interval_, [this] { return stop_; });
  }
}

}  // namespace gpumeter::top
