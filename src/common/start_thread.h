// How a component that starts threads starts them, so that a test can refuse one as
// pthread_create does at the process's or the cgroup's thread limit (std::system_error).
// Used by RequestDeadline (common/http/request_deadline.h).
#pragma once

#include <functional>
#include <thread>
#include <utility>

namespace gpumeter {

// Starts a thread running its argument; throws std::system_error when none can be had.
// An empty StartThread means StartStdThread.
using StartThread = std::function<std::thread(std::function<void()>)>;

inline std::thread StartStdThread(std::function<void()> fn) { return std::thread(std::move(fn)); }

// `start`, or StartStdThread when it is empty.
inline std::thread StartWith(const StartThread& start, std::function<void()> fn) {
  return start ? start(std::move(fn)) : StartStdThread(std::move(fn));
}

}  // namespace gpumeter
