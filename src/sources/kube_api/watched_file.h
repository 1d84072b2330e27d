// A list file (a PodList or a ResourceSliceList as kubectl prints them) that the agent reads again
// whenever its modification time or size changes: --pods-file and --resource-slices-file. One
// that is missing, too large or malformed is an error that keeps the last good contents and shows
// in Status(); the first failure of an outage and the recovery are logged once each. Every read,
// good or failed, records its duration. `Store` has `Expected<void> ApplyList(std::string_view)`.
// Thread-safe: Poll, Current and Status may be called from any thread.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/bounded_file.h"
#include "domain/source_status.h"

namespace gpumeter::kube_api {

template <typename Store>
class WatchedListFile {
 public:
  struct Naming {
    std::string source;  // the SourceStatus name: "pods", "resourceslices"
    std::string what;    // in log lines: "pods file"
    std::string kept;    // what a failure keeps: "the last good pod set"
    std::function<std::string(const Store&)> describe;  // "12 pods"
    // A check of what was read beyond its format (the Node file is this node's); empty: none.
    std::function<Expected<void>(const Store&)> check = {};
  };

  WatchedListFile(std::filesystem::path path, Naming naming)
      : path_(std::move(path)),
        naming_(std::move(naming)),
        tracker_(naming_.source, "file " + path_.string()) {}

  // Reads the file when it changed since the last good read (a stat, and a read of at most
  // `kMaxBytes` when it changed); `now` stamps a success.
  void Poll(std::chrono::steady_clock::time_point now) {
    const auto begin = std::chrono::steady_clock::now();
    std::error_code ec;
    const auto mtime = std::filesystem::last_write_time(path_, ec);
    const auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
    std::lock_guard lock(mu_);
    if (!ec && current_ && mtime == mtime_ && size == size_) {
      tracker_.Unchanged();
      return;
    }
    tracker_.Attempt();
    auto result = Read(ec);
    tracker_.SetDuration(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    if (!result) {
      if (tracker_.Failed(result.error().message))
        spdlog::warn("{} {}: {} (keeping {})", naming_.what, path_.string(), result.error().message,
                     naming_.kept);
      return;
    }
    if (tracker_.Succeeded(now))
      spdlog::info("{} {}: read ({})", naming_.what, path_.string(), naming_.describe(**result));
    current_ = std::move(*result);
    mtime_ = mtime;
    size_ = size;
  }

  // The last good contents; null before the first good read.
  std::shared_ptr<const Store> Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  domain::SourceStatus Status() const {
    std::lock_guard lock(mu_);
    return tracker_.status();
  }

  // A node's pods or slices are kilobytes; the cap only stops a runaway or hostile file.
  static constexpr size_t kMaxBytes = 64u << 20;

 private:
  Expected<std::shared_ptr<const Store>> Read(const std::error_code& stat_error) const {
    if (stat_error)
      return MakeError(ErrorCode::kUnavailable, "cannot stat: " + stat_error.message());
    const auto body = ReadBoundedFile(path_.string(), kMaxBytes);
    if (!body) return tl::unexpected(body.error());
    auto store = std::make_shared<Store>();
    if (auto applied = store->ApplyList(*body); !applied) return tl::unexpected(applied.error());
    if (naming_.check)
      if (auto checked = naming_.check(*store); !checked) return tl::unexpected(checked.error());
    return std::shared_ptr<const Store>(std::move(store));
  }

  const std::filesystem::path path_;
  const Naming naming_;
  mutable std::mutex mu_;  // guards everything below
  std::shared_ptr<const Store> current_;
  domain::SourceTracker tracker_;
  std::filesystem::file_time_type mtime_{};
  uintmax_t size_ = 0;
};

}  // namespace gpumeter::kube_api
