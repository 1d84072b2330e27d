// A report's cost from the cloud bill instead of a price: what each node was billed for each
// charge period (BillLedger), split into its GPU part and the rest, spread over the node's GPUs
// and the usage the agent recorded in that period, then down to owners with the policy and the
// idle rule of any report (allocate.h) — period by period, since a bill's cost varies by hour.
//
// For one node and period [s, e) billed C: the GPU part P = C × gpu_share, the rest is non-GPU.
// The node's GPU time is gpus × (e − s); each unit the agent recorded in the period gets
// P × its fraction × its seconds / that GPU time, and what no unit covers is "no agent" (hours
// the node was billed and the agent did not see). A scale set's line (Azure) goes to its nodes
// by the GPU time the agent saw on each. The ledger clips each charge to the report's window,
// so the hours walked are the window's, however long a line's period. Conservation, to rounding:
//   Σ node charges = containers + idle + system + unattributed + no_agent + non_gpu.
// Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/attribution/usage_record.h"
#include "core/cost/bill_ledger.h"
#include "core/cost/chargeback.h"

namespace gpumeter::cost {

// How a node's bill is split: the GPU share of it, and its GPU count when known (else the GPUs
// the agent recorded on it in the period are taken as all it has).
struct NodeCostSplit {
  double gpu_share = 1;
  std::optional<int> gpus;
  std::string source;  // "pricing file nodes.p5.48xlarge", "--bill-split aws-scad", …
};

struct BillReconciliation {
  std::string currency;
  BillAmounts node_lines;  // the matched nodes' Usage lines in the window
  // Where their EffectiveCost went; Sum() = node_lines.effective to rounding.
  double containers = 0, idle = 0, system = 0, unattributed = 0, no_agent = 0, non_gpu = 0;
  double Sum() const { return containers + idle + system + unattributed + no_agent + non_gpu; }

  struct Node {
    std::string name;
    int64_t periods = 0;         // charge periods billed
    int64_t periods_unseen = 0;  // … in which the agent recorded nothing on it
    double effective = 0, no_agent = 0, non_gpu = 0;
    int64_t hours_seen_unbilled = 0;  // hours in the window the agent saw it and no line billed it
    NodeCostSplit split;
  };
  std::vector<Node> nodes;  // the billed nodes, by name
  // Nodes the agent recorded in the window that no line billed, with their GPU-hours.
  std::vector<std::pair<std::string, double>> nodes_without_lines;
};

struct BilledChargeback {
  Chargeback chargeback;
  BillReconciliation reconciliation;
};

// Which amount of the lines is split: EffectiveCost (the report's), BilledCost (the invoice's
// view) or ListCost (lines without one count 0), for FOCUS rows that carry all three. The split
// is the same; only the amounts differ.
enum class BillAmount { kEffective, kBilled, kList };

// `hourly`: usage per hour start (Unix s), covering the charges' periods (the window's hours).
// `splits`: one per node of ledger.matcher(). The reconciliation's node_lines are the lines'
// amounts whatever `which`; its other sums are of `which`.
BilledChargeback AllocateBill(const BillLedger& ledger,
                              const std::map<int64_t, std::vector<attribution::UnitRecord>>& hourly,
                              const std::vector<NodeCostSplit>& splits, const Labels& labels,
                              const Policy& policy, const std::vector<std::string>& dimensions,
                              BillAmount which = BillAmount::kEffective);

}  // namespace gpumeter::cost
