#include "store/writer/store_keeper.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpumeter::app {

StoreKeeper::StoreKeeper(Options options)
    : options_(std::move(options)),
      tracker_("store", options_.path),
      backoff_(options_.first_backoff) {}

std::shared_ptr<store::Store> StoreKeeper::Current() const {
  std::lock_guard lock(mu_);
  return store_;
}

domain::SourceStatus StoreKeeper::Status() const {
  std::lock_guard lock(mu_);
  auto s = tracker_.status();
  s.up = s.up && store_ != nullptr;
  return s;
}

void StoreKeeper::WriteFailed(const std::string& why) {
  std::lock_guard lock(mu_);
  tracker_.Attempt();
  tracker_.Failed(why);  // the recorder logs the outage, with what it keeps
}

void StoreKeeper::WriteSucceeded(Clock::time_point now) {
  std::lock_guard lock(mu_);
  tracker_.Attempt();
  tracker_.Succeeded(now);
}

Expected<StoreKeeper::Event> StoreKeeper::TryOpen(Clock::time_point now, bool reopen) {
  auto opened = store::Store::Open(options_.path, options_.store);
  std::lock_guard lock(mu_);
  tracker_.Attempt();
  if (!opened) {
    // Another program's file or a newer schema: waiting will not fix it, and the file must stay
    // as it is. Only at the first open: later, the agent keeps running and keeps trying.
    if (!opened_once_ && !reopen && opened.error().code == ErrorCode::kInvalidInput)
      return tl::unexpected(opened.error());
    if (tracker_.Failed(opened.error().message))
      spdlog::error(
          "{} (retrying every {} s at most; metrics are served and usage is kept in memory "
          "meanwhile)",
          opened.error().message, options_.max_backoff.count() / 1000);
    next_open_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, options_.max_backoff);
    return Event::kNotOpen;
  }
  struct stat st {};
  if (::stat(options_.path.c_str(), &st) == 0) dev_ = st.st_dev, ino_ = st.st_ino;
  store_ = std::shared_ptr<store::Store>(std::move(*opened));
  backoff_ = options_.first_backoff;
  next_check_ = now + options_.check_every;
  const bool recovered = tracker_.Succeeded(now);
  if (!opened_once_ || recovered || reopen)
    spdlog::info("recording usage in {}{}", options_.path, reopen ? " (opened again)" : "");
  opened_once_ = true;
  return reopen ? Event::kReopened : Event::kOpen;
}

bool StoreKeeper::StillOurs(std::string& why) const {
  struct stat st {};
  if (::stat(options_.path.c_str(), &st) != 0) {
    if (errno != ENOENT) return true;  // cannot tell (e.g. EACCES): the writes will say
    why = "the file was deleted while the agent wrote to it";
    return false;
  }
  if (st.st_dev != dev_ || st.st_ino != ino_) {
    why = "the file was replaced by another (inode " + std::to_string(st.st_ino) + ", was " +
          std::to_string(ino_) + ")";
    return false;
  }
  return true;
}

Expected<StoreKeeper::Event> StoreKeeper::Ensure(Clock::time_point now) {
  bool open = false, due = false, lost = false;
  {
    std::lock_guard lock(mu_);
    open = store_ != nullptr;
    due = open ? now >= next_check_ : now >= next_open_;
    lost = opened_once_;
  }
  if (!open) return due ? TryOpen(now, lost) : Event::kNotOpen;
  if (!due) return Event::kOpen;
  std::string why;
  if (StillOurs(why)) {
    std::lock_guard lock(mu_);
    next_check_ = now + options_.check_every;
    return Event::kOpen;
  }
  spdlog::warn("store {}: {}; opening it again at its path (the last intervals are written again)",
               options_.path, why);
  {
    std::lock_guard lock(mu_);
    store_.reset();  // a read in flight on another thread keeps its copy until it ends
    tracker_.Failed(why);
  }
  return TryOpen(now, true);
}

std::string StoreKeeper::HistoryName() const { return "store " + options_.path; }

namespace {

Error NotOpen(const std::string& path) {
  return {ErrorCode::kUnavailable, "store " + path + ": not open (retrying)"};
}

// The store's history, through the interface it implements (its overrides are private).
const usage::UsageHistorySource& History(const store::Store& s) { return s; }

}  // namespace

Expected<std::optional<std::pair<int64_t, int64_t>>> StoreKeeper::HistorySpan() const {
  const auto s = Current();
  if (!s) return tl::unexpected(NotOpen(options_.path));
  return History(*s).HistorySpan();
}

Expected<usage::PodLabelMap> StoreKeeper::HistoryPodLabels() const {
  const auto s = Current();
  if (!s) return tl::unexpected(NotOpen(options_.path));
  return History(*s).HistoryPodLabels();
}

Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> StoreKeeper::HistoryMinutes(
    int64_t from_unix_s, int64_t to_unix_s) const {
  const auto s = Current();
  if (!s) return tl::unexpected(NotOpen(options_.path));
  return History(*s).HistoryMinutes(from_unix_s, to_unix_s);
}

void StoreKeeper::HistoryDone() const {
  if (const auto s = Current()) History(*s).HistoryDone();
}

}  // namespace gpumeter::app
