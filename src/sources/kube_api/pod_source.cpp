#include "sources/kube_api/pod_source.h"

#include "common/bounded_file.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

namespace gpumeter::kube_api {

PodsFileSource::PodsFileSource(std::filesystem::path path)
    : path_(std::move(path)), tracker_("pods", "file " + path_.string()) {}

void PodsFileSource::Poll(std::chrono::steady_clock::time_point now) {
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
  auto fail = [&](const std::string& why) {
    if (tracker_.Failed(why))
      spdlog::warn("pods file {}: {} (keeping the last good pod set)", path_.string(), why);
    tracker_.SetDuration(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  };
  if (ec) return fail("cannot stat: " + ec.message());
  // A pod list of a node is kilobytes; the cap only stops a runaway or hostile file.
  constexpr size_t kMaxPodsFile = 64u << 20;
  const auto body = ReadBoundedFile(path_.string(), kMaxPodsFile);
  if (!body) return fail(body.error().message);
  auto store = std::make_shared<k8s::PodStore>();
  if (auto applied = store->ApplyList(*body); !applied) return fail(applied.error().message);
  if (tracker_.Succeeded(now))
    spdlog::info("pods file {}: read again ({} pods)", path_.string(), store->size());
  current_ = std::move(store);
  mtime_ = mtime;
  size_ = size;
  tracker_.SetDuration(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
}

std::shared_ptr<const k8s::PodStore> PodsFileSource::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

domain::SourceStatus PodsFileSource::Status() const {
  std::lock_guard lock(mu_);
  return tracker_.status();
}

}  // namespace gpumeter::kube_api
