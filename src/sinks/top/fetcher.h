// Fetches frames off the UI thread, so that a slow or gone source never blocks the keyboard:
// a thread of its own calls the fetch function every interval and publishes the latest good
// frame and the latest failure (with since when the fetches fail). Thread-safe: Latest() may be
// called from any thread while the fetcher runs. The destructor stops the thread and waits for a
// fetch in flight (bounded by the fetch function's own deadlines).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/error.h"
#include "core/top/frame.h"

namespace gpumeter::top {

// The wall clock in whole Unix seconds: the time frames and failures are stamped with.
int64_t NowUnix();

class Fetcher {
 public:
  // `fetch`: called on the fetcher's thread with the current Unix time; it must not touch the
  // caller's state. Starts fetching at once.
  using FetchFn = std::function<Expected<FrameData>(int64_t now_unix_s)>;
  Fetcher(FetchFn fetch, std::chrono::milliseconds interval);
  ~Fetcher();
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  struct Latest {
    std::shared_ptr<const FrameData> frame;       // the last good one; null before the first
    std::optional<int64_t> failing_since_unix_s;  // set while the fetches fail
    std::string error;                            // the latest failure
    uint64_t generation = 0;                      // +1 per fetch, good or not
  };
  Latest Get() const;

 private:
  void Run();

  FetchFn fetch_;
  std::chrono::milliseconds interval_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  Latest latest_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace gpumeter::top
