// The pods of this node from the API server: list (fieldSelector spec.nodeName=NODE), then
// watch from the list's resourceVersion with bookmarks; relist on ERROR 410, on a malformed
// event, and after a failure (backoff 1 s doubling to 30 s). Runs on its own thread; each change
// publishes a new immutable PodStore, so the sampling loop never waits on the network and a bad
// event never costs the last good pod set. The bearer token file is re-read on every connection
// (projected tokens rotate hourly). Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "common/stoppable_worker.h"
#include "sources/kube_api/api_client.h"
#include "sources/kube_api/kubeconfig.h"
#include "sources/pods/pod_source.h"

namespace gpumeter::kube_api {

struct ApiServerOptions {
  ApiServerConfig config;
  std::string node_name;
  std::chrono::seconds watch_timeout{
      300};  // the server ends each watch after this (timeoutSeconds)
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  // The pods list; max_bytes also caps one watch event, and a watch the server has not ended
  // `deadline` after watch_timeout is cut.
  ListLimits list_limits;
};

class ApiServerPodSource final : public PodSource {
 public:
  explicit ApiServerPodSource(ApiServerOptions options);
  ~ApiServerPodSource() override;  // stops and joins
  ApiServerPodSource(const ApiServerPodSource&) = delete;
  ApiServerPodSource& operator=(const ApiServerPodSource&) = delete;

  void Start();
  void Stop();

  void Poll(std::chrono::steady_clock::time_point) override {
  }  // the work happens on its own thread
  std::shared_ptr<const k8s::PodStore> Current() const override;
  domain::SourceStatus Status() const override;
  uint64_t lists() const { return lists_.load(); }  // for tests and logs

 private:
  void Run();
  // One list, then watches until an error or a relist is needed; returns the error, if any.
  Expected<void> ListAndWatch();
  // Its steps. List fills `store` from a fresh list and publishes it (false: stopping). Watch
  // follows it from its resource version until the server ends the watch (true: watch again),
  // or until it must stop or relist (false).
  Expected<bool> List(const std::string& selector, k8s::PodStore& store);
  Expected<bool> Watch(const std::string& selector, k8s::PodStore& store);
  // Makes `client` the request in flight, which Stop interrupts; false when stopping.
  bool BeginRequest(const http::Client& client);
  Expected<http::Client> Connect(bool watch);
  void Publish(const k8s::PodStore& store);
  void Attempt();
  void Succeeded();
  void Failed(const std::string& why);

  ApiServerOptions options_;
  mutable std::mutex mu_;  // guards current_ and tracker_
  std::shared_ptr<const k8s::PodStore> current_;
  domain::SourceTracker tracker_;
  std::atomic<uint64_t> lists_{0};
  StoppableWorker worker_;  // last: it stops before the rest is destroyed
};

}  // namespace gpumeter::kube_api
