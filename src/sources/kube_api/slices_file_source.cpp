#include "sources/kube_api/slices_file_source.h"

#include <spdlog/spdlog.h>

#include "common/bounded_file.h"

namespace gpumeter::kube_api {

SlicesFileSource::SlicesFileSource(std::filesystem::path path)
    : path_(std::move(path)), tracker_("resourceslices", "file " + path_.string()) {}

void SlicesFileSource::Refresh() const {
  const auto begin = std::chrono::steady_clock::now();
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path_, ec);
  const auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
  if (!ec && current_ && mtime == mtime_ && size == size_) {
    tracker_.Unchanged();
    return;
  }
  tracker_.Attempt();
  auto fail = [&](const std::string& why) {
    if (tracker_.Failed(why))
      spdlog::warn("resource slices file {}: {} (keeping the last good DRA devices)",
                   path_.string(), why);
  };
  if (ec) return fail("cannot stat: " + ec.message());
  // A node's slices are kilobytes; the cap only stops a runaway or hostile file.
  constexpr size_t kMaxSlicesFile = 64u << 20;
  const auto body = ReadBoundedFile(path_.string(), kMaxSlicesFile);
  if (!body) return fail(body.error().message);
  auto store = std::make_shared<k8s::ResourceSliceStore>();
  if (auto applied = store->ApplyList(*body); !applied) return fail(applied.error().message);
  if (tracker_.Succeeded(std::chrono::steady_clock::now()))
    spdlog::info("resource slices file {}: read ({} DRA devices)", path_.string(),
                 store->devices().size());
  current_ = std::move(store);
  mtime_ = mtime;
  size_ = size;
  tracker_.SetDuration(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
}

std::shared_ptr<const k8s::ResourceSliceStore> SlicesFileSource::Current() const {
  std::lock_guard lock(mu_);
  Refresh();
  return current_;
}

domain::SourceStatus SlicesFileSource::Status() const {
  std::lock_guard lock(mu_);
  return tracker_.status();
}

}  // namespace gpumeter::kube_api
