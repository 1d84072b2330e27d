// The frame model of `gpumeter top` (docs/top.md): what one refresh shows, as plain values, and
// the pure functions that turn it into rows: units with their owners (which add up to the unit),
// rows per container, pod, namespace or label, sorted and filtered, and the findings newest
// first. Sources (agent_source.h, prometheus_frame.h) fill FrameData; renderers (layout.h) draw
// the rows. Pure: no clock, no I/O. Units: bytes, watts, ratios in [0, 1], GPU-equivalents
// (a unit's ratio × its fraction of the GPU), cost per hour in the pricing's currency.
// std::nullopt is unknown and shown as `?`, never as 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/attribution/usage_record.h"
#include "core/cost/allocate.h"
#include "core/cost/chargeback.h"
#include "core/cost/pricing.h"

namespace gpumeter::top {

using Amount = std::optional<double>;

// One owner of a unit over the frame's span: a container, or idle, system, unattributed.
struct OwnerNow {
  domain::Owner owner;
  Amount held_share;     // the share of the unit it holds (its request), [0, 1]
  Amount compute_ratio;  // its share of the unit's time, [0, 1]
  Amount memory_bytes;   // mean bytes
  Amount power_watts;
  Amount cost_per_hour;  // PriceFrame; unknown without a price or without its usage
  // The ± of compute_ratio where it is an estimated split (the truth lies within); 0: measured.
  Amount compute_bound_ratio = 0.0;
  // Some of its compute over the span was unknown: compute_ratio is a lower bound.
  bool compute_unknown = false;
  // Memory busy time: its share of the unit's memory busy time (or bandwidth, by the unit's
  // signal), [0, 1], with its ± and whether some was unknown; unknown from sources before it.
  Amount memory_busy_ratio = std::nullopt;
  Amount memory_busy_bound_ratio = 0.0;
  bool memory_busy_unknown = false;
  // The ± of power_watts where its energy is an estimated split (a DCGM-fed unit inside a
  // collection); 0: measured, or a source before energy bounds.
  Amount power_bound_watts = 0.0;
  bool operator==(const OwnerNow&) const = default;
};

struct UnitNow {
  attribution::UnitKey key;  // node, uuid, gpu_uuid, model, mig_profile, mode, fraction of GPU
  std::string label;         // short name for people: "GPU2", "GPU0 3g.71gb"
  Amount busy_ratio, memory_used_bytes, memory_total_bytes, power_watts;
  Amount cost_per_hour;  // price × fraction; unknown: no price for the model
  std::vector<OwnerNow> owners;
  bool operator==(const UnitNow&) const = default;
};

struct FindingNow {
  std::string severity, kind, node, who, unit, evidence;
  double first_seen_unix_s = 0;
  bool operator==(const FindingNow&) const = default;
};

struct FrameData {
  std::string source;       // e.g. "agent http://127.0.0.1:9402"
  int64_t at_unix_s = 0;    // the moment the data describes
  double span_seconds = 0;  // what the rates are means over (the agent's interval, --window)
  std::string currency;     // of cost_per_hour; "" before PriceFrame
  std::vector<UnitNow> units;
  std::optional<std::vector<FindingNow>> findings;  // nullopt: the source has none
  cost::Labels labels;                              // pods' labels, for --by label:KEY
  bool operator==(const FrameData&) const = default;
};

// Sets every unit's and owner's cost per hour: the unit's price split by `policy`
// (cost::BuildChargeback over one hour of the frame's rates, the same split as `report`).
void PriceFrame(FrameData& frame, const cost::Pricing& pricing, const cost::Policy& policy);

enum class View { kUnits, kPods, kFindings };
enum class SortKey { kCompute, kMemory, kCost, kWaste };
const char* ToString(View view);
const char* ToString(SortKey key);
SortKey NextSortKey(SortKey key);
Expected<View> ParseView(const std::string& text);
Expected<SortKey> ParseSortKey(const std::string& text);

// A row of the pods view: one group (container, pod, namespace or label value) over all units.
struct GroupRow {
  std::vector<std::string> key;  // the group's values, e.g. {ns, pod, container}
  Amount held_gpus;              // Σ held share × fraction
  Amount compute_gpus;           // Σ compute ratio × fraction
  Amount compute_bound_gpus;     // Σ its members' ± × fraction (a sum's error ≤ Σ bounds)
  bool compute_unknown = false;  // some member's compute unknown: compute_gpus a lower bound
  // Memory busy time in GPU-equivalents, as compute.
  Amount memory_busy_gpus, memory_busy_bound_gpus;
  bool memory_busy_unknown = false;
  Amount memory_bytes, power_watts, cost_per_hour;
  Amount power_bound_watts;        // Σ its members' ±, as compute's
  Amount waste_gpus;               // held − compute: what is held and not used
  std::vector<std::string> units;  // labels of the units it touches
};

// What a view shows: `ns` (--namespace) one namespace exactly; `text` (typed after `/` in the
// interactive view) a substring of a container's namespace, pod or container name; both empty:
// everything. A finding about a device (no container) always shows.
struct Filter {
  std::string ns, text;
  bool Matches(const domain::Owner& owner) const;  // a container (other kinds never match)
  bool MatchesWho(const std::string& who) const;   // a finding's "ns/pod/container", or a device
  bool Empty() const { return ns.empty() && text.empty(); }
};

// The key of a container's row under `by` ("container": {ns, pod, container}; "pod": {ns, pod};
// "namespace": {ns}; "label:KEY": {value}, "(none)" without it, "?" where labels are unknown).
std::vector<std::string> GroupKeyOf(const FrameData& frame, const domain::Owner& owner,
                                    const std::string& by);
// "container" | "pod" | "namespace" | "label:KEY"; errors name the text.
Expected<void> CheckGroupBy(const std::string& by);
// Containers only, grouped by `by`, the filter applied, sorted by `sort` (highest first; unknown
// last; ties by key).
std::vector<GroupRow> GroupRows(const FrameData& frame, const std::string& by, SortKey sort,
                                const Filter& filter);

// Units with a container the filter matches (all with an empty filter), in the frame's order.
std::vector<const UnitNow*> FilteredUnits(const FrameData& frame, const Filter& filter);

// The unit's owners summed: what the view prints under them, to show they add up.
struct UnitSums {
  Amount compute_ratio, memory_bytes, power_watts, cost_per_hour, held_share;
  Amount memory_busy_ratio = 0.0;
};
UnitSums SumOwners(const UnitNow& unit);

// Findings the filter matches (device findings always): by severity (critical, warning, info),
// then newest first.
std::vector<FindingNow> SortedFindings(const FrameData& frame, const Filter& filter);

// Unknown-propagating sum: unknown when either is.
Amount Plus(Amount a, Amount b);

}  // namespace gpumeter::top
