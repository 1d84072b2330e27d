// The bundled, dated on-demand prices of GPU instance types, so that a node labelled
// node.kubernetes.io/instance-type prices its GPUs without a pricing file: per instance-hour in
// USD, Linux, in one region per cloud (AWS us-east-1, GCP us-central1, Azure eastus), with their
// sources (../shared/reference/billing-and-scaling.md §3.1; docs/pricing.md lists them). A price
// per GPU device the instance shows NVML is the instance's price over its devices (the host's
// share included, as the model table's are); g6f types show one device that is a fraction of an
// L4, so their device is priced at the instance's price. Pure, immutable.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpumeter::cost {

struct InstancePrice {
  std::string cloud, region, instance_type;  // instance_type as the node label has it
  double per_hour = 0;                       // USD per instance-hour, on-demand
  double devices = 1;                        // GPU devices NVML shows
  std::vector<std::string> model_words;      // the GPU model, as ModelPrice matches it
  std::string source;                        // catalogue and date
};

// The row for `instance_type` (exact; Azure's case-insensitively), or nullopt.
std::optional<InstancePrice> FindInstancePrice(const std::string& instance_type);

}  // namespace gpumeter::cost
