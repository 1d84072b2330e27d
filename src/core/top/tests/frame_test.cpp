// The frame's own logic, hand-computed: a container's row sums its owners over every unit it runs
// on (GPU-equivalents by each unit's fraction), a unit's owners add up to the unit, each sort key
// orders the rows (ties by key, unknown last), the filters, prices split by the policy, and
// unknown stays unknown. sinks/top/tests/frame_test.cpp has the namespace sums, label groups,
// the memory-policy price and the JSON; these do not repeat them. Every value is exact in binary,
// so sums are asserted exactly.
#include "core/top/frame.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpumeter::top {
namespace {

using domain::Owner;
using domain::OwnerKind;
using Names = std::vector<std::string>;

OwnerNow Use(Owner owner, Amount held, Amount compute, double memory, double power,
             double memory_busy) {
  OwnerNow o;
  o.owner = std::move(owner);
  o.held_share = held;
  o.compute_ratio = compute;
  o.memory_bytes = memory;
  o.power_watts = power;
  o.memory_busy_ratio = memory_busy;
  return o;
}

Owner C(const std::string& ns, const std::string& pod) { return Owner::Container(ns, pod, "c"); }
Owner K(OwnerKind kind) { return {kind, {}, {}, {}}; }

// A whole time-sliced H100 (GPU0) held by ml/train (1/2), ml/eval and web/infer (1/4 each), and
// half an A30 (a 2g MIG instance, GPU1) held by ml/train. Each unit's owners add up to 1 of its
// compute and memory traffic, its memory in use and its power.
FrameData Frame() {
  FrameData f;
  UnitNow a;
  a.key = {"n1", "GPU-a", "GPU-a", "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kTimeSlicing,
           1.0};
  a.label = "GPU0";
  a.owners = {Use(C("ml", "train"), 0.5, 0.5, 20e9, 150, 0.5),
              Use(C("ml", "eval"), 0.25, 0.125, 8e9, 50, 0.125),
              Use(C("web", "infer"), 0.25, 0.0625, 12e9, 40, 0.125),
              Use(K(OwnerKind::kIdle), std::nullopt, 0.3125, 36e9, 60, 0.25),
              Use(K(OwnerKind::kSystem), std::nullopt, 0.0, 4e9, 0, 0.0)};
  a.owners[0].compute_bound_ratio = 0.125;
  a.owners[0].memory_busy_bound_ratio = 0.0625;
  a.owners[0].power_bound_watts = 10.0;
  a.owners[2].compute_unknown = a.owners[2].memory_busy_unknown = true;
  UnitNow b;
  b.key = {"n1", "MIG-b", "GPU-b", "NVIDIA A30", "2g.12gb", domain::SharingMode::kMig, 0.5};
  b.label = "GPU1 2g.12gb";
  b.owners = {Use(C("ml", "train"), 1.0, 0.75, 10e9, 60, 0.5),
              Use(K(OwnerKind::kIdle), std::nullopt, 0.25, 2e9, 20, 0.5)};
  b.owners[0].compute_bound_ratio = 0.25;
  f.units = {a, b};
  return f;
}

const GroupRow* Row(const std::vector<GroupRow>& rows, const std::string& pod) {
  for (const auto& r : rows)
    if (r.key.size() == 3 && r.key[1] == pod) return &r;
  return nullptr;
}

std::vector<std::string> Pods(const std::vector<GroupRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.key.at(1));
  return out;
}

TEST(TopFrameCore, AContainersRowSumsItsOwnersAcrossUnits) {
  const auto rows = GroupRows(Frame(), "container", SortKey::kCompute, {});
  ASSERT_EQ(rows.size(), 3u) << "idle and system are no rows";
  const GroupRow* train = Row(rows, "train");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->key, (Names{"ml", "train", "c"}));
  EXPECT_EQ(train->held_gpus, 0.5 + 1.0 * 0.5);
  EXPECT_EQ(train->compute_gpus, 0.5 + 0.75 * 0.5);
  EXPECT_EQ(train->compute_bound_gpus, 0.125 + 0.25 * 0.5);
  EXPECT_EQ(train->memory_busy_gpus, 0.5 + 0.5 * 0.5);
  EXPECT_EQ(train->memory_busy_bound_gpus, 0.0625);
  EXPECT_EQ(train->memory_bytes, 30e9) << "bytes are not scaled by the fraction";
  EXPECT_EQ(train->power_watts, 210.0);
  EXPECT_EQ(train->power_bound_watts, 10.0);
  EXPECT_EQ(train->waste_gpus, 1.0 - 0.875);
  EXPECT_FALSE(train->compute_unknown || train->memory_busy_unknown);
  EXPECT_EQ(train->units, (Names{"GPU0", "GPU1 2g.12gb"}));
  EXPECT_FALSE(train->cost_per_hour.has_value()) << "not priced: unknown, not 0";
  const GroupRow* infer = Row(rows, "infer");
  ASSERT_NE(infer, nullptr);
  EXPECT_EQ(infer->compute_gpus, 0.0625) << "a lower bound, flagged";
  EXPECT_TRUE(infer->compute_unknown && infer->memory_busy_unknown);
  EXPECT_EQ(infer->units, Names{"GPU0"});
}

TEST(TopFrameCore, EachUnitsOwnersAddUpToTheUnit) {
  const auto f = Frame();
  const UnitSums a = SumOwners(f.units[0]);
  EXPECT_EQ(a.compute_ratio, 1.0);
  EXPECT_EQ(a.memory_busy_ratio, 1.0);
  EXPECT_EQ(a.memory_bytes, 80e9);
  EXPECT_EQ(a.power_watts, 300.0);
  EXPECT_EQ(a.held_share, 1.0) << "containers' shares only: idle's unknown one does not count";
  EXPECT_FALSE(a.cost_per_hour.has_value()) << "no owner priced";
  const UnitSums b = SumOwners(f.units[1]);
  EXPECT_EQ(b.compute_ratio, 1.0);
  EXPECT_EQ(b.memory_busy_ratio, 1.0);
  EXPECT_EQ(b.memory_bytes, 12e9);
  EXPECT_EQ(b.power_watts, 80.0);
  EXPECT_EQ(b.held_share, 1.0);
}

TEST(TopFrameCore, UnknownStaysUnknownAndSortsLast) {
  EXPECT_EQ(Plus(1.0, 2.0), 3.0);
  EXPECT_FALSE(Plus(std::nullopt, 2.0).has_value());
  EXPECT_FALSE(Plus(1.0, std::nullopt).has_value());
  auto f = Frame();
  f.units[0].owners[1].compute_ratio = std::nullopt;  // ml/eval's compute unknown
  const UnitSums a = SumOwners(f.units[0]);
  EXPECT_FALSE(a.compute_ratio.has_value());
  EXPECT_EQ(a.memory_bytes, 80e9) << "the other sums stay known";
  const auto rows = GroupRows(f, "container", SortKey::kCompute, {});
  EXPECT_EQ(Pods(rows), (Names{"train", "infer", "eval"}));
  const GroupRow* eval = Row(rows, "eval");
  ASSERT_NE(eval, nullptr);
  EXPECT_FALSE(eval->compute_gpus.has_value());
  EXPECT_FALSE(eval->waste_gpus.has_value()) << "held − unknown is unknown";
  EXPECT_EQ(eval->held_gpus, 0.25);
  EXPECT_EQ(Pods(GroupRows(f, "container", SortKey::kWaste, {})),
            (Names{"infer", "train", "eval"}));
}

TEST(TopFrameCore, EachSortKeyOrdersHighestFirstWithTiesByKey) {
  auto f = Frame();
  f.units[0].owners[0].cost_per_hour = 2.0;  // train: 2 + 0.75
  f.units[0].owners[1].cost_per_hour = 0.5;  // eval
  f.units[0].owners[2].cost_per_hour = 3.0;  // infer
  f.units[1].owners[0].cost_per_hour = 0.75;
  auto order = [&f](SortKey key) { return Pods(GroupRows(f, "container", key, {})); };
  EXPECT_EQ(order(SortKey::kCompute), (Names{"train", "eval", "infer"}));  // 0.875 0.125 0.0625
  EXPECT_EQ(order(SortKey::kMemory), (Names{"train", "infer", "eval"}));   // 30 12 8 GB
  EXPECT_EQ(order(SortKey::kCost), (Names{"infer", "train", "eval"}));     // 3 2.75 0.5
  // 0.1875, then eval and train both 0.125: by key, ml/eval before ml/train.
  EXPECT_EQ(order(SortKey::kWaste), (Names{"infer", "eval", "train"}));
  const auto rows = GroupRows(f, "container", SortKey::kCost, {});
  ASSERT_NE(Row(rows, "train"), nullptr);
  EXPECT_EQ(Row(rows, "train")->cost_per_hour, 2.75);
}

// A time-sliced holder of 1/4 may use more than it holds: it wastes nothing, not a negative.
TEST(TopFrameCore, WasteIsNeverNegative) {
  auto f = Frame();
  f.units[0].owners[1].compute_ratio = 0.5;
  const auto rows = GroupRows(f, "container", SortKey::kWaste, {});
  ASSERT_NE(Row(rows, "eval"), nullptr);
  EXPECT_EQ(Row(rows, "eval")->waste_gpus, 0.0);
  EXPECT_EQ(Pods(rows).back(), "eval");
}

TEST(TopFrameCore, FiltersMatchContainersByExactNamespaceOrText) {
  const Filter ml{"ml", ""}, text{"", "rai"}, none{};
  EXPECT_TRUE(ml.Matches(C("ml", "train")));
  EXPECT_TRUE(text.Matches(C("ml", "train")));
  EXPECT_FALSE(text.Matches(C("ml", "eval")));
  EXPECT_FALSE(none.Matches(K(OwnerKind::kIdle))) << "only containers match";
  EXPECT_TRUE(none.Empty());
  EXPECT_FALSE(text.Empty());
  EXPECT_TRUE(ml.MatchesWho("ml/train/c"));
  EXPECT_FALSE(ml.MatchesWho("mlx/train/c")) << "the namespace whole, not a prefix";
  EXPECT_TRUE(ml.MatchesWho("GPU-a")) << "a device's finding always shows";
  EXPECT_FALSE(text.MatchesWho("web/infer/c"));

  const auto f = Frame();
  const auto rows = GroupRows(f, "container", SortKey::kCompute, ml);
  EXPECT_EQ(Pods(rows), (Names{"train", "eval"}));
  EXPECT_EQ(rows[0].compute_gpus, 0.875) << "a filter drops rows, not parts of them";
  const auto web = FilteredUnits(f, {"web", ""});
  ASSERT_EQ(web.size(), 1u);
  EXPECT_EQ(web[0], &f.units[0]);
  const auto train = FilteredUnits(f, text);
  ASSERT_EQ(train.size(), 2u);
  EXPECT_EQ(train[0], &f.units[0]) << "in the frame's order";
  EXPECT_EQ(train[1], &f.units[1]);
  EXPECT_TRUE(FilteredUnits(f, {"", "idle"}).empty()) << "idle is no container";
}

TEST(TopFrameCore, GroupKeysAndTheTextsOfBy) {
  auto f = Frame();
  f.labels[{"ml", "eval"}]["tier"] = "batch";
  EXPECT_EQ(GroupKeyOf(f, C("ml", "train"), "container"), (Names{"ml", "train", "c"}));
  EXPECT_EQ(GroupKeyOf(f, C("ml", "train"), "pod"), (Names{"ml", "train"}));
  EXPECT_EQ(GroupKeyOf(f, C("ml", "train"), "namespace"), Names{"ml"});
  EXPECT_EQ(GroupKeyOf(f, C("ml", "eval"), "label:team"), Names{"(none)"})
      << "its labels are known and have no team";
  for (const char* ok : {"container", "pod", "namespace", "label:team"})
    EXPECT_TRUE(CheckGroupBy(ok).has_value()) << ok;
  for (const char* bad : {"label:", "node", "", "Pod"}) {
    const auto e = CheckGroupBy(bad);
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_NE(e.error().message.find("--by '" + std::string(bad) + "'"), std::string::npos)
        << e.error().message;
  }
}

TEST(TopFrameCore, ViewsAndSortKeysReadBackAndCycle) {
  for (View v : {View::kUnits, View::kPods, View::kFindings}) EXPECT_EQ(ParseView(ToString(v)), v);
  EXPECT_STREQ(ToString(View::kPods), "pods");
  ASSERT_FALSE(ParseView("gpus").has_value());
  EXPECT_NE(ParseView("gpus").error().message.find("'gpus'"), std::string::npos);
  for (SortKey k : {SortKey::kCompute, SortKey::kMemory, SortKey::kCost, SortKey::kWaste})
    EXPECT_EQ(ParseSortKey(ToString(k)), k);
  EXPECT_STREQ(ToString(SortKey::kWaste), "waste");
  EXPECT_FALSE(ParseSortKey("Cost").has_value()) << "exact words";
  EXPECT_EQ(NextSortKey(SortKey::kCompute), SortKey::kMemory);
  EXPECT_EQ(NextSortKey(SortKey::kMemory), SortKey::kCost);
  EXPECT_EQ(NextSortKey(SortKey::kCost), SortKey::kWaste);
  EXPECT_EQ(NextSortKey(SortKey::kWaste), SortKey::kCompute);
}

cost::Pricing Prices() {
  return *cost::Pricing::Parse(
      "currency: EUR\ngpu_models: {H100: 4.0, A30: 2.0}\ndefaults: false\n", "p.yaml");
}

// Compute basis, idle apart: the H100's 4 EUR/h by compute (train 1/2, eval 1/8, infer 1/16),
// its unused 5/16 on idle; the A30 instance's 2 × 1/2 = 1 EUR/h, train 3/4 and idle 1/4.
TEST(TopFrameCore, PricesSplitByComputeWithIdleApart) {
  auto f = Frame();
  PriceFrame(f, Prices(), {cost::Basis::kCompute, 0.5, cost::IdleRule::kSeparate});
  EXPECT_EQ(f.currency, "EUR");
  const auto& a = f.units[0].owners;
  EXPECT_EQ(f.units[0].cost_per_hour, 4.0);
  EXPECT_EQ(a[0].cost_per_hour, 2.0);
  EXPECT_EQ(a[1].cost_per_hour, 0.5);
  EXPECT_EQ(a[2].cost_per_hour, 0.25);
  EXPECT_EQ(a[3].cost_per_hour, 1.25) << "idle's own row";
  EXPECT_EQ(a[4].cost_per_hour, 0.0) << "system used nothing: priced at 0, known";
  EXPECT_EQ(f.units[1].cost_per_hour, 1.0);
  EXPECT_EQ(f.units[1].owners[0].cost_per_hour, 0.75);
  EXPECT_EQ(f.units[1].owners[1].cost_per_hour, 0.25);
  for (const auto& u : f.units) EXPECT_EQ(SumOwners(u).cost_per_hour, u.cost_per_hour);
  const auto rows = GroupRows(f, "container", SortKey::kCost, {});
  ASSERT_NE(Row(rows, "train"), nullptr);
  EXPECT_EQ(Row(rows, "train")->cost_per_hour, 2.75);
}

// A cost split by use needs the use: an owner whose memory and compute are both unknown has an
// unknown cost (not 0), and so has its unit's sum; the unit's own price stands.
TEST(TopFrameCore, AnOwnerWithoutAnyKnownUseHasNoPrice) {
  auto f = Frame();
  f.units[0].owners[1].memory_bytes = std::nullopt;
  f.units[0].owners[1].compute_ratio = std::nullopt;
  PriceFrame(f, Prices(), {cost::Basis::kCompute, 0.5, cost::IdleRule::kSeparate});
  EXPECT_EQ(f.units[0].cost_per_hour, 4.0);
  EXPECT_FALSE(f.units[0].owners[1].cost_per_hour.has_value());
  EXPECT_EQ(f.units[0].owners[0].cost_per_hour, 2.0);
  EXPECT_EQ(f.units[0].owners[3].cost_per_hour, 1.75) << "what eval was not seen to use";
  EXPECT_FALSE(SumOwners(f.units[0]).cost_per_hour.has_value());
  const auto rows = GroupRows(f, "container", SortKey::kCost, {});
  ASSERT_NE(Row(rows, "eval"), nullptr);
  EXPECT_FALSE(Row(rows, "eval")->cost_per_hour.has_value());
  EXPECT_EQ(Pods(rows).back(), "eval") << "unknown cost sorts last";
}

TEST(TopFrameCore, FindingsWithoutASourceOrOfAnUnknownSeverity) {
  auto f = Frame();
  EXPECT_TRUE(SortedFindings(f, {}).empty()) << "a source without findings";
  f.findings = std::vector<FindingNow>{{"debug", "a", "n1", "ml/train/c", "", "", 50},
                                       {"info", "b", "n1", "ml/train/c", "", "", 10},
                                       {"info", "c", "n1", "GPU-a", "", "", 20},
                                       {"info", "d", "n1", "mlx/x/c", "", "", 30}};
  std::vector<std::string> kinds;
  for (const auto& x : SortedFindings(f, {"ml", ""})) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (Names{"c", "b", "a"})) << "an unknown severity after info; mlx is not ml";
}

}  // namespace
}  // namespace gpumeter::top
