#include "core/cost/instance_prices.h"

#include <algorithm>
#include <cctype>

namespace gpumeter::cost {
namespace {

constexpr const char* kAws = "SkyPilot catalog v8 (2026), us-east-1";
constexpr const char* kGcp = "google-cloud-pricing-cost-calculator (2025-03-06), us-central1";
constexpr const char* kAzure = "SkyPilot catalog v6 (2026), eastus";

const std::vector<InstancePrice>& Table() {
  static const std::vector<InstancePrice> table = {
      // immutable after first use
      {"aws", "us-east-1", "p4d.24xlarge", 21.957642, 8, {"A100", "40GB"}, kAws},
      {"aws", "us-east-1", "p4de.24xlarge", 27.44705, 8, {"A100", "80GB"}, kAws},
      {"aws", "us-east-1", "p5.4xlarge", 6.88, 1, {"H100"}, kAws},
      {"aws", "us-east-1", "p5.48xlarge", 55.04, 8, {"H100"}, kAws},
      {"aws", "us-east-1", "p5en.48xlarge", 63.296, 8, {"H200"}, kAws},
      {"aws", "us-east-1", "p6-b200.48xlarge", 113.9328, 8, {"B200"}, kAws},
      {"aws", "us-east-1", "g5.xlarge", 1.006, 1, {"A10G"}, kAws},
      {"aws", "us-east-1", "g5.12xlarge", 5.672, 4, {"A10G"}, kAws},
      {"aws", "us-east-1", "g5.48xlarge", 16.288, 8, {"A10G"}, kAws},
      {"aws", "us-east-1", "g6.xlarge", 0.8048, 1, {"L4"}, kAws},
      {"aws", "us-east-1", "g6.12xlarge", 4.6016, 4, {"L4"}, kAws},
      {"aws", "us-east-1", "g6.48xlarge", 13.3504, 8, {"L4"}, kAws},
      {"aws",
       "ap-northeast-1",
       "g6f.2xlarge",
       0.68888,
       1,
       {"L4"},
       "SkyPilot catalog v8 (2026), ap-northeast-1 (a quarter of an L4)"},
      {"aws", "us-east-1", "g6e.xlarge", 1.861, 1, {"L40S"}, kAws},
      {"aws", "us-east-1", "g6e.12xlarge", 10.49264, 4, {"L40S"}, kAws},
      {"aws", "us-east-1", "g6e.48xlarge", 30.13118, 8, {"L40S"}, kAws},
      {"aws", "us-east-1", "g4dn.xlarge", 0.526, 1, {"T4"}, kAws},
      {"aws", "us-east-1", "g4dn.12xlarge", 3.912, 4, {"T4"}, kAws},
      {"gcp", "us-central1", "a2-highgpu-1g", 3.673385, 1, {"A100", "40GB"}, kGcp},
      {"gcp", "us-central1", "a2-highgpu-8g", 29.38708, 8, {"A100", "40GB"}, kGcp},
      {"gcp", "us-central1", "a2-ultragpu-8g", 40.5503831, 8, {"A100", "80GB"}, kGcp},
      {"gcp", "us-central1", "a3-highgpu-8g", 88.4899999, 8, {"H100"}, kGcp},
      {"gcp", "us-central1", "g2-standard-4", 0.706832255, 1, {"L4"}, kGcp},
      {"gcp", "us-central1", "g2-standard-48", 4.001665148, 4, {"L4"}, kGcp},
      {"azure", "eastus", "Standard_ND96asr_v4", 27.197, 8, {"A100", "40GB"}, kAzure},
      {"azure", "eastus", "Standard_ND96amsr_A100_v4", 32.77, 8, {"A100", "80GB"}, kAzure},
      {"azure", "eastus", "Standard_ND96isr_H100_v5", 98.32, 8, {"H100"}, kAzure},
      {"azure", "eastus", "Standard_NC24ads_A100_v4", 3.673, 1, {"A100", "80GB"}, kAzure},
      {"azure", "eastus", "Standard_NC40ads_H100_v5", 6.98, 1, {"H100"}, kAzure},
      {"azure", "eastus", "Standard_NC4as_T4_v3", 0.526, 1, {"T4"}, kAzure},
      {"azure", "eastus", "Standard_NC8as_T4_v3", 0.752, 1, {"T4"}, kAzure},
      {"azure", "eastus", "Standard_NC16as_T4_v3", 1.204, 1, {"T4"}, kAzure},
      {"azure", "eastus", "Standard_NC64as_T4_v3", 4.352, 4, {"T4"}, kAzure},
  };
  return table;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<InstancePrice> FindInstancePrice(const std::string& instance_type) {
  if (instance_type.empty()) return std::nullopt;
  const auto& t = Table();
  const auto it = std::find_if(t.begin(), t.end(), [&](const InstancePrice& p) {
    return p.cloud == "azure" ? Lower(p.instance_type) == Lower(instance_type)
                              : p.instance_type == instance_type;
  });
  return it == t.end() ? std::nullopt : std::optional<InstancePrice>(*it);
}

}  // namespace gpumeter::cost
