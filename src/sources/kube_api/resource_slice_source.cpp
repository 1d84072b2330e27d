#include "sources/kube_api/resource_slice_source.h"

#include <spdlog/spdlog.h>

#include "sources/kube_api/api_client.h"

namespace gpumeter::kube_api {

ApiServerSliceSource::ApiServerSliceSource(SliceSourceOptions options)
    : options_(std::move(options)),
      tracker_("resourceslices", "API server " + options_.config.server) {}

ApiServerSliceSource::~ApiServerSliceSource() { Stop(); }

void ApiServerSliceSource::Start() {
  worker_.Start([this] {
    do ListOnce();
    while (worker_.SleepFor(options_.period));
  });
}

void ApiServerSliceSource::Stop() { worker_.Stop(); }

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
    if (!worker_.BeginCall([&c = *client] { c.Cancel(); })) return;
    auto r = client->Get("/apis/resource.k8s.io/v1/resourceslices",
                         {{"fieldSelector", "spec.nodeName=" + options_.node_name}},
                         "list resourceslices");
    if (!worker_.EndCall()) return;
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

}  // namespace gpumeter::kube_api
