#include "core/cost/bill_allocate.h"

#include <gtest/gtest.h>

namespace gpumeter::cost {
namespace {

using attribution::UnitRecord;
using domain::Owner;
using domain::OwnerKind;

constexpr int64_t kT0 = 1793700000;  // 2026-11-03T10:00:00Z
constexpr double kGiB = 1024.0 * 1024 * 1024;
const char* const kI1 = "i-0123456789abcdef0";

Owner C(const std::string& pod) { return Owner::Container("ml", pod, "main"); }
Owner K(OwnerKind k) { return {k, {}, {}, {}}; }

// A whole GPU of `node` for `seconds` of one hour; `owners` as (owner, compute seconds).
UnitRecord Gpu(const std::string& node, const std::string& uuid, double seconds,
               const std::vector<std::pair<Owner, double>>& owners) {
  UnitRecord r;
  r.unit = {node, uuid, uuid, "NVIDIA H100 80GB HBM3", "", std::nullopt, 1};
  r.seconds = seconds;
  r.memory_capacity_byte_seconds = 80 * kGiB * seconds;
  for (const auto& [o, compute] : owners)
    r.owners.push_back(
        {o, 10 * kGiB * seconds, compute, 0, o.kind == OwnerKind::kContainer ? seconds : 0});
  return r;
}

domain::Charge Line(const std::string& category, const std::string& resource, int64_t start,
                    int64_t end, double effective, double billed) {
  domain::Charge c;
  c.category = category;
  c.resource_id = resource;
  c.period_start = start;
  c.period_end = end;
  c.effective_cost = effective;
  c.billed_cost = billed;
  c.currency = "USD";
  return c;
}

// Two AWS nodes; n1 (2 GPUs) is billed for two hours, n2 for none.
BillLedger Ledger() {
  BillLedger l(NodeMatcher({{"n1", std::string("aws:///us-east-1a/") + kI1, ""},
                            {"n2", "aws:///us-east-1a/i-0aaaaaaaaaaaaaaaa", ""}}),
               kT0, kT0 + 4 * 3600);
  l.Add(Line("Usage", kI1, kT0, kT0 + 3600, 10, 10));
  l.Add(Line("Usage", std::string("arn:aws:ec2:us-east-1:123456789012:instance/") + kI1, kT0 + 3600,
             kT0 + 7200, 10, 10));
  l.Add(Line("Tax", "", kT0, kT0 + 3600, 1.5, 1.5));
  l.Add(Line("Credit", kI1, kT0, kT0 + 3600, -2, -2));  // names the node, stays a credit
  auto unused =
      Line("Usage", "arn:aws:savingsplans::123456789012:savingsplan/sp-1", kT0, kT0 + 3600, 3, 0);
  unused.commitment_status = "Unused";
  l.Add(unused);
  l.Add(Line("Usage", "i-0bbbbbbbbbbbbbbbb", kT0, kT0 + 3600, 7, 7));  // a VM of no node
  l.Add(Line("Usage", "vol-0123456789abcdef0", kT0, kT0 + 3600, 0.25, 0.25));
  l.Add(Line("Usage", kI1, kT0 - 3600, kT0, 10, 10));  // before the window
  l.Add(Line("Purchase", "arn:aws:savingsplans::123456789012:savingsplan/sp-1", kT0, kT0 + 3600, 0,
             100));
  return l;
}

// Hour 0: n1's GPU A all hour (pod a busy half of it), GPU B half the hour (pod b busy all of
// it). Hour 1: nothing (the agent was down). Hour 2: n1's GPU A, not billed. Hour 3: n2, idle.
std::map<int64_t, std::vector<UnitRecord>> Usage() {
  return {{kT0,
           {Gpu("n1", "GPU-A", 3600, {{C("a"), 1800}, {K(OwnerKind::kIdle), 1800}}),
            Gpu("n1", "GPU-B", 1800, {{C("b"), 1800}})}},
          {kT0 + 7200, {Gpu("n1", "GPU-A", 3600, {{C("a"), 3600}})}},
          {kT0 + 3 * 3600, {Gpu("n2", "GPU-C", 3600, {{K(OwnerKind::kIdle), 3600}})}}};
}

TEST(BillLedger, EveryLineLandsInOneBucketAndTheBucketsAddUp) {
  const BillLedger l = Ledger();
  EXPECT_DOUBLE_EQ(l.all.effective, 39.75);
  EXPECT_DOUBLE_EQ(l.all.billed, 136.75);  // the unused commitment bills 0, its purchase 100
  EXPECT_EQ(l.all.lines, 9);
  EXPECT_DOUBLE_EQ(l.outside_window.effective, 10);
  EXPECT_DOUBLE_EQ(l.by_category.at("Usage").effective, 30.25);
  EXPECT_DOUBLE_EQ(l.by_category.at("Tax").effective, 1.5);
  EXPECT_DOUBLE_EQ(l.by_category.at("Credit").effective, -2);
  EXPECT_DOUBLE_EQ(l.by_category.at("Purchase").billed, 100);
  EXPECT_DOUBLE_EQ(l.nodes.effective, 20);
  EXPECT_DOUBLE_EQ(l.unused_commitments.effective, 3);
  ASSERT_EQ(l.unmatched_vms.size(), 1u);
  EXPECT_DOUBLE_EQ(l.unmatched_vms.at("i-0bbbbbbbbbbbbbbbb").effective, 7);
  EXPECT_DOUBLE_EQ(l.other_usage.effective, 0.25);
  const auto charges = l.NodeCharges();
  ASSERT_EQ(charges.size(), 2u);  // one per hour, the ARN and the bare id the same node
  EXPECT_EQ(charges[0]->nodes, std::vector<size_t>{0});
  EXPECT_EQ(charges[1]->start, kT0 + 3600);
}

TEST(BillLedger, ALinePeriodNoBillHasIsRefusedNamedAndSplitToNobody) {
  // The same bill with one more line of node n1 that ends in 9999: refused, with its file and
  // line, its cost in the refused bucket, and nothing else moved.
  BillLedger with = Ledger();
  auto corrupt = Line("Usage", kI1, kT0 + 3600, 253402214400, 10, 10);  // 9999-12-31T00:00:00Z
  corrupt.file = "b.csv";
  corrupt.line = 7;
  with.Add(corrupt);
  // The limit itself is taken (five years of a commitment's fee); a second more is refused.
  with.Add(Line("Purchase", "sp-1", kT0, kT0 + kMaxChargePeriodS, 0, 5));
  with.Add(Line("Purchase", "sp-2", kT0, kT0 + kMaxChargePeriodS + 1, 0, 6));
  EXPECT_EQ(with.refused.lines, 2);
  EXPECT_DOUBLE_EQ(with.refused.effective, 10);
  EXPECT_DOUBLE_EQ(with.refused.billed, 16);
  ASSERT_EQ(with.refused_lines.size(), 2u);
  EXPECT_EQ(with.refused_lines[0],
            "b.csv:7: column ChargePeriodEnd: 9999-12-31T00:00:00Z is 2912135 days after "
            "ChargePeriodStart 2026-11-03T11:00:00Z, longer than any commitment's term (1827 "
            "days)");
  const BillLedger without = Ledger();
  EXPECT_DOUBLE_EQ(with.all.effective, without.all.effective + 10);
  EXPECT_DOUBLE_EQ(with.nodes.effective, without.nodes.effective);
  EXPECT_EQ(with.NodeCharges().size(), without.NodeCharges().size());
  double buckets = with.refused.effective + with.outside_window.effective;
  int64_t lines = with.refused.lines + with.outside_window.lines;
  for (const auto& [category, a] : with.by_category) buckets += a.effective, lines += a.lines;
  EXPECT_DOUBLE_EQ(buckets, with.all.effective);
  EXPECT_EQ(lines, with.all.lines);
  Policy p;
  p.basis = Basis::kCompute;
  const std::vector<NodeCostSplit> splits(2, {0.9, 2, "test"});
  const auto a = AllocateBill(with, Usage(), splits, {}, p, {"pod"}).reconciliation;
  const auto b = AllocateBill(without, Usage(), splits, {}, p, {"pod"}).reconciliation;
  EXPECT_EQ(a.containers, b.containers);
  EXPECT_EQ(a.idle, b.idle);
  EXPECT_EQ(a.no_agent, b.no_agent);
  EXPECT_NEAR(a.containers, 6.75, 1e-12);  // hour 0's GPU part, as in the test above
}

TEST(BillLedger, ACommitmentOverYearsCountsTheHoursInTheWindowExactly) {
  // Three years (1095 days) from two hours before the window, 26280 in all: 1 an hour, so the
  // window's 4 hours take 4 and the rest, 26276, is outside it. A purchase over the same term too.
  const int64_t start = kT0 - 7200, end = start + 1095 * 86400;
  auto ledger = [&](int64_t from, int64_t to) {
    BillLedger l(NodeMatcher({{"n1", std::string("aws:///us-east-1a/") + kI1, ""}}), from, to);
    auto usage = Line("Usage", kI1, start, end, 26280, 26280);
    usage.list_cost = 52560;
    l.Add(usage);
    l.Add(Line("Purchase", "arn:aws:savingsplans::1:savingsplan/sp-1", start, end, 0, 26280));
    return l;
  };
  const BillLedger l = ledger(kT0, kT0 + 4 * 3600);
  EXPECT_EQ(l.nodes.effective, 4);
  EXPECT_EQ(l.nodes.billed, 4);
  EXPECT_EQ(l.nodes.list, 8);
  EXPECT_EQ(l.by_category.at("Purchase").billed, 4);
  EXPECT_EQ(l.outside_window.effective, 26276);
  EXPECT_EQ(l.outside_window.billed, 26276 * 2);
  EXPECT_EQ(l.lines_crossing, 2);
  EXPECT_EQ(l.outside_window.lines, 0);  // each line counts once, in the window
  EXPECT_EQ(l.by_category.at("Usage").lines + l.by_category.at("Purchase").lines, l.all.lines);
  EXPECT_EQ(l.refused.lines, 0);
  const auto charges = l.NodeCharges();
  ASSERT_EQ(charges.size(), 1u);
  EXPECT_EQ(charges[0]->start, kT0);  // clipped: the hours walked are the window's
  EXPECT_EQ(charges[0]->end, kT0 + 4 * 3600);
  std::map<int64_t, std::vector<UnitRecord>> usage;
  for (int h = 0; h < 4; ++h) usage[kT0 + h * 3600] = {Gpu("n1", "GPU-A", 3600, {{C("a"), 3600}})};
  Policy p;
  p.basis = Basis::kCompute;
  const auto b = AllocateBill(l, usage, {{1.0, 1, "test"}}, {}, p, {"pod"});
  EXPECT_NEAR(b.reconciliation.containers, 4, 1e-12);
  EXPECT_NEAR(b.reconciliation.no_agent, 0, 1e-12);
  EXPECT_EQ(b.reconciliation.nodes.at(0).periods, 1);
  // Two windows back to back take the same 4 between them.
  EXPECT_EQ(
      ledger(kT0, kT0 + 7200).nodes.effective + ledger(kT0 + 7200, kT0 + 4 * 3600).nodes.effective,
      4);
}

TEST(AllocateBill, EachBilledHourGoesToTheGpusTheAgentSawAndTheRestIsNamed) {
  const BillLedger l = Ledger();
  Policy p;
  p.basis = Basis::kCompute;
  p.idle = IdleRule::kSeparate;
  for (const std::optional<int> gpus : {std::optional<int>(2), std::optional<int>()}) {
    const std::vector<NodeCostSplit> splits(2, {0.9, gpus, "test"});
    const auto b = AllocateBill(l, Usage(), splits, {}, p, {"pod"});
    const auto& r = b.reconciliation;
    // Hour 0: GPU part 9 over 2 × 3600 GPU-seconds: GPU A 4.5 (pod a 2.25, idle 2.25), GPU B
    // 2.25 (pod b), 1800 GPU-seconds unseen 2.25. Hour 1: GPU part 9, all unseen. 1 + 1 non-GPU.
    EXPECT_NEAR(r.containers, 4.5, 1e-12);
    EXPECT_NEAR(r.idle, 2.25, 1e-12);
    EXPECT_NEAR(r.no_agent, 11.25, 1e-12);
    EXPECT_NEAR(r.non_gpu, 2, 1e-12);
    EXPECT_EQ(r.system + r.unattributed, 0);
    EXPECT_NEAR(r.Sum(), r.node_lines.effective, 1e-9);
    EXPECT_NEAR(b.chargeback.total.cost, 6.75, 1e-12);
    ASSERT_EQ(r.nodes.size(), 1u);
    EXPECT_EQ(r.nodes[0].name, "n1");
    EXPECT_EQ(r.nodes[0].periods, 2);
    EXPECT_EQ(r.nodes[0].periods_unseen, 1);
    EXPECT_EQ(r.nodes[0].hours_seen_unbilled, 1);  // hour 2
    ASSERT_EQ(r.nodes_without_lines.size(), 1u);
    EXPECT_EQ(r.nodes_without_lines[0].first, "n2");
    EXPECT_DOUBLE_EQ(r.nodes_without_lines[0].second, 1.0);
    std::map<std::string, double> by_pod;
    for (const auto& g : b.chargeback.groups) by_pod[g.key[0].label()] = g.cost;
    EXPECT_NEAR(by_pod.at("ml/a"), 2.25, 1e-12);
    EXPECT_NEAR(by_pod.at("ml/b"), 2.25, 1e-12);
    EXPECT_NEAR(by_pod.at("__idle__"), 2.25, 1e-12);
    ASSERT_EQ(b.chargeback.units.size(), 2u);  // GPU A and B, merged over hours
    EXPECT_EQ(b.chargeback.currency, "USD");
  }
}

TEST(AllocateBill, ConservationHoldsUnderEveryPolicy) {
  const BillLedger l = Ledger();
  const std::vector<NodeCostSplit> splits(2, {0.7, std::nullopt, "test"});
  for (const Basis basis : {Basis::kMemory, Basis::kCompute, Basis::kBlend, Basis::kRequest})
    for (const IdleRule idle : {IdleRule::kShare, IdleRule::kOwner, IdleRule::kSeparate}) {
      Policy p;
      p.basis = basis;
      p.idle = idle;
      const auto b = AllocateBill(l, Usage(), splits, {}, p, {"namespace"});
      const auto& r = b.reconciliation;
      EXPECT_NEAR(r.Sum(), 20, 1e-9) << p.Name();
      EXPECT_NEAR(b.chargeback.total.cost + r.no_agent + r.non_gpu, 20, 1e-9) << p.Name();
      double groups = 0;
      for (const auto& g : b.chargeback.groups) groups += g.cost;
      EXPECT_NEAR(groups, b.chargeback.total.cost, 1e-9) << p.Name();
      EXPECT_NEAR(r.non_gpu, 20 * 0.3, 1e-9) << p.Name();
    }
}

TEST(AllocateBill, AScaleSetsDailyLineIsSharedPerGpuByTheNodesKnownInThePeriod) {
  const std::string set =
      "/subscriptions/s/resourceGroups/MC_rg/providers/Microsoft.Compute/virtualMachineScaleSets/"
      "aks-gpu-vmss";
  const int64_t day = 86400;
  // aks-0 seen all day; aks-1's agent stopped at noon; aks-2 was deleted the day before; aks-3
  // was known in the period (its span overlaps it) but its agent recorded nothing.
  BillLedger l(
      NodeMatcher(
          {{"aks-0", "azure://" + set + "/virtualMachines/0", "", kT0 - day, kT0 + day},
           {"aks-1", "azure://" + set + "/virtualMachines/1", "", kT0 - day, kT0 + 12 * 3600},
           {"aks-2", "azure://" + set + "/virtualMachines/2", "", kT0 - 2 * day, kT0 - day},
           {"aks-3", "azure://" + set + "/virtualMachines/3", "", kT0 - day, kT0 + 3600}}),
      kT0, kT0 + day);
  l.Add(Line("Usage", set, kT0, kT0 + day, 48, 48));
  std::map<int64_t, std::vector<UnitRecord>> usage;
  for (int h = 0; h < 24; ++h) {
    const int64_t t = kT0 + h * 3600;
    usage[t].push_back(Gpu("aks-0", "GPU-0", 3600, {{C("a"), 3600}}));
    if (h < 12) usage[t].push_back(Gpu("aks-1", "GPU-1", 3600, {{C("b"), 3600}}));
  }
  Policy p;
  p.basis = Basis::kCompute;
  const auto b =
      AllocateBill(l, usage, std::vector<NodeCostSplit>(4, {1.0, 1, "test"}), {}, p, {"pod"});
  // 48 shared by three nodes of one GPU: 16 each, as if each ran the day. aks-1's agent saw half
  // of it, aks-3's none: what they did not see is no agent's, not a's or b's.
  std::map<std::string, double> by_pod;
  for (const auto& g : b.chargeback.groups) by_pod[g.key[0].label()] = g.cost;
  EXPECT_NEAR(by_pod.at("ml/a"), 16, 1e-9);
  EXPECT_NEAR(by_pod.at("ml/b"), 8, 1e-9);
  EXPECT_NEAR(b.reconciliation.no_agent, 8 + 16, 1e-9);
  EXPECT_NEAR(b.reconciliation.Sum(), 48, 1e-9);
  ASSERT_EQ(b.reconciliation.nodes.size(), 3u);  // aks-2 takes no part
  EXPECT_EQ(b.reconciliation.nodes[2].name, "aks-3");
  EXPECT_EQ(b.reconciliation.nodes[2].periods_unseen, 1);
}

TEST(AllocateBill, TwoRowsOfOneNodeNameTakeItsUsageOnce) {
  // GKE's auto-repair recreated the VM under its name: two rows, one provider ID, two ids. A line
  // naming the VM by its name matches both; the name's hour is split once.
  BillLedger l(NodeMatcher({{"gke-a", "gce://p/z/gke-a", "111", kT0 - 7200, kT0 + 1800},
                            {"gke-a", "gce://p/z/gke-a", "222", kT0 + 1800, kT0 + 7200}}),
               kT0, kT0 + 3600);
  l.Add(Line("Usage", "//compute.googleapis.com/projects/p/zones/z/instances/gke-a", kT0,
             kT0 + 3600, 10, 10));
  Policy p;
  p.basis = Basis::kCompute;
  p.idle = IdleRule::kSeparate;
  const std::map<int64_t, std::vector<UnitRecord>> usage = {
      {kT0, {Gpu("gke-a", "GPU-A", 3600, {{C("a"), 3600}})}}};
  const auto b =
      AllocateBill(l, usage, std::vector<NodeCostSplit>(2, {1.0, 1, "test"}), {}, p, {"pod"});
  ASSERT_EQ(b.chargeback.units.size(), 1u);
  EXPECT_NEAR(b.chargeback.units[0].hours, 1, 1e-12);
  EXPECT_NEAR(b.chargeback.total.gpu_hours_held, 1, 1e-12);
  EXPECT_NEAR(b.reconciliation.containers, 10, 1e-12);
  ASSERT_EQ(b.reconciliation.nodes.size(), 1u);
  EXPECT_EQ(b.reconciliation.nodes[0].periods, 1);
}

TEST(AllocateBill, ARefundIsSplitLikeTheChargeItTakesBack) {
  BillLedger l(NodeMatcher({{"n1", std::string("aws:///us-east-1a/") + kI1, ""}}), kT0, kT0 + 3600);
  l.Add(Line("Usage", kI1, kT0, kT0 + 3600, -10, -10));  // a correction, alone in its hour
  Policy p;
  p.basis = Basis::kCompute;
  p.idle = IdleRule::kSeparate;
  const std::map<int64_t, std::vector<UnitRecord>> usage = {
      {kT0, {Gpu("n1", "GPU-A", 3600, {{C("a"), 900}, {K(OwnerKind::kIdle), 2700}})}}};
  const auto b = AllocateBill(l, usage, {{0.9, 1, "test"}}, {}, p, {"pod"});
  EXPECT_NEAR(b.reconciliation.containers, -9 * 0.25, 1e-12);
  EXPECT_NEAR(b.reconciliation.idle, -9 * 0.75, 1e-12);
  EXPECT_NEAR(b.reconciliation.non_gpu, -1, 1e-12);
  EXPECT_NEAR(b.reconciliation.Sum(), -10, 1e-12);
}

TEST(AllocateBill, APeriodOffTheHourTakesThePartsOfTheHoursItCovers) {
  BillLedger l(NodeMatcher({{"n1", std::string("aws:///us-east-1a/") + kI1, ""}}), kT0, kT0 + 7200);
  l.Add(Line("Usage", kI1, kT0 + 1800, kT0 + 5400, 10, 10));  // 10:30 to 11:30
  Policy p;
  p.basis = Basis::kCompute;
  p.idle = IdleRule::kSeparate;
  const std::map<int64_t, std::vector<UnitRecord>> usage = {
      {kT0, {Gpu("n1", "GPU-A", 3600, {{C("a"), 3600}})}},
      {kT0 + 3600, {Gpu("n1", "GPU-A", 3600, {{C("b"), 3600}})}}};
  const auto b = AllocateBill(l, usage, {{1.0, 1, "test"}}, {}, p, {"pod"});
  std::map<std::string, double> by_pod;
  for (const auto& g : b.chargeback.groups) by_pod[g.key[0].label()] = g.cost;
  EXPECT_NEAR(by_pod.at("ml/a"), 5, 1e-9);  // half of 10:00's hour, half of 11:00's
  EXPECT_NEAR(by_pod.at("ml/b"), 5, 1e-9);
  EXPECT_NEAR(b.reconciliation.no_agent, 0, 1e-9);
}

}  // namespace
}  // namespace gpumeter::cost
