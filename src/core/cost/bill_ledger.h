// A cloud bill (FOCUS lines, domain::Charge) sorted for a report over [from, to): the lines of
// the nodes the agent ran on, summed per node and charge period, and everything else kept apart
// in the buckets the FOCUS spec gives it — never dropped:
//   refused lines (a charge period longer than kMaxChargePeriodS: corrupt, not a charge);
//   outside the window; Purchase, Tax, Credit and Adjustment lines (by category); Usage lines of
//   unused commitments (CommitmentDiscountStatus Unused: the ResourceId is the commitment, not a
//   VM); Usage lines of VMs that match no node (listed by ResourceId); the other Usage lines
//   (other services, disks, networks).
// A line's amounts count in the window by the part of its charge period inside it, spread evenly
// over the period: a line that crosses an edge of the window (a daily line, a commitment's term)
// puts the rest in "outside the window", so consecutive windows add up to the bill, and a
// node's charge is clipped to the window (the hours allocation walks never reach past it). A line
// counts as one line in the bucket of its part in the window; its part outside adds amounts only.
// So: all = refused + outside_window + Σ by_category, and by_category["Usage"] = nodes +
// unused_commitments + Σ unmatched_vms + other_usage, each as amounts (EffectiveCost, BilledCost,
// ListCost) and as lines. Memory grows with the nodes × periods and the distinct unmatched VMs,
// not with the file. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/cost/bill_match.h"
#include "domain/charge.h"

namespace gpumeter::cost {

// The longest charge period taken: five calendar years (1827 days, as many as any five years
// hold). Commitments are sold for one or three years, a few for five, and a line of a
// commitment's one-time fee may span its term. A longer period (a ChargePeriodEnd in 9999) is a
// corrupt or hostile line: its cost is refused, named and counted, never split over hours it
// cannot have.
inline constexpr int64_t kMaxChargePeriodS = int64_t{1827} * 86400;
// Refused lines described (file:line: why); all of them are counted and summed.
inline constexpr size_t kRefusedDescribed = 20;

struct BillAmounts {
  double effective = 0, billed = 0;
  double list = 0;  // of the lines that had one
  int64_t lines = 0, lines_without_list = 0;
  void Add(const domain::Charge& c);
  void Add(const BillAmounts& a);
};

// What one node (or, for a scale set's line, a set of nodes) was billed for one charge period.
struct NodeCharge {
  std::vector<size_t> nodes;   // indexes into NodeMatcher::nodes()
  int64_t start = 0, end = 0;  // the charge period within the window, Unix s
  std::string resource_id;     // the first line's, for messages
  BillAmounts amounts;
};

class BillLedger {
 public:
  BillLedger(NodeMatcher matcher, int64_t from_unix_s, int64_t to_unix_s);

  void Add(const domain::Charge& c);

  const NodeMatcher& matcher() const { return matcher_; }
  int64_t from() const { return from_; }
  int64_t to() const { return to_; }
  // The node charges by (nodes, period start, period end); valid while the ledger lives and is
  // not added to.
  std::vector<const NodeCharge*> NodeCharges() const;

  std::string currency;  // of the first line
  BillAmounts all, refused, outside_window, nodes, unused_commitments, other_usage;
  std::vector<std::string> refused_lines;  // the first kRefusedDescribed, "file:line: column …"
  int64_t lines_crossing = 0;              // lines split at an edge of the window
  std::map<std::string, BillAmounts> by_category;    // in the window
  std::map<std::string, BillAmounts> unmatched_vms;  // by ResourceId, in the window

 private:
  NodeMatcher matcher_;
  int64_t from_, to_;
  std::map<std::tuple<std::vector<size_t>, int64_t, int64_t>, NodeCharge> charges_;

  void Refuse(const domain::Charge& c);
  void AddInWindow(const domain::Charge& c);
};

}  // namespace gpumeter::cost
