#include "core/cost/pricing.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace gpumeter::cost {
namespace {

constexpr const char* kDefaultSource = "gpumeter default table (AWS us-east-1 on-demand, 2026-11)";

// The shipped defaults (docs/pricing.md, cost-and-pricing reference §3.2): per GPU-hour including
// the host's share of the instance, from p5/p5en/p6/p4de/p4d/g6/g4dn list prices.
std::vector<ModelPrice> DefaultTable() {
  return {
      {{"H100"}, 6.88, kDefaultSource},         {{"H200"}, 7.91, kDefaultSource},
      {{"B200"}, 14.24, kDefaultSource},        {{"A100", "80GB"}, 3.43, kDefaultSource},
      {{"A100", "40GB"}, 2.74, kDefaultSource}, {{"L4"}, 0.80, kDefaultSource},
      {{"T4"}, 0.53, kDefaultSource},
  };
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The words of an NVML name: runs of letters and digits ("NVIDIA A100-SXM4-80GB" →
// NVIDIA, A100, SXM4, 80GB), upper-cased.
std::set<std::string> Words(std::string_view name) {
  std::set<std::string> out;
  std::string cur;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.insert(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.insert(cur);
  return out;
}

Expected<double> Price(const YAML::Node& n, const std::string& where) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    return MakeError(ErrorCode::kInvalidInput, where + ": not a number");
  }
  if (!std::isfinite(v) || v < 0)
    return MakeError(ErrorCode::kInvalidInput, where + ": a price must be a number >= 0");
  return v;
}

}  // namespace

std::optional<double> SplitPreset(std::string_view name) {
  if (name == "aws-scad") return 0.9;
  if (name == "datadog") return 0.95;
  if (name == "grafana") return 0.70;
  return std::nullopt;
}

Pricing Pricing::Defaults() {
  Pricing p;
  p.models_ = DefaultTable();
  return p;
}

Expected<Pricing> Pricing::Parse(std::string_view yaml, const std::string& label) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidInput, label + ": not YAML: " + e.what());
  }
  if (!root.IsMap())
    return MakeError(ErrorCode::kInvalidInput,
                     label + ": expected a mapping (currency, gpu_models, nodes, …)");
  static const std::set<std::string> known{"currency",
                                           "discount",
                                           "defaults",
                                           "gpu_models",
                                           "nodes",
                                           "instance_types",
                                           "fallback_per_gpu_hour"};
  for (const auto& kv : root)
    if (!known.count(kv.first.as<std::string>()))
      return MakeError(ErrorCode::kInvalidInput,
                       label + ": unknown key '" + kv.first.as<std::string>() + "'");
  Pricing p;
  if (root["currency"]) {
    p.currency_ = root["currency"].as<std::string>("");
    if (p.currency_.size() != 3 || Upper(p.currency_) != p.currency_)
      return MakeError(
          ErrorCode::kInvalidInput,
          label + ": currency must be an ISO 4217 code such as USD, not '" + p.currency_ + "'");
  }
  if (root["discount"]) {
    auto d = Price(root["discount"], label + ": discount");
    if (!d) return tl::unexpected(d.error());
    if (*d >= 1)
      return MakeError(ErrorCode::kInvalidInput,
                       label + ": discount is a fraction in [0, 1), e.g. 0.3 for 30 % off");
    p.discount_ = *d;
  }
  if (const auto m = root["gpu_models"]) {
    if (!m.IsMap())
      return MakeError(ErrorCode::kInvalidInput,
                       label + ": gpu_models must map a model name to a price per GPU-hour");
    for (const auto& kv : m) {
      const std::string name = kv.first.as<std::string>();
      auto v = Price(kv.second, label + ": gpu_models." + name);
      if (!v) return tl::unexpected(v.error());
      const auto words = Words(name);
      if (words.empty())
        return MakeError(ErrorCode::kInvalidInput, label + ": gpu_models: an empty model name");
      p.models_.push_back({{words.begin(), words.end()}, *v, "pricing file " + label});
    }
  }
  if (const auto n = root["nodes"]) {
    if (!n.IsMap())
      return MakeError(
          ErrorCode::kInvalidInput,
          label + ": nodes must map an instance type to {price_per_hour, gpus, split}");
    for (const auto& kv : n) {
      const std::string type = kv.first.as<std::string>();
      const std::string where = label + ": nodes." + type;
      const auto e = kv.second;
      if (!e.IsMap() || !e["price_per_hour"] || !e["gpus"] || !e["split"])
        return MakeError(
            ErrorCode::kInvalidInput,
            where + ": needs price_per_hour, gpus and split (a preset or a GPU share in (0, 1])");
      auto price = Price(e["price_per_hour"], where + ".price_per_hour");
      if (!price) return tl::unexpected(price.error());
      int gpus = 0;
      try {
        gpus = e["gpus"].as<int>();
      } catch (const YAML::Exception&) {
      }
      if (gpus <= 0)
        return MakeError(ErrorCode::kInvalidInput, where + ".gpus: a whole number of GPUs >= 1");
      const std::string split = e["split"].as<std::string>("");
      std::optional<double> share = SplitPreset(split);
      if (!share) {
        char* end = nullptr;
        const double r = std::strtod(split.c_str(), &end);
        if (end && *end == '\0' && !split.empty()) share = r;
        if (!share)
          return MakeError(ErrorCode::kInvalidInput,
                           where + ".split: '" + split +
                               "' is neither a preset (aws-scad, datadog, grafana) nor a number");
        if (!(*share > 0 && *share <= 1))
          return MakeError(
              ErrorCode::kInvalidInput,
              where + ".split: the GPU share of the node price must be in (0, 1], not " + split);
      }
      p.nodes_.push_back(
          {type, *price * *share / gpus,
           "node price " + type + " × " + split + " / " + std::to_string(gpus) + " GPUs"});
    }
  }
  if (const auto t = root["instance_types"]) {
    if (!t.IsMap())
      return MakeError(ErrorCode::kInvalidInput,
                       label + ": instance_types must map a node name to its instance type");
    for (const auto& kv : t) {
      const std::string type = kv.second.as<std::string>("");
      const bool priced = std::any_of(p.nodes_.begin(), p.nodes_.end(),
                                      [&](const NodePrice& n) { return n.instance_type == type; });
      if (!priced)
        return MakeError(ErrorCode::kInvalidInput, label + ": instance_types." +
                                                       kv.first.as<std::string>() + ": '" + type +
                                                       "' has no entry under nodes");
      p.instance_types_[kv.first.as<std::string>()] = type;
    }
  }
  if (root["fallback_per_gpu_hour"]) {
    auto f = Price(root["fallback_per_gpu_hour"], label + ": fallback_per_gpu_hour");
    if (!f) return tl::unexpected(f.error());
    p.fallback_ = *f;
  }
  const bool defaults = root["defaults"] ? root["defaults"].as<bool>(true) : true;
  if (defaults)
    for (auto& d : DefaultTable()) p.models_.push_back(std::move(d));
  return p;
}

std::string Pricing::InstanceTypeOf(const std::string& node) const {
  const auto it = instance_types_.find(node);
  return it == instance_types_.end() ? "" : it->second;
}

std::optional<PriceQuote> Pricing::Quote(const std::string& model,
                                         const std::string& instance_type) const {
  const double keep = 1 - discount_;
  if (!instance_type.empty())
    for (const auto& n : nodes_)
      if (n.instance_type == instance_type)
        return PriceQuote{n.per_gpu_hour * keep, n.per_gpu_hour, n.detail, false};
  const auto words = Words(model);
  // The file's prices beat the defaults whatever their specificity ("A100" in the file wins over
  // the default "A100 80GB"); within each, the entry with the most words wins.
  for (const bool defaults : {false, true}) {
    const ModelPrice* best = nullptr;
    for (const auto& m : models_) {
      if ((m.source == kDefaultSource) != defaults) continue;
      const bool all = std::all_of(m.words.begin(), m.words.end(),
                                   [&](const std::string& w) { return words.count(w) > 0; });
      if (all && (!best || m.words.size() > best->words.size())) best = &m;
    }
    if (best)
      return PriceQuote{best->per_gpu_hour * keep, best->per_gpu_hour, best->source, defaults};
  }
  if (fallback_)
    return PriceQuote{*fallback_ * keep, *fallback_,
                      "fallback price (no price for model '" + model + "')", true};
  return std::nullopt;
}

}  // namespace gpumeter::cost
