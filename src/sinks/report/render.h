// A chargeback as text for people (table), for spreadsheets (CSV), for programs (JSON), as a
// FOCUS 1.3 cost-and-usage CSV with split-allocation columns, or as one self-contained HTML page
// (render_html.h). Pure: strings out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/rfc3339.h"
#include "core/cost/chargeback.h"
#include "sinks/report/focus.h"

namespace gpumeter::report {

struct Window {
  int64_t from_unix_s = 0, to_unix_s = 0;
};

// A group's efficiency for people: "41.2%", the range it lies in where some compute is unknown
// ("38.0-45.5%"), or "-" when nothing was held.
std::string FormatEfficiency(const cost::GroupTotals& g);
// A group's memory busy time for people: "1.250", "1.250 ± 0.300", "1.250 + 0.500 unknown".
std::string FormatMemoryBusy(const cost::GroupTotals& g);
// A group's energy for people: "12.345", or "12.345 ± 1.200" where some of it was estimated.
std::string FormatEnergy(const cost::GroupTotals& g);
// The table's note on memory busy time that is unknown or estimated ("" when neither).
std::string MemoryTrafficNote(const cost::GroupTotals& total);

std::string RenderTable(const cost::Chargeback& c, const Window& w);
std::string RenderCsv(const cost::Chargeback& c);
std::string RenderJson(const cost::Chargeback& c, const Window& w);
// One row per (unit, owner) cost row: the unit's charge (ResourceId = its UUID) allocated to a
// container or to idle, with the policy in AllocatedMethodId/Details. Per ResourceId the
// BilledCost of the rows adds up to the unit's cost.
std::string RenderFocus(const cost::Chargeback& c, const Window& w, const cost::Labels& labels);

// RenderFocus's row, for FOCUS out of amounts allocated elsewhere (a bill, render_bill.h): the
// (unit, owner) row of cost row `r` of unit `u`, carrying the amounts given; focus.h writes it.
struct FocusAmounts {
  double billed = 0, effective = 0, list = 0;  // ListCost and ContractedCost carry `list`
};
FocusRecord FocusRecordOf(const cost::Chargeback& c, const Window& w, const cost::Labels& labels,
                          const cost::UnitCost& u, const cost::CostRow& r, const FocusAmounts& a);

}  // namespace gpumeter::report
