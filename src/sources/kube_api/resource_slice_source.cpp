#include "sources/kube_api/resource_slice_source.h"

#include <spdlog/spdlog.h>

#include "sources/kube_api/api_client.h"

namespace gpumeter::kube_api {

ApiServerSliceSource::ApiServerSliceSource(SliceSourceOptions options)
    : options_(std::move(options)),
      tracker_("resourceslices", "API server " + options_.config.server) {}

ApiServerSliceSource::~ApiServerSliceSource() { Stop(); }

void ApiServerSliceSource::Start() {
  std::lock_guard lock(mu_);
  if (worker_.joinable()) return;
  stop_ = false;
  finished_ = false;
  worker_ = std::thread([this] { Run(); });
}

void ApiServerSliceSource::Stop() {
  {
    std::unique_lock lock(mu_);
    stop_ = true;
    cv_.notify_all();
    // Interrupt a list in flight (repeatedly: it may not have opened its socket yet).
    while (worker_.joinable() && !finished_) {
      if (active_) active_->Cancel();
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  if (worker_.joinable()) worker_.join();
}

std::shared_ptr<const k8s::ResourceSliceStore> ApiServerSliceSource::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

domain::SourceStatus ApiServerSliceSource::Status() const {
  std::lock_guard lock(mu_);
  return tracker_.status();
}

void ApiServerSliceSource::ListOnce() {
  const auto begin = std::chrono::steady_clock::now();
  std::string error;
  std::shared_ptr<k8s::ResourceSliceStore> store;
  if (auto client = MakeApiClient(options_.config, "list resourceslices",
                                  {.connect_timeout = options_.connect_timeout,
                                   .read_timeout = std::chrono::seconds(60),
                                   .deadline = options_.list_limits.deadline,
                                   .max_bytes = options_.list_limits.max_bytes});
      !client) {
    error = client.error().message;
  } else {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      active_ = &*client;
    }
    auto r = client->Get("/apis/resource.k8s.io/v1/resourceslices",
                         {{"fieldSelector", "spec.nodeName=" + options_.node_name}},
                         "list resourceslices");
    {
      std::lock_guard lock(mu_);
      active_ = nullptr;
      if (stop_) return;
    }
    if (r && r->status == 404) {
      store = std::make_shared<k8s::ResourceSliceStore>();  // DRA not served: no devices
    } else if (!r) {
      error = r.error().message;
    } else if (r->status != 200) {
      error = "list resourceslices: " + Describe(*r);
    } else {
      store = std::make_shared<k8s::ResourceSliceStore>();
      if (auto applied = store->ApplyList(r->body); !applied) {
        error = "list resourceslices: " + applied.error().message;
        store.reset();
      }
    }
  }
  std::lock_guard lock(mu_);
  tracker_.Attempt();
  tracker_.SetDuration(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  if (store) {
    current_ = std::move(store);
    tracker_.Succeeded(std::chrono::steady_clock::now());
  } else {
    if (tracker_.Failed(error)) spdlog::warn("{} (keeping the last good DRA devices)", error);
  }
}

void ApiServerSliceSource::Run() {
  for (;;) {
    ListOnce();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, options_.period, [this] { return stop_; })) break;
  }
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

}  // namespace gpumeter::kube_api
