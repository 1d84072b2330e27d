#include "core/cost/bill_ledger.h"

#include <algorithm>

#include "common/rfc3339.h"

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

void BillLedger::Refuse(const domain::Charge& c) {
  refused.Add(c);
  if (refused_lines.size() >= kRefusedDescribed) return;
  const int64_t span = c.period_end - c.period_start;
  refused_lines.push_back(
      c.file + ":" + std::to_string(c.line) + ": column ChargePeriodEnd: " + Rfc3339(c.period_end) +
      (span <= 0 ? " is not after ChargePeriodStart " + Rfc3339(c.period_start)
                 : " is " + std::to_string(span / 86400) + " days after ChargePeriodStart " +
                       Rfc3339(c.period_start) + ", longer than any commitment's term (" +
                       std::to_string(kMaxChargePeriodS / 86400) + " days)"));
}

void BillLedger::Add(const domain::Charge& c) {
  if (currency.empty()) currency = c.currency;
  all.Add(c);
  const int64_t span = c.period_end - c.period_start;
  if (span <= 0 || span > kMaxChargePeriodS) return Refuse(c);
  const int64_t start = std::max(c.period_start, from_), end = std::min(c.period_end, to_);
  if (end <= start) {
    outside_window.Add(c);
    return;
  }
  if (start == c.period_start && end == c.period_end) return AddInWindow(c);
  // The hours in the window take their share of the line, as if its cost were even over its
  // period (FOCUS says nothing finer); the rest is outside, as amounts only (the line counts once,
  // in the window). Multiplied before dividing, a share of whole hours stays exact.
  ++lines_crossing;
  const double in = static_cast<double>(end - start), of = static_cast<double>(span);
  domain::Charge part = c;
  part.period_start = start;
  part.period_end = end;
  part.effective_cost = c.effective_cost * in / of;
  part.billed_cost = c.billed_cost * in / of;
  if (c.list_cost) part.list_cost = *c.list_cost * in / of;
  BillAmounts rest;
  rest.effective = c.effective_cost - part.effective_cost;
  rest.billed = c.billed_cost - part.billed_cost;
  rest.list = c.list_cost ? *c.list_cost - *part.list_cost : 0;
  outside_window.Add(rest);
  AddInWindow(part);
}

void BillLedger::AddInWindow(const domain::Charge& c) {
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
