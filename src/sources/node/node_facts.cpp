#include "sources/node/node_facts.h"

#include <nlohmann/json.hpp>

#include "common/json/strict_parse.h"

namespace gpumeter::k8s {
namespace {

using nlohmann::json;

std::string Label(const std::map<std::string, std::string>& labels,
                  std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (const auto it = labels.find(k); it != labels.end()) return it->second;
  return "";
}

std::string CapacityType(const std::map<std::string, std::string>& labels) {
  const std::string karpenter = Label(labels, {"karpenter.sh/capacity-type"});
  if (!karpenter.empty()) return karpenter;  // spot, on-demand, reserved
  const std::string eks = Label(labels, {"eks.amazonaws.com/capacityType"});
  if (eks == "SPOT") return "spot";
  if (eks == "ON_DEMAND") return "on-demand";
  if (eks == "CAPACITY_BLOCK") return "reserved";
  if (Label(labels, {"cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible"}) == "true")
    return "spot";
  if (Label(labels, {"kubernetes.azure.com/scalesetpriority"}) == "spot") return "spot";
  if (Label(labels, {"lifecycle"}) == "EC2Spot") return "spot";
  return "";
}

std::string CloudOf(const std::string& provider_id) {
  if (provider_id.starts_with("aws://")) return "aws";
  if (provider_id.starts_with("gce://")) return "gcp";
  if (provider_id.starts_with("azure://")) return "azure";
  return "";
}

}  // namespace

Expected<void> NodeFacts::ApplyList(std::string_view body) {
  // A Node is a few levels deep; two values for one label are malformed, not a choice to make.
  auto doc = json_strict::Parse(body, "Node", 32);
  if (!doc) return tl::unexpected(doc.error());
  const auto kind = doc->is_object() ? doc->find("kind") : doc->end();
  if (!doc->is_object() || kind == doc->end() || !kind->is_string() || *kind != "Node")
    return MakeError(ErrorCode::kInvalidInput, "Node: kind is not Node");
  const auto meta = doc->find("metadata");
  if (meta == doc->end() || !meta->is_object() || !meta->contains("name") ||
      !(*meta)["name"].is_string())
    return MakeError(ErrorCode::kInvalidInput, "Node: metadata.name missing or not a string");
  std::map<std::string, std::string> labels;
  if (const auto l = meta->find("labels"); l != meta->end() && !l->is_null()) {
    if (!l->is_object())
      return MakeError(ErrorCode::kInvalidInput, "Node: metadata.labels is not an object");
    for (const auto& [k, v] : l->items()) {
      if (!v.is_string())
        return MakeError(ErrorCode::kInvalidInput,
                         "Node: metadata.labels['" + k + "'] is not a string");
      labels[k] = v.get<std::string>();
    }
  }
  std::string gce_instance_id;
  if (const auto a = meta->find("annotations"); a != meta->end() && !a->is_null()) {
    if (!a->is_object())
      return MakeError(ErrorCode::kInvalidInput, "Node: metadata.annotations is not an object");
    if (const auto id = a->find("container.googleapis.com/instance_id"); id != a->end()) {
      if (!id->is_string())
        return MakeError(ErrorCode::kInvalidInput,
                         "Node: metadata.annotations['container.googleapis.com/instance_id'] is "
                         "not a string");
      gce_instance_id = id->get<std::string>();
    }
  }
  std::string provider;
  if (const auto spec = doc->find("spec"); spec != doc->end() && spec->is_object())
    if (const auto p = spec->find("providerID"); p != spec->end()) {
      if (!p->is_string())
        return MakeError(ErrorCode::kInvalidInput, "Node: spec.providerID is not a string");
      provider = p->get<std::string>();
    }
  name = (*meta)["name"].get<std::string>();
  provider_id = provider;
  instance_id = gce_instance_id;
  cloud = CloudOf(provider);
  instance_type =
      Label(labels, {"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"});
  region =
      Label(labels, {"topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"});
  zone = Label(labels, {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"});
  capacity_type = CapacityType(labels);
  gpu_labels.clear();
  for (const auto& [k, v] : labels)
    if (k.starts_with("nvidia.com/")) gpu_labels[k] = v;
  return {};
}

}  // namespace gpumeter::k8s
