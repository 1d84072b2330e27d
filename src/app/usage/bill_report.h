// `gpumeter report --bill FILE…`: the chargeback priced from the cloud bill (FOCUS exports)
// instead of a price table. Reads the nodes' identities (provider IDs) through the usage reader
// (a store or Prometheus) to match the bill's lines, streams every file into a ledger for the
// report's window, reads the usage hour by hour over the billed periods and allocates each
// node-period (core/cost/bill_allocate.h), then renders the chargeback with its reconciliation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/cost/allocate.h"
#include "core/cost/chargeback.h"
#include "core/cost/pricing.h"
#include "core/usage/usage_reader.h"
#include "sinks/report/render.h"

namespace gpumeter::app {

struct BillReportRequest {
  std::vector<std::string> files;  // FOCUS CSV or CSV.gz
  // The GPU share of a node's cost where the pricing file has no node price for its instance
  // type: a preset (aws-scad, datadog, grafana) or a share in (0, 1].
  std::string split = "aws-scad";
  std::string format = "table";  // table | json | csv (the groups) | focus | html
  // Unmatched VMs listed, the costliest first (the rest as a count and a sum): nullopt, the
  // format's default (20 in a table or a page, 100 in JSON); SIZE_MAX, all (--bill-unmatched).
  std::optional<size_t> unmatched;
};

// The bill's report over `window`: the nodes and their usage per hour read through `reader`
// (borrowed for the call).
Expected<std::string> RenderBillReport(const BillReportRequest& bill,
                                       const usage::UsageReader& reader,
                                       const cost::Pricing& pricing, const cost::Policy& policy,
                                       const std::vector<std::string>& dims,
                                       const report::Window& window);

}  // namespace gpumeter::app
