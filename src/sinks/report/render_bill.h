// A report priced from the cloud bill (core/cost/bill_allocate.h): the chargeback as any report
// shows it, then the reconciliation — how the bill's lines add up (outside the window, each
// charge category, the GPU nodes' lines, unused commitments, VMs matching no node, other usage),
// where the GPU nodes' cost went (containers + idle + system + unattributed + hours with no agent
// + the non-GPU part = their lines' total), where the bill and the usage disagree, the lines
// refused (charge periods no bill has) and the VMs matching no node (the costliest listed, the
// rest summed). Text from the bill or the store is escaped for a terminal in the table
// (TerminalCell), for HTML in the page. Pure: strings out. Amounts are in the bill's currency
// (EffectiveCost unless named).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/cost/bill_allocate.h"
#include "sinks/report/render.h"

namespace gpumeter::report {

struct BillSource {
  std::vector<std::string> files;
  std::string split;  // the default GPU share given (--bill-split), for the reader
  // Unmatched VMs listed, the costliest first; the rest are one line of their count and sum
  // (an account's millions of VMs would be gigabytes of JSON). SIZE_MAX: all of them.
  size_t vms_listed = 20;
};

std::string RenderBillTable(const cost::BilledChargeback& b, const cost::BillLedger& ledger,
                            const BillSource& source, const Window& w);
std::string RenderBillJson(const cost::BilledChargeback& b, const cost::BillLedger& ledger,
                           const BillSource& source, const Window& w);

// One HTML page: the chargeback (render_html.h, no chart over time) and the reconciliation as a
// section after it.
std::string RenderBillHtml(const cost::BilledChargeback& b, const cost::BillLedger& ledger,
                           const BillSource& source, const Window& w);

// The same split of the GPU nodes' lines as FOCUS rows (RenderFocus's columns), each carrying
// its share of the lines' EffectiveCost, BilledCost and ListCost (the three allocations of one
// split, cost::BillAmount): a row per (unit, owner), and per node a row for its non-GPU part
// (AllocatedResourceId __non_gpu__) and one for GPU hours no agent saw (__no_agent__). So each
// column of the rows sums to the same column of the lines they split.
std::string RenderBillFocus(const cost::BilledChargeback& effective,
                            const cost::BilledChargeback& billed,
                            const cost::BilledChargeback& list, const Window& w,
                            const cost::Labels& labels);

}  // namespace gpumeter::report
