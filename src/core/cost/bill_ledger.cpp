#include "core/cost/bill_ledger.h"

namespace gpumeter::cost {

void BillAmounts::Add(const domain::Charge& c) {
  effective += c.effective_cost;
  billed += c.billed_cost;
  if (c.list_cost)
    list += *c.list_cost;
  else
    ++lines_without_list;
  ++lines;
}

void BillAmounts::Add(const BillAmounts& a) {
  effective += a.effective;
  billed += a.billed;
  list += a.list;
  lines += a.lines;
  lines_without_list += a.lines_without_list;
}

BillLedger::BillLedger(NodeMatcher matcher, int64_t from_unix_s, int64_t to_unix_s)
    : matcher_(std::move(matcher)), from_(from_unix_s), to_(to_unix_s) {}

void BillLedger::Add(const domain::Charge& c) {
  if (currency.empty()) currency = c.currency;
  all.Add(c);
  if (c.period_start < from_ || c.period_start >= to_) {
    outside_window.Add(c);
    return;
  }
  by_category[c.category].Add(c);
  // Purchases, taxes, credits and adjustments stay in their category even when they name a VM:
  // the spec keeps them apart, and so does the report.
  if (c.category != "Usage") return;
  if (c.commitment_status == "Unused") {
    unused_commitments.Add(c);
    return;
  }
  auto matched = matcher_.Match(c.resource_id);
  if (!matched.empty()) {
    auto& nc = charges_[{matched, c.period_start, c.period_end}];
    if (nc.amounts.lines == 0) {
      nc.nodes = std::move(matched);
      nc.start = c.period_start;
      nc.end = c.period_end;
      nc.resource_id = c.resource_id;
    }
    nc.amounts.Add(c);
    nodes.Add(c);
    return;
  }
  if (NodeMatcher::LooksLikeVm(c.resource_id)) {
    unmatched_vms[c.resource_id].Add(c);
    return;
  }
  other_usage.Add(c);
}

std::vector<const NodeCharge*> BillLedger::NodeCharges() const {
  std::vector<const NodeCharge*> out;
  out.reserve(charges_.size());
  for (const auto& [k, c] : charges_) out.push_back(&c);
  return out;
}

}  // namespace gpumeter::cost
