// Runs independent blocking reads together, on threads of their own, and gives their results in
// the reads' order: a query to Prometheus is evaluated and encoded there while this process
// decodes another's reply (docs/fleet.md, "Scale"). A thread that cannot be had (std::system_error
// at the process's or cgroup's thread limit) is not an error: the caller's thread works through
// the reads too. Blocks until every read is done.
// Thread-safety: the reads must be safe to run together; nothing else is shared.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/start_thread.h"

namespace gpumeter {

// At most `at_once` reads run together (at least 1): each thread takes the next read not yet
// taken, in order.
template <typename T>
std::vector<T> AllAtOnce(const std::vector<std::function<T()>>& reads, size_t at_once,
                         const StartThread& start = {}) {
  std::vector<std::optional<T>> done(reads.size());
  std::atomic<size_t> next{0};
  auto work = [&done, &reads, &next] {
    for (size_t i; (i = next++) < reads.size();) done[i].emplace(reads[i]());
  };
  // The caller's thread is one of the `at_once`.
  std::vector<std::thread> threads;
  const size_t n = std::min(std::max<size_t>(at_once, 1), reads.size());
  threads.reserve(n);
  for (size_t t = 1; t < n; ++t) {
    try {
      threads.push_back(StartWith(start, work));
    } catch (const std::system_error&) {
      break;  // the caller's thread takes what no thread took
    }
  }
  work();
  for (auto& t : threads) t.join();
  std::vector<T> out;
  out.reserve(reads.size());
  for (auto& d : done) out.push_back(std::move(*d));
  return out;
}

}  // namespace gpumeter
