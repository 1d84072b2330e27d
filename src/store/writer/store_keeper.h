// Keeps the agent's (and the demo's) usage store open and watched, so that nothing is lost in
// silence:
//   - a store that cannot be opened (a read-only or missing directory, a full disk) is retried
//     with backoff (1 s doubling to 60 s), not given up for the agent's life;
//   - the file is checked every `check_every` (5 s): deleted, or replaced by another file (its
//     inode changed), it is closed, logged and opened again at its path, so intervals stop going
//     to a file nobody can read; Ensure() says so, so the recorder writes the last intervals again
//     (they may have gone to the deleted file);
//   - its status is a domain::SourceStatus named "store" (up, attempts, failures, last error), in
//     /api/v1/sources and gpumeter_source_up{source="store"} like every other source.
// It is also the rightsizer's history: reads go to the store open at the time, or fail clearly
// while none is. Not a sink of its own: a handle the recorder (sampling thread) and the rightsizer
// (its own thread) share. Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/usage/usage_reader.h"
#include "domain/source_status.h"
#include "store/store.h"

namespace gpumeter::app {

class StoreKeeper final : public usage::UsageHistorySource {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::string path;
    store::StoreOptions store;
    std::chrono::milliseconds check_every{5000};
    std::chrono::milliseconds first_backoff{1000}, max_backoff{60000};
  };
  explicit StoreKeeper(Options options);

  // What Ensure() did.
  enum class Event { kOpen, kNotOpen, kReopened };
  // Opens the store when it is due (at once the first time), checks the file when that is due.
  // Called by the recorder before each write, on one thread. kInvalidInput from the first open
  // (another program's file, a newer schema) is returned as an error: waiting will not fix it.
  Expected<Event> Ensure(Clock::time_point now);

  // The store open now; null while none is. Thread-safe.
  std::shared_ptr<store::Store> Current() const;
  // A write to the current store failed or succeeded (counted in the status).
  void WriteFailed(const std::string& why);
  void WriteSucceeded(Clock::time_point now);
  domain::SourceStatus Status() const;
  const std::string& path() const { return options_.path; }

  // usage::UsageHistorySource, read from the store open at the time of the call.
  std::string HistoryName() const override;
  Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const override;
  Expected<usage::PodLabelMap> HistoryPodLabels() const override;
  Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HistoryMinutes(
      int64_t from_unix_s, int64_t to_unix_s) const override;
  void HistoryDone() const override;

 private:
  Expected<Event> TryOpen(Clock::time_point now, bool reopen);
  // Whether the path still names the file that was opened.
  bool StillOurs(std::string& why) const;

  Options options_;
  mutable std::mutex mu_;
  std::shared_ptr<store::Store> store_;
  domain::SourceTracker tracker_;
  bool opened_once_ = false;
  Clock::time_point next_open_{}, next_check_{};
  std::chrono::milliseconds backoff_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace gpumeter::app
