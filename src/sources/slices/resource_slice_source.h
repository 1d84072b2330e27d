// The DRA devices of this node (ResourceSlices), for placing DRA claim devices on GPUs. Slices
// change rarely (a driver restart, a MIG reconfiguration), so they are listed periodically
// (fieldSelector spec.nodeName=NODE) on the source's own thread rather than watched. A cluster
// without resource.k8s.io/v1 (404) is not an error: there are simply no DRA devices.
// Thread-safe; each list publishes a new immutable store.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "domain/source_status.h"
#include "sources/kube_api/api_client.h"
#include "sources/kube_api/kubeconfig.h"
#include "sources/kube_api/periodic_get.h"
#include "sources/polled/polled_source.h"
#include "sources/slices/resource_slices.h"

namespace gpumeter::kube_api {

// Poll: a file source re-reads a changed file; the API-server lister does its work on its own
// thread. Current: null before the first list.
using SliceSource = sources::PolledSource<k8s::ResourceSliceStore>;

struct SliceSourceOptions {
  ApiServerConfig config;
  std::string node_name;
  std::chrono::milliseconds period{60000};
  std::chrono::milliseconds connect_timeout{5000};
  ListLimits list_limits;
};

class ApiServerSliceSource final : public SliceSource {
 public:
  explicit ApiServerSliceSource(SliceSourceOptions options);
  void Start() { get_.Start(); }
  void Stop() { get_.Stop(); }
  std::shared_ptr<const k8s::ResourceSliceStore> Current() const override { return get_.Current(); }
  domain::SourceStatus Status() const override { return get_.Status(); }

 private:
  PeriodicGet<k8s::ResourceSliceStore> get_;
};

}  // namespace gpumeter::kube_api
