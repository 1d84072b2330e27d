// `gpumeter report --bill FILE…`: the chargeback priced from the cloud bill (FOCUS exports)
// instead of a price table. Reads the nodes' identities (provider IDs) from the store or from
// Prometheus to match the bill's lines, streams every file into a ledger for the report's window,
// reads the usage hour by hour over the billed periods and allocates each node-period
// (core/cost/bill_allocate.h), then renders the chargeback with its reconciliation.
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
#include "sinks/report/render.h"
#include "sources/history/prometheus_api.h"
#include "store/store.h"

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

// Where a bill's report reads the nodes' identities and their usage hour by hour.
class BillUsage {
 public:
  virtual ~BillUsage() = default;
  virtual Expected<std::vector<store::NodeRecord>> Nodes() const = 0;
  // Usage per hour start over [from, to) (both on the hour); the pods' labels into `labels`.
  virtual Expected<std::map<int64_t, std::vector<store::UnitRecord>>> Hourly(
      int64_t from_unix_s, int64_t to_unix_s, cost::Labels& labels) const = 0;
};

// From the store: its nodes table, its hourly rows and its pod labels. Borrows `store`.
class StoreBillUsage final : public BillUsage {
 public:
  explicit StoreBillUsage(const store::Store& store) : store_(store) {}
  Expected<std::vector<store::NodeRecord>> Nodes() const override;
  Expected<std::map<int64_t, std::vector<store::UnitRecord>>> Hourly(
      int64_t from_unix_s, int64_t to_unix_s, cost::Labels& labels) const override;

 private:
  const store::Store& store_;
};

// From Prometheus: gpumeter_node_info as of the window's end, and each hour's raw counters
// (history::HourlyUsageFromPrometheus). Borrows `api`.
class PrometheusBillUsage final : public BillUsage {
 public:
  PrometheusBillUsage(const history::PrometheusApi& api, const report::Window& window,
                      std::vector<std::string> label_keys)
      : api_(api), window_(window), label_keys_(std::move(label_keys)) {}
  Expected<std::vector<store::NodeRecord>> Nodes() const override;
  Expected<std::map<int64_t, std::vector<store::UnitRecord>>> Hourly(
      int64_t from_unix_s, int64_t to_unix_s, cost::Labels& labels) const override;

 private:
  const history::PrometheusApi& api_;
  report::Window window_;
  std::vector<std::string> label_keys_;
};

Expected<std::string> RenderBillReport(const BillReportRequest& bill, const BillUsage& usage,
                                       const cost::Pricing& pricing, const cost::Policy& policy,
                                       const std::vector<std::string>& dims,
                                       const report::Window& window);

}  // namespace gpumeter::app
