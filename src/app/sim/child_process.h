// A helper process the demo starts and owns (the fake kubelet): started with a clean signal mask,
// its stdout to /dev/null, and told to stop (SIGTERM, then SIGKILL after a grace) and reaped when
// the object goes; it also gets SIGTERM if this process dies first. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace gpumeter::app {

class ChildProcess {
 public:
  // Starts `path` with `args` (argv[1..]). The error names the program.
  static Expected<std::unique_ptr<ChildProcess>> Start(const std::string& path,
                                                       const std::vector<std::string>& args);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit status (a signal as 128 + its number) once it has exited, else nullopt.
  std::optional<int> Exited();
  // Waits until `ready()` holds, polling every 20 ms, or fails when the child exits first or
  // `timeout` passes. Errors name the program and what happened.
  template <typename Ready>
  Expected<void> WaitUntil(Ready ready, std::chrono::milliseconds timeout);

 private:
  ChildProcess(pid_t pid, std::string path) : pid_(pid), path_(std::move(path)) {}
  Expected<void> CheckAlive(bool timed_out);
  void Pause();
  pid_t pid_;
  std::string path_;
  std::optional<int> status_;
};

template <typename Ready>
Expected<void> ChildProcess::WaitUntil(Ready ready, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ready()) {
    const bool late = std::chrono::steady_clock::now() >= deadline;
    if (auto alive = CheckAlive(late); !alive) return alive;
    Pause();
  }
  return {};
}

}  // namespace gpumeter::app
