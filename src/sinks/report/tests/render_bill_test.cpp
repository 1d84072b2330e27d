// The bill's reconciliation as people and programs read it: an account's VMs that match no node
// summarised past a count (the costliest listed, the rest as their count and sum), all of them
// on request; refused lines named; text from the bill escaped for a terminal.
#include "sinks/report/render_bill.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

namespace gpumeter::report {
namespace {

using nlohmann::json;

constexpr int64_t kT0 = 1793700000;  // 2026-11-03T10:00:00Z
const std::string kEvil =
    "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachines/"
    "\x1b[31mevil";

domain::Charge Line(const std::string& resource, int64_t end, double effective) {
  domain::Charge c;
  c.category = "Usage";
  c.resource_id = resource;
  c.period_start = kT0;
  c.period_end = end;
  c.effective_cost = effective;
  c.billed_cost = effective;
  c.currency = "USD";
  return c;
}

// 250 EC2 VMs of no node, i costing (i + 1) / 4; an Azure VM named with an escape sequence, the
// costliest; a line ending in 9999 from a file named with one.
cost::BillLedger Ledger() {
  cost::BillLedger l(cost::NodeMatcher({}), kT0, kT0 + 3600);
  for (int i = 0; i < 250; ++i) l.Add(Line(fmt::format("i-{:017x}", i), kT0 + 3600, (i + 1) / 4.0));
  l.Add(Line(kEvil, kT0 + 3600, 1000));
  auto corrupt = Line("i-0aaaaaaaaaaaaaaaa", 253402214400, 5);
  corrupt.file = "\x1b]0;owned\x07.csv";
  corrupt.line = 3;
  l.Add(corrupt);
  return l;
}

TEST(RenderBill, UnmatchedVmsPastTheListedAreACountAndASum) {
  const auto l = Ledger();
  const auto b = cost::AllocateBill(l, {}, {}, {}, cost::Policy{}, {"namespace"});
  const Window w{kT0, kT0 + 3600};
  const json j = json::parse(RenderBillJson(b, l, {{"b.csv"}, "aws-scad", 100}, w))["bill"];
  ASSERT_EQ(j["unmatchedVms"].size(), 100u);
  EXPECT_EQ(j["unmatchedVms"][0]["resourceId"], kEvil);
  EXPECT_EQ(j["unmatchedVms"][1]["resourceId"], "i-000000000000000f9");  // 249: 62.50
  EXPECT_EQ(j["unmatchedVms"][1]["effectiveCost"], 62.5);
  const json& summary = j["unmatchedVmsSummary"];
  EXPECT_EQ(summary["vms"], 251);
  EXPECT_EQ(summary["listed"], 100);
  EXPECT_EQ(summary["notListed"]["lines"], 151);  // 0 to 150: (1 + … + 151) / 4
  EXPECT_EQ(summary["notListed"]["effectiveCost"], 2869);
  EXPECT_EQ(j["refused"]["lines"], 1);
  EXPECT_EQ(j["refused"]["effectiveCost"], 5);
  ASSERT_EQ(j["refused"]["described"].size(), 1u);
  const json all = json::parse(RenderBillJson(b, l, {{"b.csv"}, "aws-scad", SIZE_MAX}, w))["bill"];
  EXPECT_EQ(all["unmatchedVms"].size(), 251u);
  EXPECT_EQ(all["unmatchedVmsSummary"]["notListed"]["lines"], 0);
}

TEST(RenderBill, TheTableListsTheCostliestAndEscapesWhatTheBillNamed) {
  const auto l = Ledger();
  const auto b = cost::AllocateBill(l, {}, {}, {}, cost::Policy{}, {"namespace"});
  const std::string t = RenderBillTable(b, l, {{"b.csv"}, "aws-scad", 20}, {kT0, kT0 + 3600});
  for (const char* want :
       {"VMs in the bill that match no node (20 of 251, the costliest; --bill-unmatched all",
        "virtualMachines/\\x1b[31mevil", "and 231 more", "6699.00",  // 0 to 230: 231 × 232 / 8
        "refused (charge period over 5 years)",
        "\\x1b]0;owned\\x07.csv:3: column ChargePeriodEnd: 9999-12-31T00:00:00Z is"})
    EXPECT_NE(t.find(want), std::string::npos) << want << " in:\n" << t;
  EXPECT_EQ(t.find('\x1b'), std::string::npos);
  EXPECT_EQ(t.find('\x07'), std::string::npos);
  const std::string html = RenderBillHtml(b, l, {{"b.csv"}, "aws-scad", 20}, {kT0, kT0 + 3600});
  EXPECT_NE(html.find("(20 of 251, the costliest)"), std::string::npos);
  EXPECT_NE(html.find("<td>and 231 more</td><td>6699.00</td>"), std::string::npos);
}

}  // namespace
}  // namespace gpumeter::report
