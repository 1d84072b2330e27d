#include "sinks/report/render_bill.h"

#include "common/html.h"
#include "common/text_cell.h"
#include "sinks/report/render_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>

namespace gpumeter::report {
namespace {

using nlohmann::json;
using ReportAmounts = FocusAmounts;

using Vm = std::pair<const std::string, cost::BillAmounts>;

// The unmatched VMs listed: the `listed` costliest (by |EffectiveCost|, then by ResourceId), and
// what the others come to. Pointers, and a partial sort: millions of VMs are neither copied nor
// sorted whole.
struct Vms {
  std::vector<const Vm*> listed;
  cost::BillAmounts rest;
  size_t rest_count = 0;
};
Vms VmsByCost(const cost::BillLedger& l, size_t listed) {
  std::vector<const Vm*> all;
  all.reserve(l.unmatched_vms.size());
  for (const auto& vm : l.unmatched_vms) all.push_back(&vm);
  const size_t k = std::min(listed, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const Vm* a, const Vm* b) {
                      const double x = std::abs(a->second.effective),
                                   y = std::abs(b->second.effective);
                      return x != y ? x > y : a->first < b->first;
                    });
  Vms out;
  out.listed.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
  for (size_t i = k; i < all.size(); ++i) out.rest.Add(all[i]->second);
  out.rest_count = all.size() - k;
  return out;
}

// The heading's note on which lines count, shared by the table and the page.
std::string CountRule(const cost::BillLedger& l) {
  std::string s = "a line counts by the part of its charge period in the window";
  if (l.lines_crossing > 0)
    s += fmt::format(" ({} line(s) cross its edges: the rest of each is outside it)",
                     l.lines_crossing);
  return s;
}

// The refused lines, described (at most kRefusedDescribed), for a terminal.
std::string RefusedText(const cost::BillLedger& l) {
  if (l.refused.lines == 0) return "";
  std::string out = fmt::format(
      "Refused lines ({}, {:.2f}): a charge period no bill has, so their cost is split to nobody "
      "and counted in no bucket above:\n",
      l.refused.lines, l.refused.effective);
  for (const auto& why : l.refused_lines) out += "  " + TerminalCell(why) + "\n";
  const auto described = static_cast<int64_t>(l.refused_lines.size());
  if (l.refused.lines > described)
    out += fmt::format("  and {} more\n", l.refused.lines - described);
  return out;
}

bool AddsUp(const cost::BillReconciliation& r) {
  // To the cent: the parts are sums of the same lines' amounts, split and added in doubles.
  return std::abs(r.Sum() - r.node_lines.effective) < 0.005;
}

json Amounts(const cost::BillAmounts& a) {
  return {
      {"effectiveCost", a.effective},
      {"billedCost", a.billed},
      {"listCost", a.lines_without_list == a.lines && a.lines > 0 ? json(nullptr) : json(a.list)},
      {"lines", a.lines}};
}

// The ledger's buckets as rows: depth 0 the file, 1 outside the window and each category, 2
// Usage's parts. Table and HTML show the same rows.
struct LedgerRow {
  int depth;
  std::string what;
  cost::BillAmounts amounts;
};
std::vector<LedgerRow> LedgerRows(const cost::BillLedger& l) {
  std::vector<LedgerRow> rows{{0, "all lines", l.all}};
  if (l.refused.lines > 0) rows.push_back({1, "refused (charge period over 5 years)", l.refused});
  rows.push_back({1, "outside the window", l.outside_window});
  for (const auto& [category, a] : l.by_category) {
    rows.push_back({1, category, a});
    if (category != "Usage") continue;
    cost::BillAmounts vms;
    for (const auto& [id, vm] : l.unmatched_vms) vms.Add(vm);
    rows.push_back({2, "GPU nodes' lines", l.nodes});
    rows.push_back({2, "unused commitments", l.unused_commitments});
    rows.push_back({2, fmt::format("VMs matching no node ({})", l.unmatched_vms.size()), vms});
    rows.push_back({2, "other usage (disks, network, other services)", l.other_usage});
  }
  return rows;
}

// Where the GPU nodes' cost went, in the reconciliation's order.
std::vector<std::pair<const char*, double>> Parts(const cost::BillReconciliation& r) {
  return {{"containers", r.containers},
          {"idle (left unplaced by the policy)", r.idle},
          {"system", r.system},
          {"unattributed", r.unattributed},
          {"GPU hours no agent saw", r.no_agent},
          {"the nodes' non-GPU part", r.non_gpu}};
}

void Disagreements(std::string& out, const cost::BillReconciliation& r) {
  std::string lines;
  for (const auto& n : r.nodes) {
    if (n.periods_unseen > 0)
      lines +=
          fmt::format("  {}: billed for {} charge period(s) in which the agent recorded nothing\n",
                      TerminalCell(n.name), n.periods_unseen);
    if (n.hours_seen_unbilled > 0)
      lines += fmt::format("  {}: seen by the agent in {} hour(s) that no bill line covers\n",
                           TerminalCell(n.name), n.hours_seen_unbilled);
    // Billed GPU time no agent recorded: whole periods (above), or GPUs and hours within seen
    // periods (the agent started late, a GPU it never saw).
    if (n.no_agent > 0.005)
      lines += fmt::format("  {}: {:.2f} of its GPU cost is GPU time no agent recorded\n",
                           TerminalCell(n.name), n.no_agent);
  }
  for (const auto& [name, gpu_hours] : r.nodes_without_lines)
    lines += fmt::format(
        "  {}: seen by the agent ({:.3f} GPU-h) and billed by no line (no provider ID recorded, "
        "or another account's bill)\n",
        TerminalCell(name), gpu_hours);
  out += lines.empty() ? "The bill and the usage agree: every billed GPU-hour was seen, and every "
                         "seen one billed.\n"
                       : "Where the bill and the usage disagree:\n" + lines;
}

// Each (unit, owner)'s amount in a chargeback of the same split.
std::map<std::pair<attribution::UnitKey, domain::Owner>, double> RowAmounts(
    const cost::Chargeback& c) {
  std::map<std::pair<attribution::UnitKey, domain::Owner>, double> out;
  for (const auto& u : c.units)
    for (const auto& r : u.rows) out[{u.unit, r.owner}] += r.cost;
  return out;
}

std::map<std::string, const cost::BillReconciliation::Node*> NodesByName(
    const cost::BillReconciliation& r) {
  std::map<std::string, const cost::BillReconciliation::Node*> out;
  for (const auto& n : r.nodes) out[n.name] = &n;
  return out;
}

// A node's part that is no unit's (its non-GPU part, or GPU time no agent saw) as a FOCUS row.
FocusRecord NodeRecord(const cost::Chargeback& c, const Window& w, const std::string& node,
                       const std::string& part, const ReportAmounts& a) {
  const bool gpu = part == "__no_agent__";
  FocusRecord f =
      FocusRecordFor(a.billed, a.effective, a.list, c.currency, w.from_unix_s, w.to_unix_s);
  f.charge_description = gpu ? "GPU time of " + node + " billed while no agent recorded it"
                             : "the part of " + node + "'s bill that is not its GPUs";
  f.resource_id = f.resource_name = node;
  f.resource_type = gpu ? "GPU" : "Node";
  f.service_category = gpu ? "AI and Machine Learning" : "Compute";
  f.service_name = gpu ? "Kubernetes GPU" : "Kubernetes node";
  f.allocated_method_id = "gpumeter:" + c.policy;
  f.allocated_method_details = json{{"x_Part", gpu ? "no agent" : "non-GPU"}};
  f.allocated_resource_id = f.allocated_resource_name = part;
  return f;
}

}  // namespace

std::string RenderBillFocus(const cost::BilledChargeback& effective,
                            const cost::BilledChargeback& billed,
                            const cost::BilledChargeback& list, const Window& w,
                            const cost::Labels& labels) {
  const auto effective_rows = RowAmounts(effective.chargeback);
  const auto billed_rows = RowAmounts(billed.chargeback), list_rows = RowAmounts(list.chargeback);
  auto at = [](const auto& m, const auto& k) {
    const auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  const auto& c = effective.chargeback;
  // Every (unit, owner) any of the three splits has a row for: a unit whose EffectiveCost is 0
  // may still have a BilledCost or a ListCost (usage a credit paid for).
  std::map<std::pair<attribution::UnitKey, domain::Owner>,
           std::pair<const cost::UnitCost*, cost::CostRow>>
      rows;
  for (const auto* chargeback : {&c, &billed.chargeback, &list.chargeback})
    for (const auto& u : chargeback->units)
      for (const auto& r : u.rows) {
        auto it = rows.try_emplace({u.unit, r.owner}, &u, r).first;
        if (chargeback == &c) it->second = {&u, r};  // the effective split's row names the row
      }
  std::vector<FocusRecord> out;
  for (const auto& [key, entry] : rows) {
    const auto& [u, r] = entry;
    const ReportAmounts a{at(billed_rows, key), at(effective_rows, key), at(list_rows, key)};
    if (a.billed != 0 || a.effective != 0 || a.list != 0)
      out.push_back(FocusRecordOf(c, w, labels, *u, r, a));
  }
  const auto billed_nodes = NodesByName(billed.reconciliation);
  const auto list_nodes = NodesByName(list.reconciliation);
  for (const auto& n : effective.reconciliation.nodes) {
    const auto* b = billed_nodes.count(n.name) ? billed_nodes.at(n.name) : nullptr;
    const auto* l = list_nodes.count(n.name) ? list_nodes.at(n.name) : nullptr;
    const ReportAmounts non_gpu{b ? b->non_gpu : 0, n.non_gpu, l ? l->non_gpu : 0};
    const ReportAmounts no_agent{b ? b->no_agent : 0, n.no_agent, l ? l->no_agent : 0};
    if (non_gpu.billed != 0 || non_gpu.effective != 0 || non_gpu.list != 0)
      out.push_back(NodeRecord(c, w, n.name, "__non_gpu__", non_gpu));
    if (no_agent.billed != 0 || no_agent.effective != 0 || no_agent.list != 0)
      out.push_back(NodeRecord(c, w, n.name, "__no_agent__", no_agent));
  }
  return FocusCsv(out);
}

std::string RenderBillHtml(const cost::BilledChargeback& b, const cost::BillLedger& l,
                           const BillSource& source, const Window& w) {
  const auto& r = b.reconciliation;
  const std::string cur = HtmlEscape(l.currency);
  std::string h = fmt::format(
      "<h2>From the bill</h2><p class=\"note\">{} file(s), {} lines; EffectiveCost in {} "
      "(commitments amortized); {}.</p><table><tr><th>Lines</th><th>{}</th><th>lines</th></tr>",
      source.files.size(), l.all.lines, cur, HtmlEscape(CountRule(l)), cur);
  auto row = [&](const std::string& what, const cost::BillAmounts& a, bool total = false) {
    h += fmt::format("<tr{}><td>{}</td><td>{:.2f}</td><td>{}</td></tr>",
                     total ? " class=\"total\"" : "", HtmlEscape(what), a.effective, a.lines);
  };
  const auto ledger_rows = LedgerRows(l);
  for (size_t i = 1; i < ledger_rows.size(); ++i)
    row(std::string(ledger_rows[i].depth == 2 ? "Usage: " : "") + ledger_rows[i].what,
        ledger_rows[i].amounts);
  row("all lines", l.all, true);
  h += fmt::format("</table><h2>Where the GPU nodes' {:.2f} {} went</h2><table>",
                   r.node_lines.effective, cur);
  for (const auto& [what, v] : Parts(r))
    h += fmt::format("<tr><td>{}</td><td>{:.2f}</td></tr>", what, v);
  h += fmt::format(
      "<tr class=\"total\"><td>sum{}</td><td>{:.2f}</td></tr></table>",
      AddsUp(r) ? " (the lines' total)" : " (DOES NOT ADD UP: a bug, please report it)", r.Sum());
  std::string text;
  Disagreements(text, r);
  text += RefusedText(l);
  std::string escaped = HtmlEscape(text), lines;
  for (const char ch : escaped) lines += ch == '\n' ? std::string("<br>") : std::string(1, ch);
  h += "<p class=\"note\">" + lines + "</p>";
  if (!l.unmatched_vms.empty()) {
    const Vms vms = VmsByCost(l, source.vms_listed);
    h += fmt::format("<h2>VMs in the bill that match no node{}</h2><table>",
                     vms.rest_count > 0 ? fmt::format(" ({} of {}, the costliest)",
                                                      vms.listed.size(), l.unmatched_vms.size())
                                        : "");
    for (const Vm* vm : vms.listed)
      h += fmt::format("<tr><td>{}</td><td>{:.2f}</td></tr>", HtmlEscape(vm->first),
                       vm->second.effective);
    if (vms.rest_count > 0)
      h += fmt::format("<tr><td>and {} more</td><td>{:.2f}</td></tr>", vms.rest_count,
                       vms.rest.effective);
    h += "</table>";
  }
  const std::string note =
      "Every GPU's cost is its node's bill (EffectiveCost) for each charge period, times the "
      "node's GPU share, over its GPUs and the hours the agent recorded";
  return RenderHtml(b.chargeback, w, {}, h, note);
}

namespace {

// The VMs matching no node, for a terminal: the listed ones, then the others as one line.
std::string TableVms(const cost::BillLedger& l, size_t listed) {
  if (l.unmatched_vms.empty()) return "";
  const Vms vms = VmsByCost(l, listed);
  std::string out = fmt::format(
      "VMs in the bill that match no node{}:\n",
      vms.rest_count > 0 ? fmt::format(" ({} of {}, the costliest; --bill-unmatched all lists "
                                       "every one)",
                                       vms.listed.size(), l.unmatched_vms.size())
                         : "");
  for (const Vm* vm : vms.listed)
    out += fmt::format("  {:<64} {:>12.2f}\n", TerminalCell(vm->first), vm->second.effective);
  if (vms.rest_count > 0)
    out += fmt::format("  {:<64} {:>12.2f}\n", fmt::format("and {} more", vms.rest_count),
                       vms.rest.effective);
  return out;
}

}  // namespace

std::string RenderBillTable(const cost::BilledChargeback& b, const cost::BillLedger& l,
                            const BillSource& source, const Window& w) {
  std::string out = RenderTable(b.chargeback, w);
  const auto& r = b.reconciliation;
  const std::string cur = l.currency.empty() ? "" : " " + TerminalCell(l.currency);
  out += fmt::format(
      "\nFrom the bill: {} file(s), {} lines; EffectiveCost in {} (commitments amortized); {}\n",
      source.files.size(), l.all.lines, l.currency.empty() ? "-" : TerminalCell(l.currency),
      CountRule(l));
  auto row = [&](int indent, const std::string& what, const cost::BillAmounts& a,
                 const std::string& note = "") {
    out += fmt::format("{:{}}{:<{}} {:>14.2f}  {:>7} lines{}\n", "", indent, what, 50 - indent,
                       a.effective, a.lines, note);
  };
  for (const auto& lr : LedgerRows(l))
    row(2 + 2 * lr.depth, lr.what, lr.amounts,
        lr.what == "Purchase" ? fmt::format("  (BilledCost {:.2f})", lr.amounts.billed) : "");
  out += fmt::format("The GPU nodes' {:.2f}{} went to:\n", r.node_lines.effective, cur);
  for (const auto& [what, v] : Parts(r)) out += fmt::format("  {:<48} {:>14.2f}\n", what, v);
  out += fmt::format("  {:<48} {:>14.2f}  {}\n", "sum", r.Sum(),
                     AddsUp(r) ? "= the lines' total" : "DOES NOT ADD UP: a bug, please report it");
  if (!r.nodes.empty()) {
    out += fmt::format("  {:<28} {:>8} {:>7} {:>12} {:>12} {:>10}  {}\n", "node", "periods",
                       "unseen", "billed", "no agent", "non-GPU", "split");
    for (const auto& n : r.nodes)
      out += fmt::format(
          "  {:<28} {:>8} {:>7} {:>12.2f} {:>12.2f} {:>10.2f}  GPU {:.0f}% of {} "
          "GPU(s) ({})\n",
          TerminalCell(n.name), n.periods, n.periods_unseen, n.effective, n.no_agent, n.non_gpu,
          100 * n.split.gpu_share, n.split.gpus ? std::to_string(*n.split.gpus) : "those seen",
          TerminalCell(n.split.source));
  }
  Disagreements(out, r);
  out += RefusedText(l);
  out += TableVms(l, source.vms_listed);
  return out;
}

namespace {

// The unmatched VMs as JSON: the listed ones, and a summary of all (the others' count and sum).
std::pair<json, json> JsonVms(const cost::BillLedger& l, size_t listed) {
  const Vms vms = VmsByCost(l, listed);
  json list = json::array();
  for (const Vm* vm : vms.listed) {
    json v = Amounts(vm->second);
    v["resourceId"] = vm->first;
    list.push_back(std::move(v));
  }
  json summary = {{"vms", l.unmatched_vms.size()},
                  {"listed", vms.listed.size()},
                  {"notListed", Amounts(vms.rest)}};
  return {std::move(list), std::move(summary)};
}

}  // namespace

std::string RenderBillJson(const cost::BilledChargeback& b, const cost::BillLedger& l,
                           const BillSource& source, const Window& w) {
  json j = json::parse(RenderJson(b.chargeback, w));
  const auto& r = b.reconciliation;
  json categories = json::object();
  for (const auto& [category, a] : l.by_category) categories[category] = Amounts(a);
  auto [vms, vms_summary] = JsonVms(l, source.vms_listed);
  json refused = Amounts(l.refused);
  refused["described"] = l.refused_lines;
  json nodes = json::array();
  for (const auto& n : r.nodes)
    nodes.push_back({{"node", n.name},
                     {"periods", n.periods},
                     {"periodsUnseen", n.periods_unseen},
                     {"hoursSeenUnbilled", n.hours_seen_unbilled},
                     {"effectiveCost", n.effective},
                     {"noAgentCost", n.no_agent},
                     {"nonGpuCost", n.non_gpu},
                     {"gpuShare", n.split.gpu_share},
                     {"gpus", n.split.gpus ? json(*n.split.gpus) : json(nullptr)},
                     {"splitSource", n.split.source}});
  json without = json::array();
  for (const auto& [name, gpu_hours] : r.nodes_without_lines)
    without.push_back({{"node", name}, {"gpuHoursSeen", gpu_hours}});
  j["bill"] = {{"files", source.files},
               {"defaultSplit", source.split},
               {"currency", l.currency},
               {"total", Amounts(l.all)},
               {"refused", std::move(refused)},
               {"outsideWindow", Amounts(l.outside_window)},
               {"linesCrossingWindow", l.lines_crossing},
               {"byCategory", categories},
               {"gpuNodeLines", Amounts(l.nodes)},
               {"unusedCommitments", Amounts(l.unused_commitments)},
               {"unmatchedVms", std::move(vms)},
               {"unmatchedVmsSummary", std::move(vms_summary)},
               {"otherUsage", Amounts(l.other_usage)},
               {"allocation",
                {{"containers", r.containers},
                 {"idle", r.idle},
                 {"system", r.system},
                 {"unattributed", r.unattributed},
                 {"noAgent", r.no_agent},
                 {"nonGpu", r.non_gpu},
                 {"sum", r.Sum()},
                 {"addsUp", AddsUp(r)}}},
               {"nodes", nodes},
               {"nodesWithoutLines", without}};
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gpumeter::report
