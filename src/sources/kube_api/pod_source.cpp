#include "sources/kube_api/pod_source.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

namespace gpumeter::node {

PodsFileSource::PodsFileSource(std::filesystem::path path) : path_(std::move(path)) {
  status_.name = "pods";
  status_.detail = "file " + path_.string();
}

void PodsFileSource::Poll(std::chrono::steady_clock::time_point now) {
  const auto begin = std::chrono::steady_clock::now();
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path_, ec);
  const auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
  std::lock_guard lock(mu_);
  if (!ec && current_ && mtime == mtime_ && size == size_) {
    status_.up = true;  // unchanged: nothing to read
    return;
  }
  ++status_.attempts;
  auto fail = [&](const std::string& why) {
    if (status_.up || status_.attempts == 1)
      spdlog::warn("pods file {}: {} (keeping the last good pod set)", path_.string(), why);
    status_.up = false;
    ++status_.failures;
    status_.last_error = why;
    status_.last_duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  if (ec) return fail("cannot stat: " + ec.message());
  std::ifstream in(path_);
  if (!in) return fail("cannot open");
  std::ostringstream body;
  body << in.rdbuf();
  auto store = std::make_shared<k8s::PodStore>();
  if (auto applied = store->ApplyList(body.str()); !applied) return fail(applied.error().message);
  if (!status_.up && status_.failures > 0)
    spdlog::info("pods file {}: read again ({} pods)", path_.string(), store->size());
  current_ = std::move(store);
  mtime_ = mtime;
  size_ = size;
  status_.up = true;
  status_.last_success = now;
  status_.last_error.clear();
  status_.last_duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

std::shared_ptr<const k8s::PodStore> PodsFileSource::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

SourceStatus PodsFileSource::Status() const {
  std::lock_guard lock(mu_);
  return status_;
}

}  // namespace gpumeter::node
