// `gpumeter report --bill FILE…`: the chargeback priced from the cloud bill (FOCUS exports)
// instead of a price table. Reads the store's nodes (their provider IDs) to match the bill's
// lines, streams every file into a ledger for the report's window, reads the store's usage hour
// by hour over the billed periods and allocates each node-period (core/cost/bill_allocate.h),
// then renders the chargeback with its reconciliation (table or JSON).
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "core/cost/allocate.h"
#include "core/cost/chargeback.h"
#include "core/cost/pricing.h"
#include "sinks/report/render.h"
#include "store/store.h"

namespace gpumeter::app {

struct BillReportRequest {
  std::vector<std::string> files;  // FOCUS CSV or CSV.gz
  // The GPU share of a node's cost where the pricing file has no node price for its instance
  // type: a preset (aws-scad, datadog, grafana) or a share in (0, 1].
  std::string split = "aws-scad";
  std::string format = "table";  // table | json | csv (the groups) | focus
};

Expected<std::string> RenderBillReport(const BillReportRequest& bill, const store::Store& store,
                                       const cost::Pricing& pricing, const cost::Policy& policy,
                                       const std::vector<std::string>& dims,
                                       const report::Window& window);

}  // namespace gpumeter::app
