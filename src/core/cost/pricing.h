// What a GPU costs per hour: from a pricing file (YAML, docs/pricing.md) with per-model prices,
// per-instance-type node prices split into GPU and the rest, a currency and a discount; or from
// the dated default table shipped with gpumeter (AWS us-east-1 on-demand, per GPU-hour with the
// host's share, 2026-11), which the report flags as defaults to override. Pure; immutable after
// parsing, so a Pricing may be shared between threads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpumeter::cost {

// A GPU model matched by the words of its NVML name (case-insensitive, every word present), e.g.
// {"A100", "80GB"} matches "NVIDIA A100-SXM4-80GB"; more words win over fewer.
struct ModelPrice {
  std::vector<std::string> words;
  double per_gpu_hour = 0;
  std::string source;  // "pricing file", or the default table's name and date
};

struct PriceQuote {
  double per_gpu_hour = 0;       // after the discount
  double list_per_gpu_hour = 0;  // before it
  std::string source;            // where it came from
  bool flagged = false;          // a default-table or fallback price: the report says so
};

class Pricing {
 public:
  // Only the default table, in USD.
  static Pricing Defaults();
  // A pricing file's text; `label` (its path) names it in errors.
  static Expected<Pricing> Parse(std::string_view yaml, const std::string& label);

  // The price of one whole GPU of `model` (its NVML name) per hour. In order: the file's node
  // price for `instance_type`; the file's model prices; with the defaults kept, the bundled
  // instance-type table (instance_prices.h; `region` is the node's, named in the source when the
  // table's differs) where its GPU matches `model`; the default model table; the fallback.
  // nullopt when nothing matches.
  std::optional<PriceQuote> Quote(const std::string& model, const std::string& instance_type = {},
                                  const std::string& region = {}) const;

  // The file's node price for `instance_type` (nodes:): the GPU share of the node's price and its
  // GPUs; nullopt when the file has none. A bill's node cost is split by it.
  struct NodeSplit {
    double gpu_share = 1;
    int gpus = 0;
  };
  std::optional<NodeSplit> NodeSplitOf(const std::string& instance_type) const;

  // The instance type the file maps node `node` to (instance_types), or "".
  std::string InstanceTypeOf(const std::string& node) const;

  const std::string& currency() const { return currency_; }
  double discount() const { return discount_; }

 private:
  struct Reader;  // reads a pricing file into these members, one step per key (pricing.cpp)

  std::string currency_ = "USD";
  double discount_ = 0;             // fraction off every price, [0, 1)
  std::vector<ModelPrice> models_;  // the file's first, then the defaults (when kept)
  struct NodePrice {
    std::string instance_type;
    double per_gpu_hour;  // node price × GPU share / GPUs
    std::string detail;
    double share;  // the GPU share of the node price
    int gpus;
  };
  std::vector<NodePrice> nodes_;
  std::optional<double> fallback_;
  bool defaults_ = true;  // the default tables are kept (defaults: false drops them)
  std::map<std::string, std::string> instance_types_;  // node name → instance type
};

// The GPU share of a node price under a named split preset: "aws-scad" (0.9: AWS split cost
// allocation data, GPU : CPU+memory = 9 : 1), "datadog" (0.95), "grafana" (0.70); nullopt for
// an unknown name.
std::optional<double> SplitPreset(std::string_view name);
// A preset's name or a share in (0, 1] ("0.85"); errors say which was expected.
Expected<double> ParseSplit(std::string_view text);

}  // namespace gpumeter::cost
