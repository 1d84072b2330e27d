#include "sources/slices/resource_slice_source.h"

namespace gpumeter::kube_api {
namespace {

// A 200 with the list; a 404 is a cluster without resource.k8s.io/v1: no DRA devices.
Expected<std::shared_ptr<k8s::ResourceSliceStore>> Interpret(const http::Reply& r) {
  if (r.status == 404) return std::make_shared<k8s::ResourceSliceStore>();
  if (r.status != 200)
    return MakeError(ErrorCode::kUnavailable, "list resourceslices: " + Describe(r));
  auto store = std::make_shared<k8s::ResourceSliceStore>();
  if (auto applied = store->ApplyList(r.body); !applied)
    return MakeError(ErrorCode::kInvalidInput, "list resourceslices: " + applied.error().message);
  return store;
}

}  // namespace

ApiServerSliceSource::ApiServerSliceSource(SliceSourceOptions o)
    : get_(o.config,
           {"list resourceslices",
            "/apis/resource.k8s.io/v1/resourceslices",
            {{"fieldSelector", "spec.nodeName=" + o.node_name}},
            {.connect_timeout = o.connect_timeout,
             .read_timeout = std::chrono::seconds(60),
             .deadline = o.list_limits.deadline,
             .max_bytes = o.list_limits.max_bytes}},
           o.period, {"resourceslices", "the last good DRA devices"}, Interpret) {}

}  // namespace gpumeter::kube_api
