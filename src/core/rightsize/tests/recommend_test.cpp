// Recommendations from histories with known answers, one per kind; short and unknown histories;
// and the property that nothing is ever recommended below the highest memory seen × the margin.
#include "core/rightsize/recommend.h"

#include "core/rightsize/mig_profiles.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace gpumeter::rightsize {
namespace {

using domain::Owner;
using domain::OwnerKind;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";
constexpr const char* kL4 = "NVIDIA L4";

// A workload on one unit: memory (GiB) and compute (fraction of the unit) per minute.
struct Feed {
  std::string pod;
  attribution::UnitKey unit;
  double unit_gib = 80;
  double share = 1;
  std::function<double(int)> memory_gib, compute;
  std::function<bool(int)> lost = [](int) { return false; };
  std::function<bool(int)> present = [](int) { return true; };  // the pod exists this minute
  // Seconds of the minute in which the pod's own compute went unmeasured (unattributed's time).
  std::function<double(int)> unknown_s = [](int) { return 0.0; };
  // Memory traffic, fraction of the unit per minute; nullopt: not measured (a store before it).
  std::function<std::optional<double>(int)> traffic = [](int) { return std::nullopt; };
};

attribution::UnitKey Unit(const std::string& uuid, const std::string& model = kH100,
                          const std::string& mig = "", double fraction = 1,
                          domain::SharingMode mode = domain::SharingMode::kExclusive) {
  return {"node-a", uuid, uuid, model, mig, mode, fraction};
}

std::map<WorkloadKey, WorkloadHistory> Build(const std::vector<Feed>& feeds, int minutes,
                                             int64_t t0 = 1796083200) {
  HistoryBuilder b({});
  for (int m = 0; m < minutes; ++m) {
    std::vector<attribution::UnitRecord> units;
    for (const auto& f : feeds) {
      if (!f.present(m)) continue;
      attribution::UnitRecord u;
      u.unit = f.unit;
      u.seconds = 60;
      u.memory_capacity_byte_seconds = f.unit_gib * kGiB * 60;
      attribution::OwnerAmounts o;
      o.owner = Owner{OwnerKind::kContainer, "ns", f.pod, "c"};
      o.requested_share_seconds = f.share * 60;
      if (f.lost(m)) {
        u.owners.push_back(
            {Owner{OwnerKind::kUnattributed, {}, {}, {}}, f.unit_gib * kGiB * 60, 60, 0, 0});
      } else {
        o.memory_byte_seconds = f.memory_gib(m) * kGiB * 60;
        o.compute_seconds = f.compute(m) * 60;
        if (const auto t = f.traffic(m))
          o.memory_busy_seconds = *t * 60;
        else
          o.memory_busy_unknown_seconds = 60;
        if (const double unknown = f.unknown_s(m); unknown > 0) {
          o.compute_unknown_seconds = unknown;
          u.owners.push_back({Owner{OwnerKind::kUnattributed, {}, {}, {}}, 0, unknown, 0, 0});
        }
      }
      u.owners.push_back(o);
      units.push_back(std::move(u));
    }
    b.Add(t0 + 60 * m, units);
  }
  return b.Finish();
}

cost::Pricing Prices() {
  auto p =
      cost::Pricing::Parse("currency: USD\ngpu_models:\n  H100: 2.00\n  L4: 0.80\n", "test.yaml");
  EXPECT_TRUE(p) << (p ? "" : p.error().message);
  return *p;
}

const Recommendation& Of(const std::vector<Recommendation>& rs, const std::string& pod) {
  for (const auto& r : rs)
    if (r.key.workload == "Pod/" + pod) return r;
  static const Recommendation none;
  ADD_FAILURE() << "no recommendation for " << pod;
  return none;
}

constexpr int kTwoDays = 2 * 1440;

TEST(Recommend, ReclaimAnIdleGpuSavesItsWholePrice) {
  const auto h = Build(
      {{"idle", Unit("GPU-a"), 80, 1, [](int) { return 1.0; }, [](int) { return 0.0; }}}, kTwoDays);
  const auto rs = Recommend(h, Prices(), {});
  const auto& r = Of(rs, "idle");
  EXPECT_EQ(r.action, Action::kReclaim);
  EXPECT_EQ(r.current, "whole GPU");
  ASSERT_TRUE(r.monthly_savings);
  EXPECT_DOUBLE_EQ(*r.monthly_savings, 1.0 * 2.00 * 730);  // 1460 USD
  EXPECT_EQ(r.currency, "USD");
  EXPECT_NEAR(r.days, 2.0, 1e-9);
  EXPECT_NEAR(r.confidence, 2.0, 1e-9);
}

TEST(Recommend, ASmallWorkloadMovesToTheSmallestMigProfileThatFits) {
  // 6 GiB, 10 % of an H100: memory target 6.9 GiB ≤ 10 GiB (1/8), compute ≤ 1/7: 1g.10gb.
  const auto h =
      Build({{"small", Unit("GPU-a"), 80, 1, [](int) { return 6.0; }, [](int) { return 0.10; }}},
            kTwoDays);
  const auto rs = Recommend(h, Prices(), {});
  const auto& r = Of(rs, "small");
  EXPECT_EQ(r.action, Action::kMig) << r.reason;
  EXPECT_EQ(r.recommended, "MIG 1g.10gb");
  EXPECT_NEAR(r.recommended_gpu, 1.0 / 7, 1e-12);
  EXPECT_NEAR(*r.monthly_savings, (1 - 1.0 / 7) * 2.00 * 730, 1e-9);  // 1251.43 USD
  EXPECT_NEAR(r.memory_target_bytes, 6.0 * kGiB * 1.15, 6.0 * kGiB * 1.15 * 0.051)
      << "P95 of the daily peaks, one bucket up";
  // Memory beyond an eighth needs the doubled-memory 1g; compute beyond a slice needs more slices.
  const auto wide =
      Build({{"wide", Unit("GPU-a"), 80, 1, [](int) { return 15.0; }, [](int) { return 0.10; }}},
            kTwoDays);
  const auto rw = Recommend(wide, Prices(), {});
  EXPECT_EQ(Of(rw, "wide").recommended, "MIG 1g.20gb");
  const auto busy =
      Build({{"busy", Unit("GPU-a"), 80, 1, [](int) { return 6.0; }, [](int) { return 0.30; }}},
            kTwoDays);
  const auto rbusy = Recommend(busy, Prices(), {});
  EXPECT_EQ(Of(rbusy, "busy").recommended, "MIG 3g.40gb");
}

// 6 GiB and 10 % of an H100's SM time fit a 1g.10gb, but not its memory traffic: a profile's share
// of the bandwidth is its memory eighths. 30 % (target 34.5 %) needs 3/8 or more: the 3g.40gb's
// 4/8; 60 % (target 69 %) fits no profile below the whole GPU; 5 % still fits the 1g.10gb.
TEST(Recommend, AMemoryBoundWorkloadNeedsAProfileWithItsBandwidth) {
  auto at = [](double traffic) {
    Feed f{"m", Unit("GPU-a"), 80, 1, [](int) { return 6.0; }, [](int) { return 0.10; }};
    f.traffic = [traffic](int) { return std::optional<double>(traffic); };
    return Recommend(Build({f}, kTwoDays), Prices(), {});
  };
  const auto third = at(0.30);
  EXPECT_EQ(Of(third, "m").recommended, "MIG 3g.40gb") << Of(third, "m").reason;
  ASSERT_TRUE(Of(third, "m").traffic_p90);
  EXPECT_NEAR(*Of(third, "m").traffic_p90, 0.30, 0.30 * 0.051);
  EXPECT_NE(Of(third, "m").reason.find("memory traffic target"), std::string::npos);
  const auto most = at(0.60);
  EXPECT_EQ(Of(most, "m").action, Action::kKeep) << Of(most, "m").reason;
  EXPECT_EQ(Of(at(0.05), "m").recommended, "MIG 1g.10gb");
  // Not measured: SM time and memory decide, and the reason says the bandwidth was not checked.
  const auto unmeasured = Recommend(
      Build({{"u", Unit("GPU-a"), 80, 1, [](int) { return 6.0; }, [](int) { return 0.10; }}},
            kTwoDays),
      Prices(), {});
  EXPECT_EQ(Of(unmeasured, "u").recommended, "MIG 1g.10gb");
  EXPECT_FALSE(Of(unmeasured, "u").traffic_p90.has_value());
  EXPECT_NE(Of(unmeasured, "u").reason.find("not measured"), std::string::npos);
}

// Two workloads whose SM time and memory would share one L4 (as in the test above) do not when
// their memory traffic targets add up past the GPU's bandwidth (2 × 69 %); at 2 × 23 % they do.
TEST(Recommend, SharingKeepsTheSummedTrafficWithinOneGpu) {
  auto feed = [](const std::string& pod, const std::string& gpu, double traffic) {
    Feed f{pod, Unit(gpu, kL4), 22.5, 1, [](int) { return 8.0; }, [](int) { return 0.30; }};
    f.traffic = [traffic](int) { return std::optional<double>(traffic); };
    return f;
  };
  const auto quiet =
      Recommend(Build({feed("a", "GPU-a", 0.2), feed("b", "GPU-b", 0.2)}, kTwoDays), Prices(), {});
  EXPECT_EQ(Of(quiet, "a").action, Action::kShare) << Of(quiet, "a").reason;
  const auto loud =
      Recommend(Build({feed("a", "GPU-a", 0.6), feed("b", "GPU-b", 0.6)}, kTwoDays), Prices(), {});
  EXPECT_NE(Of(loud, "a").action, Action::kShare) << Of(loud, "a").reason;
  EXPECT_NE(Of(loud, "b").action, Action::kShare) << Of(loud, "b").reason;
}

TEST(Recommend, AnOversizedMigInstanceMovesToASmallerOne) {
  // On a 3g.40gb (3/7 of the GPU, 40 GiB): 8 GiB, and busy 20 % of the instance's time, which is
  // 0.2 × 3/7 = 0.086 of the GPU (the history scales a unit's compute by its fraction).
  const auto h = Build({{"mig", Unit("MIG-a", kH100, "3g.40gb", 3.0 / 7, domain::SharingMode::kMig),
                         40, 1, [](int) { return 8.0; }, [](int) { return 0.20; }}},
                       kTwoDays);
  const auto rs = Recommend(h, Prices(), {});
  const auto& r = Of(rs, "mig");
  EXPECT_EQ(r.current, "MIG 3g.40gb");
  EXPECT_EQ(r.action, Action::kMig) << r.reason;
  // GPU memory 40 × 8/4 = 80 GiB. The target (8 GiB × 1.15, one bucket up: ~9.7 GiB) is over a
  // 1g.10gb as counted (10 × 0.93 = 9.3 GiB): the 1g.20gb, the same one slice.
  EXPECT_EQ(r.recommended, "MIG 1g.20gb");
  EXPECT_NEAR(*r.monthly_savings, (3.0 / 7 - 1.0 / 7) * 2.00 * 730, 1e-9);
}

TEST(Recommend, WorkloadsThatFitTogetherShareOneGpu) {
  // Two L4s (no MIG), each workload 8 GiB and 30 %: together 18.4 of 22.5 GiB and 70 % of one.
  const auto h =
      Build({{"a", Unit("GPU-a", kL4), 22.5, 1, [](int) { return 8.0; }, [](int) { return 0.30; }},
             {"b", Unit("GPU-b", kL4), 22.5, 1, [](int) { return 8.0; }, [](int) { return 0.30; }}},
            kTwoDays);
  const auto rs = Recommend(h, Prices(), {});
  for (const char* pod : {"a", "b"}) {
    const auto& r = Of(rs, pod);
    EXPECT_EQ(r.action, Action::kShare) << r.reason;
    EXPECT_EQ(r.recommended, "time-slice (or MPS) one GPU with 2 replicas");
    EXPECT_DOUBLE_EQ(r.recommended_gpu, 0.5);
    EXPECT_NEAR(*r.monthly_savings, 0.5 * 0.80 * 730, 1e-9);  // 292 USD each: one L4 for the pair
    ASSERT_EQ(r.share_with.size(), 1u);
  }
  // On H100s, sharing wins only where MIG would cost more: two 20 GiB / 45 % workloads need a
  // 4g.40gb each (8/7 of a GPU apart), one GPU together.
  const auto big =
      Build({{"x", Unit("GPU-x"), 80, 1, [](int) { return 20.0; }, [](int) { return 0.45; }},
             {"y", Unit("GPU-y"), 80, 1, [](int) { return 20.0; }, [](int) { return 0.38; }}},
            kTwoDays);
  const auto rb = Recommend(big, Prices(), {});
  EXPECT_EQ(Of(rb, "x").action, Action::kShare) << Of(rb, "x").reason;
  EXPECT_EQ(Of(rb, "y").action, Action::kShare);
  // Two small ones are cheaper on 1g.10gb each (2/7) than on a shared GPU (1): MIG.
  const auto small =
      Build({{"p", Unit("GPU-p"), 80, 1, [](int) { return 5.0; }, [](int) { return 0.05; }},
             {"q", Unit("GPU-q"), 80, 1, [](int) { return 5.0; }, [](int) { return 0.05; }}},
            kTwoDays);
  const auto rsmall = Recommend(small, Prices(), {});
  EXPECT_EQ(Of(rsmall, "p").action, Action::kMig);
}

TEST(Recommend, ABusyGpuIsKeptAndAShortHistoryTellsNothing) {
  const auto busy =
      Build({{"busy", Unit("GPU-a"), 80, 1, [](int) { return 70.0; }, [](int) { return 0.9; }}},
            kTwoDays);
  const auto rs = Recommend(busy, Prices(), {});
  const auto& r = Of(rs, "busy");
  EXPECT_EQ(r.action, Action::kKeep);
  EXPECT_DOUBLE_EQ(*r.monthly_savings, 0.0);
  // Three hours of an idle GPU: too short to reclaim.
  const auto short_h =
      Build({{"new", Unit("GPU-a"), 80, 1, [](int) { return 1.0; }, [](int) { return 0.0; }}}, 180);
  const auto rshort = Recommend(short_h, Prices(), {});
  const auto& s = Of(rshort, "new");
  EXPECT_EQ(s.action, Action::kKeep);
  // In plain words: how much it has, how much it needs, how much more (it once said
  // "confidence 0.125 days (needs 1.000)").
  EXPECT_EQ(s.reason,
            "history too short to say: 180 minutes of use sampled; a recommendation needs 24 h "
            "(21 h more)");
  // With a shorter minimum it is reclaimed.
  RecommendOptions o;
  o.min_history_s = 3600;
  const auto rlonger = Recommend(short_h, Prices(), o);
  EXPECT_EQ(Of(rlonger, "new").action, Action::kReclaim);
}

TEST(Recommend, UnknownMinutesAreNotIdle) {
  // Busy for an hour, then the GPU is lost for two days: the lost minutes give no sample, so the
  // history is one hour long (keep: too short), never "idle for two days".
  const auto h = Build({{"w", Unit("GPU-a"), 80, 1, [](int) { return 10.0; },
                         [](int) { return 0.5; }, [](int m) { return m >= 60; }}},
                       kTwoDays);
  const auto rs = Recommend(h, Prices(), {});
  const auto& r = Of(rs, "w");
  EXPECT_EQ(r.samples, 60u);
  EXPECT_EQ(r.action, Action::kKeep) << r.reason;
}

TEST(Recommend, MinutesWhoseComputeWentUnmeasuredAreNotSamples) {
  // A third of every minute's use of a GPU could not be told apart (the driver lost samples):
  // too little for the unit to count as unread, but the pod's 10 % is only a lower bound. Two
  // days of such minutes are no history (keep), not a workload to move to a smaller share.
  Feed f{"blurred", Unit("GPU-a"), 80, 1, [](int) { return 6.0; }, [](int) { return 0.10; }};
  f.unknown_s = [](int) { return 20.0; };
  const auto rs = Recommend(Build({f}, kTwoDays), Prices(), {});
  const auto& r = Of(rs, "blurred");
  EXPECT_EQ(r.samples, 0u);
  EXPECT_EQ(r.action, Action::kKeep) << r.reason;
  // The same minutes measured are a full history, and the pod fits something smaller.
  f.unknown_s = [](int) { return 0.0; };
  const auto known = Of(Recommend(Build({f}, kTwoDays), Prices(), {}), "blurred");
  EXPECT_EQ(known.samples, static_cast<uint64_t>(kTwoDays));
  EXPECT_NE(known.action, Action::kKeep) << known.reason;
}

TEST(Recommend, WhatAWorkloadHoldsIsSaidInWordsNotAsACountOfUnits) {
  auto gib = [](int) { return 70.0; };
  auto busy = [](int) { return 0.9; };
  const auto two = Build(
      {{"trainer", Unit("GPU-a"), 80, 1, gib, busy}, {"trainer", Unit("GPU-b"), 80, 1, gib, busy}},
      60);
  EXPECT_EQ(Of(Recommend(two, Prices(), {}), "trainer").current, "2 whole GPUs");
  EXPECT_EQ(Of(Recommend(two, Prices(), {}), "trainer").current_code, "2xgpu");
  const auto mixed =
      Build({{"svc", Unit("GPU-a"), 80, 1, gib, busy},
             {"svc", Unit("MIG-1", kH100, "3g.40gb", 3.0 / 7, domain::SharingMode::kMig), 40, 1,
              [](int) { return 20.0; }, busy}},
            60);
  EXPECT_EQ(Of(Recommend(mixed, Prices(), {}), "svc").current, "MIG 3g.40gb + whole GPU");
  EXPECT_EQ(Of(Recommend(mixed, Prices(), {}), "svc").current_code, "gpu+mig-3g.40gb");
}

TEST(Recommend, AWorkloadThatIsGoneIsNotResized) {
  // An idle notebook deleted after a day; a busy trainer that goes on for another hour.
  const auto h =
      Build({{"gone", Unit("GPU-a"), 80, 1, [](int) { return 1.0; }, [](int) { return 0.0; },
              [](int) { return false; }, [](int m) { return m < 1440; }},
             {"busy", Unit("GPU-b"), 80, 1, [](int) { return 70.0; }, [](int) { return 0.9; }}},
            1440 + 60);
  const auto rs = Recommend(h, Prices(), {});
  for (const auto& r : rs)
    EXPECT_NE(r.key.workload, "Pod/gone") << ToString(r.action) << ": " << r.reason;
  EXPECT_EQ(rs.size(), 1u);
}

TEST(Recommend, AKeepSaysWhetherItFitsOrNeedsMore) {
  // A quarter of a time-sliced GPU, busy half the GPU's time: keep, but not "fits".
  const auto h = Build({{"hungry", Unit("GPU-a", kH100, "", 1, domain::SharingMode::kTimeSlicing),
                         80, 0.25, [](int) { return 10.0; }, [](int) { return 0.5; }}},
                       kTwoDays);
  const auto rs = Recommend(h, Prices(), {});
  const auto& r = Of(rs, "hungry");
  EXPECT_EQ(r.action, Action::kKeep);
  EXPECT_EQ(r.reason.rfind("needs more than it holds: compute target", 0), 0u) << r.reason;
  EXPECT_EQ(r.current, "1/4 of a time-sliced GPU");
  // The same share of an MPS GPU is named as such (the mode is carried, not compared as text).
  const auto mps = Build({{"hungry", Unit("GPU-a", kH100, "", 1, domain::SharingMode::kMps), 80,
                           0.25, [](int) { return 10.0; }, [](int) { return 0.5; }}},
                         kTwoDays);
  EXPECT_EQ(Of(Recommend(mps, Prices(), {}), "hungry").current, "1/4 of an MPS GPU");
}

TEST(Recommend, AModelWithoutAPriceHasUnknownSavings) {
  const auto h = Build(
      {{"t4", Unit("GPU-a", "Tesla T4"), 15, 1, [](int) { return 1.0; }, [](int) { return 0.0; }}},
      kTwoDays);
  auto p = cost::Pricing::Parse("gpu_models:\n  H100: 2.00\ndefaults: false\n", "test.yaml");
  ASSERT_TRUE(p) << p.error().message;
  const auto rs = Recommend(h, *p, {});
  const auto& r = Of(rs, "t4");
  EXPECT_EQ(r.action, Action::kReclaim);
  EXPECT_FALSE(r.monthly_savings) << "no price: unknown, not 0";
}

// Property: over random histories, no recommendation gives a workload less memory than the
// highest it used × (1 + margin).
TEST(Recommend, NeverBelowThePeakMemoryTimesTheMargin) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> base(0.5, 60), spike(1, 1.6), comp(0, 0.9);
  const auto prices = Prices();
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<Feed> feeds;
    const int n = 1 + trial % 4;
    for (int i = 0; i < n; ++i) {
      const double b = base(rng), s = spike(rng), c = comp(rng);
      const int spike_at = static_cast<int>(rng() % 2880);
      feeds.push_back({"w" + std::to_string(i), Unit("GPU-" + std::to_string(i)), 80, 1,
                       [=](int m) {
                         return m == spike_at ? std::min(79.0, b * s)
                                              : b * (0.8 + 0.2 * ((m * 7919) % 100) / 100.0);
                       },
                       [=](int m) { return c * ((m * 104729) % 100) / 100.0; }});
    }
    const auto histories = Build(feeds, kTwoDays);
    const auto rs = Recommend(histories, prices, {});
    // The highest memory each workload was fed, computed here from the feed, not from the history.
    std::map<std::string, double> fed_peak;
    for (const auto& f : feeds)
      for (int m = 0; m < kTwoDays; ++m)
        fed_peak["Pod/" + f.pod] = std::max(fed_peak["Pod/" + f.pod], f.memory_gib(m) * kGiB);
    for (const auto& r : rs) {
      const double floor = fed_peak.at(r.key.workload) * 1.15;
      EXPECT_GE(r.memory_target_bytes, floor * (1 - 1e-12)) << r.key.Name();
      if (r.action == Action::kMig) {
        const auto* table = MigModelFor(r.model);
        ASSERT_NE(table, nullptr);
        for (const auto& p : table->profiles) {
          if ("MIG " + p.name == r.recommended) {
            EXPECT_GE(MigProfileMemory(p, 80 * kGiB), floor)
                << r.key.Name() << " " << r.recommended;
          }
        }
      }
      if (r.action == Action::kShare) {
        double together = r.memory_target_bytes;
        for (const auto& other : r.share_with)
          for (const auto& o : rs)
            if (o.key.Name() == other) together += o.memory_target_bytes;
        EXPECT_LE(together, 80 * kGiB) << r.key.Name() << ": the sharers' targets exceed the GPU";
      }
      if (r.action == Action::kReclaim) {
        EXPECT_LT(histories.at(r.key).peak_compute, 0.02);
      }
    }
  }
}

}  // namespace
}  // namespace gpumeter::rightsize
