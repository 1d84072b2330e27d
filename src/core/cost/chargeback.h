// A chargeback over a window: every unit's cost (price × its fraction of the GPU × hours) split
// between owners by a policy (cost/allocate.h), then summed into groups (namespace, pod,
// container, label:KEY, gpu_model, node, or several). The groups add up to the total, which is
// Σ unit cost; idle that no policy placed is its own group (GroupValue::Idle). Units without a
// price are counted in hours but not in cost, and listed. Pure.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/attribution/usage_record.h"
#include "core/cost/allocate.h"
#include "core/cost/pricing.h"

namespace gpumeter::cost {

using Labels = std::map<std::pair<std::string, std::string>,
                        std::map<std::string, std::string>>;  // (ns, pod) → labels

// "namespace,label:team" → {"namespace", "label:team"}; errors name the unknown dimension.
Expected<std::vector<std::string>> ParseGroupBy(std::string_view text);

// One dimension's value in a group's key: a name (a namespace, a pod, a label's value, a node, a
// GPU model, "system", "unattributed", ...) or the idle that no policy placed, which is no one's
// name. Outputs write the idle as "__idle__" (label()); code asks idle(). Ordered by label, as the
// key's text sorts. A plain value.
class GroupValue {
 public:
  GroupValue(std::string name) : label_(std::move(name)) {}  // NOLINT: a name is a value
  GroupValue(const char* name) : label_(name) {}             // NOLINT: as above
  static GroupValue Idle() {
    GroupValue v{std::string(kIdleLabel)};
    v.idle_ = true;
    return v;
  }
  bool idle() const { return idle_; }
  // The value as every output writes it: the name, or "__idle__".
  const std::string& label() const { return label_; }
  auto operator<=>(const GroupValue&) const = default;

 private:
  static constexpr std::string_view kIdleLabel = "__idle__";
  std::string label_;
  bool idle_ = false;
};

struct GroupTotals {
  std::vector<GroupValue> key;  // one value per dimension
  double gpu_hours_held = 0;    // Σ requested share × hours × fraction (GPU-equivalents)
  double compute_hours = 0;     // Σ compute-seconds × fraction / 3600 (GPU-equivalents)
  // Per unit, Σ compute-unknown-seconds of the group's containers, at most the unit's
  // unattributed time, × fraction / 3600: time in which the group's use of a unit it ran on was
  // not measured (attribution::Row). compute_hours is a lower bound, the sum an upper one. The
  // total's is its own sum over units, not the groups' (two tenants share one unknown time).
  double compute_unknown_hours = 0;
  // Σ compute-bound-seconds × fraction / 3600 (OwnerAmounts::compute_bound_seconds): where some
  // of compute_hours was an estimated split, the truth lies within compute_hours ± this.
  double compute_bound_hours = 0;
  // Memory busy time in GPU-equivalent hours (Σ memory-busy-seconds × fraction / 3600), with its
  // unknown (as compute's: per unit at most the unit's unattributed traffic) and its ±.
  double memory_busy_hours = 0, memory_busy_unknown_hours = 0, memory_busy_bound_hours = 0;
  double memory_gib_hours = 0;
  double energy_kwh = 0;
  // Σ energy-bound-joules / 3.6e6 (OwnerAmounts::energy_bound_joules): where some of energy_kwh
  // was an estimated split, the truth lies within energy_kwh ± this. The report's total has none:
  // its energy is the units' own, measured (the busy rows' and idle's bounds cancel).
  double energy_bound_kwh = 0;
  double cost = 0, idle_cost = 0;
  // Compute used over GPU time held; nullopt when nothing was held or some compute is unknown
  // (then efficiency_bounds() says where it lies).
  std::optional<double> efficiency() const {
    return gpu_hours_held > 0 && compute_unknown_hours <= 0
               ? std::optional<double>(compute_hours / gpu_hours_held)
               : std::nullopt;
  }
  // [compute − bound, compute + bound + unknown] over GPU time held (the lower end at least 0);
  // nullopt when nothing was held. Not capped at 1: a time-sliced holder of 1/N may use up to N
  // times what it holds.
  std::optional<std::pair<double, double>> efficiency_bounds() const {
    if (gpu_hours_held <= 0) return std::nullopt;
    return std::pair{
        std::max(0.0, compute_hours - compute_bound_hours) / gpu_hours_held,
        (compute_hours + compute_bound_hours + compute_unknown_hours) / gpu_hours_held};
  }
};

struct UnitCost {
  attribution::UnitKey unit;
  double hours = 0;
  std::optional<cost::PriceQuote> price;  // nullopt: no price (cost not counted)
  double cost = 0;
  std::vector<cost::CostRow> rows;
};

struct Chargeback {
  std::vector<std::string> dimensions;
  std::string policy, currency;
  std::vector<GroupTotals> groups;  // by cost, highest first
  // Σ groups; total.cost = Σ unit cost; total.compute_unknown_hours its own (GroupTotals).
  GroupTotals total;
  std::vector<UnitCost> units;
  std::vector<std::string> unpriced_models, flagged_prices;  // for the reader
  std::vector<std::string> sources;  // which data the usage was read from, where it matters
};

Chargeback BuildChargeback(const std::vector<attribution::UnitRecord>& units, const Labels& labels,
                           const cost::Pricing& pricing, const cost::Policy& policy,
                           const std::vector<std::string>& dimensions);

// A unit's record and what it cost, however that was found (a price, a bill). `record` is
// borrowed for the call. A cost without `price` is counted in hours only, as an unpriced unit.
struct CostedRecord {
  const attribution::UnitRecord* record;
  UnitCost cost;
};
// The chargeback of records already costed, in `currency`: each unit's cost split by the policy
// and summed into groups, as BuildChargeback does once it has priced them.
Chargeback AssembleChargeback(const std::vector<CostedRecord>& units, const Labels& labels,
                              const cost::Policy& policy,
                              const std::vector<std::string>& dimensions,
                              const std::string& currency);

}  // namespace gpumeter::cost
