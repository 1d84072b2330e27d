#include "core/cost/pricing.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "common/yaml/reader.h"
#include "core/cost/instance_prices.h"

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

// The largest price per hour taken: ten times the dearest node there is (a p5.48xlarge is about
// $100 an hour); more is a typo (a monthly price, a missing decimal point) that would print
// 300-digit costs. docs/pricing.md lists each number's range.
constexpr double kMaxHourlyPrice = 1e4;

// A number as pricing files have always been read (yaml-cpp's reading of a double).
double Number(const yaml::Field& f) {
  const auto v = f.As<double>();
  if (!v) f.Fail("not a number");
  return *v;
}

// A price per hour, in [0, kMaxHourlyPrice].
double Price(const yaml::Field& f) {
  const double v = Number(f);
  if (!std::isfinite(v) || v < 0 || v > kMaxHourlyPrice)
    f.Fail("a price per hour must be a number in [0, 10000]");
  return v;
}

}  // namespace

Expected<double> ParseSplit(std::string_view text) {
  if (const auto preset = SplitPreset(text)) return *preset;
  const std::string s(text);
  char* end = nullptr;
  const double r = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end != '\0')
    return MakeError(ErrorCode::kInvalidInput,
                     "'" + s + "' is neither a preset (aws-scad, datadog, grafana) nor a number");
  if (!(r > 0 && r <= 1))
    return MakeError(ErrorCode::kInvalidInput,
                     "the GPU share of the node price must be in (0, 1], not " + s);
  return r;
}

std::optional<Pricing::NodeSplit> Pricing::NodeSplitOf(const std::string& instance_type) const {
  for (const auto& n : nodes_)
    if (n.instance_type == instance_type) return NodeSplit{n.share, n.gpus};
  return std::nullopt;
}

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

// The steps of reading a pricing file, one per top-level key; each fails with a yaml::ReadError.
struct Pricing::Reader {
  static Pricing Read(const yaml::Field& root) {
    if (!root.IsMap()) root.Fail("expected a mapping (currency, gpu_models, nodes, …)");
    root.ExpectMap({"currency", "discount", "defaults", "gpu_models", "nodes", "instance_types",
                    "fallback_per_gpu_hour"});
    Pricing p;
    if (const auto c = root.Find("currency")) p.currency_ = Currency(*c);
    if (const auto d = root.Find("discount")) p.discount_ = Discount(*d);
    if (const auto m = root.Find("gpu_models")) p.models_ = Models(*m);
    if (const auto n = root.Find("nodes")) p.nodes_ = Nodes(*n);
    if (const auto t = root.Find("instance_types")) p.instance_types_ = InstanceTypes(*t, p.nodes_);
    if (const auto f = root.Find("fallback_per_gpu_hour")) p.fallback_ = Price(*f);
    // Anything but a YAML boolean keeps the defaults, as it always has.
    const auto d = root.Find("defaults");
    p.defaults_ = !d || d->As<bool>().value_or(true);
    if (p.defaults_)
      for (auto& m : DefaultTable()) p.models_.push_back(std::move(m));
    return p;
  }

  static std::string Currency(const yaml::Field& f) {
    const auto c = f.As<std::string>().value_or("");
    if (c.size() != 3 || Upper(c) != c)
      f.Fail("must be an ISO 4217 code such as USD, not '" + c + "'");
    return c;
  }

  static double Discount(const yaml::Field& f) {
    const double d = Number(f);
    if (!std::isfinite(d) || d < 0 || d >= 1)
      f.Fail("a discount is a fraction in [0, 1), e.g. 0.3 for 30 % off");
    return d;
  }

  static std::vector<ModelPrice> Models(const yaml::Field& m) {
    if (!m.IsMap()) m.Fail("must map a model name to a price per GPU-hour");
    std::vector<ModelPrice> out;
    m.ForEachEntry([&](const std::string& name, const yaml::Field& v) {
      const double price = Price(v);
      const auto words = Words(name);
      if (words.empty()) v.Fail("an empty model name");
      out.push_back({{words.begin(), words.end()}, price, "pricing file " + m.label()});
    });
    return out;
  }

  static std::vector<NodePrice> Nodes(const yaml::Field& n) {
    if (!n.IsMap()) n.Fail("must map an instance type to {price_per_hour, gpus, split}");
    std::vector<NodePrice> out;
    n.ForEachEntry(
        [&](const std::string& type, const yaml::Field& e) { out.push_back(NodeEntry(type, e)); });
    return out;
  }

  // One node price: the node's price per hour × the GPU share of it / its GPUs.
  static NodePrice NodeEntry(const std::string& type, const yaml::Field& e) {
    if (!e.IsMap() || !e.Find("price_per_hour") || !e.Find("gpus") || !e.Find("split"))
      e.Fail("needs price_per_hour, gpus and split (a preset or a GPU share in (0, 1])");
    const double price = Price(e.Get("price_per_hour"));
    const int gpus = e.Get("gpus").As<int>().value_or(0);
    if (gpus <= 0) e.Get("gpus").Fail("a whole number of GPUs >= 1");
    const yaml::Field f = e.Get("split");
    const std::string split = f.As<std::string>().value_or("");
    const auto share = ParseSplit(split);
    if (!share) f.Fail(share.error().message);
    return {type, price * *share / gpus,
            "node price " + type + " × " + split + " / " + std::to_string(gpus) + " GPUs", *share,
            gpus};
  }

  static std::map<std::string, std::string> InstanceTypes(const yaml::Field& t,
                                                          const std::vector<NodePrice>& nodes) {
    if (!t.IsMap()) t.Fail("must map a node name to its instance type");
    std::map<std::string, std::string> out;
    t.ForEachEntry([&](const std::string& node, const yaml::Field& v) {
      const std::string type = v.As<std::string>().value_or("");
      const bool priced = std::any_of(nodes.begin(), nodes.end(),
                                      [&](const NodePrice& n) { return n.instance_type == type; });
      if (!priced) v.Fail("'" + type + "' has no entry under nodes");
      out[node] = type;
    });
    return out;
  }
};

Expected<Pricing> Pricing::Parse(std::string_view text, const std::string& label) {
  return yaml::Parse<Pricing>(text, label, Reader::Read);
}

namespace {

// The bundled instance-type price of a device, when the node's instance type is in the table and
// its GPU is the one NVML names (a mislabelled node is priced by its model instead).
std::optional<PriceQuote> InstanceQuote(const std::set<std::string>& model_words,
                                        const std::string& instance_type, const std::string& region,
                                        double keep) {
  const auto row = FindInstancePrice(instance_type);
  if (!row || !std::all_of(row->model_words.begin(), row->model_words.end(),
                           [&](const std::string& w) { return model_words.count(w) > 0; }))
    return std::nullopt;
  const double per_device = row->per_hour / row->devices;
  std::string source = fmt::format(
      "gpumeter instance table: {} {} on-demand {}/h over {} GPU{} ({})", row->cloud,
      row->instance_type, row->per_hour, row->devices, row->devices == 1 ? "" : "s", row->source);
  if (!region.empty() && region != row->region) source += ", the node is in " + region;
  return PriceQuote{per_device * keep, per_device, source, true};
}

}  // namespace

std::string Pricing::InstanceTypeOf(const std::string& node) const {
  const auto it = instance_types_.find(node);
  return it == instance_types_.end() ? "" : it->second;
}

std::optional<PriceQuote> Pricing::Quote(const std::string& model, const std::string& instance_type,
                                         const std::string& region) const {
  const double keep = 1 - discount_;
  if (!instance_type.empty())
    for (const auto& n : nodes_)
      if (n.instance_type == instance_type)
        return PriceQuote{n.per_gpu_hour * keep, n.per_gpu_hour, n.detail, false};
  const auto words = Words(model);
  // The file's prices beat the defaults whatever their specificity ("A100" in the file wins over
  // the default "A100 80GB"); within each, the entry with the most words wins.
  for (const bool defaults : {false, true}) {
    if (defaults && defaults_)
      if (auto q = InstanceQuote(words, instance_type, region, keep)) return q;
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
