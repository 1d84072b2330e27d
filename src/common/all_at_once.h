// Runs independent blocking reads at once, each on a thread of its own, and gives their results
// in the reads' order: a query to Prometheus is evaluated and encoded there while this process
// decodes another's reply (docs/fleet.md, "Scale": rightsizing's reads took half the time).
// A thread that cannot be had (std::system_error at the process's or cgroup's thread limit) is
// not an error: that read runs on the caller's thread. Blocks until every read is done.
// Thread-safety: the reads must be safe to run together; nothing else is shared.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/start_thread.h"

namespace gpumeter {

template <typename T>
std::vector<T> AllAtOnce(const std::vector<std::function<T()>>& reads,
                         const StartThread& start = {}) {
  std::vector<std::optional<T>> done(reads.size());
  std::vector<std::thread> threads;
  threads.reserve(reads.size());
  for (size_t i = 0; i < reads.size(); ++i) {
    try {
      threads.push_back(StartWith(start, [&done, &reads, i] { done[i].emplace(reads[i]()); }));
    } catch (const std::system_error&) {
      done[i].emplace(reads[i]());
    }
  }
  for (auto& t : threads) t.join();
  std::vector<T> out;
  out.reserve(reads.size());
  for (auto& d : done) out.push_back(std::move(*d));
  return out;
}

}  // namespace gpumeter
