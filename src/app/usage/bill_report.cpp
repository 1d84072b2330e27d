#include "app/usage/bill_report.h"

#include <spdlog/spdlog.h>

#include "common/text_cell.h"
#include "core/cost/bill_allocate.h"
#include "sinks/report/render_bill.h"
#include "sources/bill/focus_reader.h"

namespace gpumeter::app {
namespace {

Error Bad(std::string message) { return Error{ErrorCode::kInvalidInput, std::move(message)}; }

// The nodes the store recorded, for matching, and how each one's cost is split.
struct Nodes {
  std::vector<cost::BillNode> nodes;
  std::vector<cost::NodeCostSplit> splits;
};

Nodes BillNodes(const std::vector<attribution::NodeRecord>& records, const cost::Pricing& pricing,
                double default_share, const std::string& split_flag) {
  Nodes out;
  for (const auto& r : records) {
    out.nodes.push_back(
        {r.name, r.provider_id, r.instance_id, r.first_seen_unix_s, r.last_seen_unix_s});
    cost::NodeCostSplit s;
    if (const auto file = pricing.NodeSplitOf(r.instance_type)) {
      s = {file->gpu_share, file->gpus, "pricing file nodes." + r.instance_type};
    } else {
      s = {default_share, r.gpu_count, "--bill-split " + split_flag};
    }
    out.splits.push_back(s);
  }
  return out;
}

// The hours a read must cover: the window's, on whole hours (the ledger clips every charge to
// the window, so no line's period reaches past it).
std::pair<int64_t, int64_t> UsageSpan(const report::Window& w) {
  const int64_t from = w.from_unix_s, to = w.to_unix_s;
  return {from - ((from % 3600) + 3600) % 3600, (to + 3599) / 3600 * 3600};
}

// How many unmatched VMs a format lists when --bill-unmatched is not given: a screenful in a
// table or a page, more in JSON (read by programs), never all of an account's millions.
size_t VmsListed(const BillReportRequest& bill) {
  if (bill.unmatched) return *bill.unmatched;
  return bill.format == "json" ? 100 : 20;
}

void WarnRefused(const cost::BillLedger& l) {
  if (l.refused.lines == 0) return;
  spdlog::warn(
      "{} bill line(s) refused, {:.2f} {} split to nobody (the report's bill section lists "
      "them): {}",
      l.refused.lines, l.refused.effective, TerminalCell(l.currency),
      TerminalCell(l.refused_lines.front()));
}

}  // namespace

Expected<std::string> RenderBillReport(const BillReportRequest& bill,
                                       const usage::UsageReader& reader,
                                       const cost::Pricing& pricing, const cost::Policy& policy,
                                       const std::vector<std::string>& dims,
                                       const report::Window& w) {
  const auto share = cost::ParseSplit(bill.split);
  if (!share) return tl::unexpected(Bad("--bill-split: " + share.error().message));
  auto records = reader.ReadNodes(w.from_unix_s, w.to_unix_s);
  if (!records) return tl::unexpected(records.error());
  Nodes nodes = BillNodes(*records, pricing, *share, bill.split);
  cost::BillLedger ledger(cost::NodeMatcher(std::move(nodes.nodes)), w.from_unix_s, w.to_unix_s);
  for (const auto& file : bill.files) {
    auto read = bill::ReadFocusFile(file, ledger.currency, [&](const domain::Charge& c) {
      ledger.Add(c);
      return Expected<void>{};
    });
    if (!read) return tl::unexpected(read.error());
  }
  WarnRefused(ledger);
  const auto [from, to] = UsageSpan(w);
  auto hourly = reader.ReadBuckets(from, to, 3600);
  if (!hourly) return tl::unexpected(hourly.error());
  const cost::Labels& labels = hourly->labels;
  auto split = [&](cost::BillAmount which) {
    return cost::AllocateBill(ledger, hourly->buckets, nodes.splits, labels, policy, dims, which);
  };
  const auto billed = split(cost::BillAmount::kEffective);
  if (bill.format == "focus")
    return report::RenderBillFocus(billed, split(cost::BillAmount::kBilled),
                                   split(cost::BillAmount::kList), w, labels);
  if (bill.format == "csv") return report::RenderCsv(billed.chargeback);  // the groups
  const report::BillSource source{bill.files, bill.split, VmsListed(bill)};
  if (bill.format == "html") return report::RenderBillHtml(billed, ledger, source, w);
  return bill.format == "json" ? report::RenderBillJson(billed, ledger, source, w)
                               : report::RenderBillTable(billed, ledger, source, w);
}

}  // namespace gpumeter::app
