// What the agent knows about its node after a sampling pass, published as one immutable value:
// the GPU sample, who owns each GPU process and how that was found, each unit's sharing mode and
// holders with the evidence, the last interval's ledgers and the running totals since the agent
// started. Every output (metrics, JSON API, the demo table) reads only this, so a scrape never
// touches NVML, the kubelet, the API server or /proc. Units: seconds, bytes, joules.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/allocation/sharing.h"
#include "core/attribution/attribute.h"
#include "core/cost/pricing.h"
#include "core/guard/findings.h"
#include "domain/node_snapshot.h"
#include "domain/sample.h"
#include "domain/source_status.h"
#include "domain/unit_kind.h"
#include "sources/node/node_facts.h"
#include "sources/proc/owner_resolver.h"

namespace gpumeter::node {

// A GPU, or a MIG instance of one, as a unit of allocation and accounting.
struct UnitInfo {
  std::string uuid;      // GPU-… or MIG-…
  std::string gpu_uuid;  // the physical GPU (itself for a whole GPU)
  uint32_t gpu_index = 0;
  std::string model;
  domain::UnitKind kind = domain::UnitKind::kGpu;
  std::string mig_profile;  // its label: domain::MigProfileLabel(kind, the instance's profile)
  uint32_t mig_gpu_instance = 0;
  domain::SharingMode mode = domain::SharingMode::kExclusive;
  uint32_t replicas = 1;
  std::string evidence;                     // what decided the mode ("no allocation" when none)
  std::vector<domain::UnitHolder> holders;  // containers allocated to it, with their share
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> gpu_memory_total_bytes;  // of the physical GPU (its memory in GPUs)
  // The unit's share of its physical GPU, what its cost is priced at: 1 for a whole GPU; a MIG
  // instance's compute slices over the GPU's (1 when the slices are unknown); the free slices'
  // share for the "unpartitioned" unit.
  double gpu_fraction = 1;
};

// Running totals of one owner on one unit since the agent started (monotonic: counters).
struct OwnerTotals {
  double memory_byte_seconds = 0;
  double compute_seconds = 0;
  double energy_joules = 0;
  double requested_share_seconds = 0;
  double compute_unknown_seconds = 0;  // attribution::Row::compute_unknown_seconds, summed
  double compute_bound_seconds = 0;    // attribution::Row::compute_bound_seconds, summed
  double energy_bound_joules = 0;      // attribution::Row::energy_bound_joules, summed
  // What the owner's use cost under NodeState::cost_policy, in NodeState::currency, summed over
  // the intervals in which its unit had a price (core/cost/interval_cost.h); idle_cost is the
  // part that is idle placed on it (all of an `idle` row's). Unknown, not 0, until `priced`.
  double cost = 0, idle_cost = 0;
  bool priced = false;
  double last_memory_bytes = 0;         // mean over the last interval in which it had a row
  double last_compute_ratio = 0;        // compute share of the unit over that interval, [0, 1]
  bool last_compute_unknown = false;    // some of its compute in that interval was unknown
  double last_compute_bound_ratio = 0;  // the ± of last_compute_ratio (0: measured)
  uint64_t last_interval = 0;           // NodeState::intervals when it last had a row
  std::string memory_rule, compute_rule, energy_rule;  // of its last row
  // attribution::Row::memory_busy_seconds and its unknown and bound, summed.
  double memory_busy_seconds = 0, memory_busy_unknown_seconds = 0, memory_busy_bound_seconds = 0;
  // Its memory busy time's share of the unit over the last interval in which it had a row, [0, 1],
  // its ±, and whether some of it was unknown then.
  double last_memory_busy_ratio = 0;
  double last_memory_busy_bound_ratio = 0;
  bool last_memory_busy_unknown = false;
};

struct UnitTotals {
  double seconds = 0;
  double memory_capacity_byte_seconds = 0;
  double energy_joules = 0;              // over the intervals whose energy was known
  double energy_unknown_seconds = 0;     // time in which the unit's energy was unknown
  double samples_uncovered_seconds = 0;  // time whose per-process samples the driver lost
  uint64_t last_interval = 0;            // NodeState::intervals when it last had a ledger
  // Σ price × GPU share × hours over the intervals in which the unit had a price (= Σ its
  // owners' cost), and the time in which it had none; the latest price of a whole GPU.
  double cost = 0;
  double unpriced_seconds = 0;
  std::optional<cost::PriceQuote> price;
  // Seconds by the signal that measured the unit's memory busy time (UnitLedger::memory_signal).
  std::map<domain::MemorySignal, double> memory_signal_seconds = {};
  domain::MemorySignal memory_signal = domain::MemorySignal::kNone;  // of its last ledger
};

// A rightsizing recommendation as the agent exports it (docs/rightsizing.md), computed from its
// usage store off the sampling thread; see cli/rightsize_runner.h.
struct RightsizingRow {
  std::string ns, workload, container;
  std::string action;  // reclaim, mig, share, keep
  std::string current, recommended;
  double current_gpu = 0, recommended_gpu = 0;  // per replica
  uint32_t replicas = 1;
  std::optional<double> monthly_savings;  // unknown: no price for the model
  std::string currency;
  // rightsize::Recommendation's codes: the label values (a bounded vocabulary, not prose).
  std::string current_code, recommended_code;
};

// The usage store's writer as the agent exports it (gpumeter_store_*): intervals that could not
// be written are kept in memory, oldest first, and written when the store accepts again.
struct StoreHealth {
  uint64_t written = 0;               // intervals written
  uint64_t write_failures = 0;        // write attempts that failed
  uint64_t dropped = 0;               // intervals given up: pending past the bound, or at a stop
  uint64_t lost_at_stop = 0;          // of those, the ones a stop could not write in time
  uint64_t clock_steps = 0;           // wall-clock steps of more than a day between intervals
  size_t pending = 0;                 // intervals waiting to be written
  double oldest_pending_seconds = 0;  // age of the oldest pending one (0: none)
  std::string last_error;             // of the latest failure
  // The store as a source (name "store"): open, its last write good; in NodeState::sources too.
  domain::SourceStatus status;
};

struct NodeState {
  std::string node;
  // The policy the agent prices usage under ("memory/idle=share", cost::Policy::Name) and the
  // pricing's currency; both empty when the agent prices nothing.
  std::string cost_policy, currency;
  // The node's Node object as last read (instance type, region, GFD labels); null: not read.
  std::shared_ptr<const k8s::NodeFacts> node_facts;
  uint64_t passes = 0;     // sampling passes seen
  uint64_t intervals = 0;  // accounted intervals (passes after the first)
  // The latest sampling pass (also when it failed) and the latest good one.
  std::shared_ptr<const gpu::SampleResult> latest, last_good;
  // What the node looked like at the latest pass, as accounted (null before the first pass).
  std::shared_ptr<const domain::NodeSnapshot> snapshot;
  std::map<uint32_t, domain::ProcessOwner> owners;  // every PID of last_good
  std::vector<UnitInfo> units;                      // every unit of last_good, by GPU index
  std::vector<std::string> allocation_problems;     // device IDs that could not be placed
  std::vector<attribution::UnitLedger> last_interval;
  std::map<std::pair<std::string, domain::Owner>, OwnerTotals> totals;  // (unit UUID, owner)
  std::map<std::string, UnitTotals> unit_totals;                        // by unit UUID
  std::vector<domain::SourceStatus>
      sources;  // kubelet, pods, proc (NVML's is in the sampler's health)
  // Labels of the pods of the containers in `totals` (kept after a pod is deleted, while its
  // totals are), by (namespace, pod).
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> pod_labels;
  // Open guardrail findings (docs/guardrails.md), highest severity first, and the number opened
  // since the agent started per (kind, severity).
  std::vector<guard::Finding> findings;
  // XID events per GPU UUID and XID since the agent started (NVML events), and the watcher's
  // state as of the latest good pass (unset: not watching).
  struct XidTotal {
    uint64_t count = 0;
    double last_seen = 0;  // Unix seconds
  };
  std::map<std::string, std::map<uint64_t, XidTotal>> xids;
  std::optional<bool> xid_watch_ok;
  std::string xid_watch_error;
  std::map<std::pair<guard::Kind, guard::Severity>, uint64_t> findings_opened;
  // The latest rightsizing of this node's workloads; null until one was computed (or without a
  // store).
  std::shared_ptr<const std::vector<RightsizingRow>> rightsizing;
  // The usage store's writer; unset without a store.
  std::optional<StoreHealth> store;

  const UnitInfo* FindUnit(const std::string& uuid) const {
    for (const auto& u : units)
      if (u.uuid == uuid) return &u;
    return nullptr;
  }
};

}  // namespace gpumeter::node
