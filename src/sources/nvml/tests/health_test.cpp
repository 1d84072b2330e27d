// The GPU's health calls through the real loading path, against the fake driver serving a
// scenario's health events, on every driver profile.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "sources/nvml/nvml_gpu_source.h"
#include "support/fake_nvml.h"

namespace gpumeter::nvml {
namespace {

// timeslice-h100 (one H100, index 0) with: hardware thermal slowdown 10-20 s; two uncorrected and
// five corrected ECC errors at 15 s; one row remapped for an uncorrectable error at 15 s, pending
// until the reset at 30 s.
std::string HealthScenario() {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  return testing::WriteTempScenario(
      text.str() +
          "\nfaults:\n"
          "  - {kind: throttle, gpu: 0, from_s: 10, to_s: 20, reasons: [hw_thermal, "
          "sw_power_cap]}\n"
          "  - {kind: ecc-error, gpu: 0, at_s: 15, type: uncorrected, count: 2}\n"
          "  - {kind: ecc-error, gpu: 0, at_s: 15, type: corrected, count: 5}\n"
          "  - {kind: row-remap, gpu: 0, at_s: 15, type: uncorrectable, rows: 1, pending: true, "
          "to_s: 30}\n",
      "health");
}

class Health : public ::testing::TestWithParam<std::string> {};

TEST_P(Health, ReasonsCountersAndRowsFollowTheScenario) {
  const std::string profile = GetParam();
  testing::FakeNvml f(profile, HealthScenario(), 5);
  auto at = [&](double t) {
    f.SetTime(t);
    auto snap = f.Sample();
    EXPECT_EQ(snap.devices.size(), 1u);
    return snap.devices.at(0);
  };
  const bool remapper = profile != "r418";  // nvmlDeviceGetRemappedRows from 450.51
  auto before = at(5);
  EXPECT_TRUE(before.errors.empty());
  ASSERT_TRUE(before.health.clock_event_reasons) << "old or new name, every release has one";
  EXPECT_EQ(*before.health.clock_event_reasons & ~nvmlClocksEventReasonGpuIdle, 0u);
  ASSERT_TRUE(before.health.ecc_uncorrected && before.health.ecc_corrected);
  EXPECT_EQ(*before.health.ecc_uncorrected, 0u);
  EXPECT_EQ(before.health.remapped_rows.has_value(), remapper);

  const auto during = at(16);
  EXPECT_EQ(*during.health.clock_event_reasons & ~nvmlClocksEventReasonGpuIdle,
            nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksEventReasonSwPowerCap);
  EXPECT_EQ(*during.health.ecc_uncorrected, 2u);
  EXPECT_EQ(*during.health.ecc_corrected, 5u);
  if (remapper) {
    EXPECT_EQ(during.health.remapped_rows->uncorrectable, 1u);
    EXPECT_EQ(during.health.remapped_rows->correctable, 0u);
    EXPECT_TRUE(during.health.remapped_rows->pending);
    EXPECT_FALSE(during.health.remapped_rows->failed);
  }
  const auto after = at(31);
  EXPECT_EQ(*after.health.clock_event_reasons & ~nvmlClocksEventReasonGpuIdle, 0u);
  EXPECT_EQ(*after.health.ecc_uncorrected, 2u) << "volatile counters keep counting";
  if (remapper) {
    EXPECT_FALSE(after.health.remapped_rows->pending) << "applied at the reset";
    EXPECT_EQ(after.health.remapped_rows->uncorrectable, 1u);
  }
  EXPECT_TRUE(after.errors.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryProfile, Health,
                         ::testing::Values("r580", "r535_43", "r470", "r418"));

// MIG on: rows cannot be read (NOT_SUPPORTED: unknown, no error); the rest still can.
TEST(HealthOnMig, RemappedRowsAreUnknownWhileMigIsOn) {
  testing::FakeNvml f("r580", testing::ScenarioPath("mig-h200"), 10);
  const auto snap = f.Sample();
  ASSERT_FALSE(snap.devices.empty());
  size_t mig = 0;
  for (const auto& d : snap.devices) {
    if (!d.mig_enabled) continue;
    ++mig;
    EXPECT_FALSE(d.health.remapped_rows);
    EXPECT_TRUE(d.health.clock_event_reasons && d.health.ecc_uncorrected);
    EXPECT_TRUE(d.errors.empty());
  }
  EXPECT_GT(mig, 0u);
}

// timeslice-h100's layout on a V100 (before Ampere: pages retire, rows do not remap): two pages
// retired for single-bit errors at 12 s, one for a double-bit error at 15 s pending until the
// reboot at 30 s.
std::string V100Scenario(const std::string& extra_faults = "") {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB"}, {"gpm: true", "gpm: false"}}) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
  }
  return testing::WriteTempScenario(
      s +
          "\nfaults:\n"
          "  - {kind: page-retire, gpu: 0, at_s: 12, cause: single-bit, pages: 2}\n"
          "  - {kind: page-retire, gpu: 0, at_s: 15, cause: double-bit, pages: 1, pending: true, "
          "to_s: 30}\n" +
          extra_faults,
      "v100");
}

class RetiredPages : public ::testing::TestWithParam<std::string> {};

TEST_P(RetiredPages, CountsAndPendingFollowTheScenarioBeforeAmpere) {
  testing::FakeNvml f(GetParam(), V100Scenario(), 5);
  auto at = [&](double t) {
    f.SetTime(t);
    const auto d = f.Sample().devices.at(0);
    EXPECT_TRUE(d.errors.empty()) << d.errors.front().call;
    EXPECT_FALSE(d.health.remapped_rows) << "a V100 has no row remapper";
    return d.health.retired_pages;
  };
  const auto before = at(5);
  ASSERT_TRUE(before) << "every release since R319 has the call";
  EXPECT_EQ(before->single_bit, 0u);
  EXPECT_EQ(before->double_bit, 0u);
  EXPECT_EQ(before->pending, std::optional<bool>(false));
  const auto during = at(16);
  ASSERT_TRUE(during);
  EXPECT_EQ(during->single_bit, 2u);
  EXPECT_EQ(during->double_bit, 1u);
  EXPECT_EQ(during->pending, std::optional<bool>(true));
  const auto after = at(31);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->double_bit, 1u) << "a retired page stays retired";
  EXPECT_EQ(after->pending, std::optional<bool>(false)) << "retired at the reboot";
}

INSTANTIATE_TEST_SUITE_P(EveryProfile, RetiredPages,
                         ::testing::Values("r580", "r535_43", "r470", "r418"));

TEST(RetiredPagesUnsupported, UnknownFromAmpereOnNeverZero) {
  testing::FakeNvml f("r580", HealthScenario(), 16);
  const auto d = f.Sample().devices.at(0);
  EXPECT_FALSE(d.health.retired_pages);
  EXPECT_TRUE(d.errors.empty()) << "NOT_SUPPORTED is a capability, not an error";
}

TEST(RetiredPagesFailure, AFailedCountIsUnknownAndRecordedAFailedPendingReadLeavesTheCounts) {
  {  // one fake at a time: the library (and its scenario) is loaded once per process
    testing::FakeNvml count_fails(
        "r580",
        V100Scenario(
            "  - {kind: call-error, call: nvmlDeviceGetRetiredPages, gpu: 0, code: 999}\n"),
        16);
    const auto d = count_fails.Sample().devices.at(0);
    EXPECT_FALSE(d.health.retired_pages);
    ASSERT_FALSE(d.errors.empty());
    EXPECT_EQ(d.errors.front().call, "nvmlDeviceGetRetiredPages");
  }

  testing::FakeNvml pending_fails(
      "r580",
      V100Scenario("  - {kind: call-error, call: nvmlDeviceGetRetiredPagesPendingStatus, gpu: 0, "
                   "code: 999}\n"),
      16);
  const auto e = pending_fails.Sample().devices.at(0);
  ASSERT_TRUE(e.health.retired_pages);
  EXPECT_EQ(e.health.retired_pages->double_bit, 1u);
  EXPECT_FALSE(e.health.retired_pages->pending) << "unknown, not 'not pending'";
  ASSERT_FALSE(e.errors.empty());
  EXPECT_EQ(e.errors.front().call, "nvmlDeviceGetRetiredPagesPendingStatus");
}

// INSUFFICIENT_SIZE without a count (the fault returns the code, writing nothing) is unknown,
// recorded with its own code; a GPU lost at the pending read is lost, and its pages unknown.
TEST(RetiredPagesFailure, NoCountIsUnknownAndALostGpuKeepsNothing) {
  {
    testing::FakeNvml f("r580",
                        V100Scenario("  - {kind: call-error, call: nvmlDeviceGetRetiredPages, "
                                     "gpu: 0, code: 7}\n"),
                        16);
    const auto d = f.Sample().devices.at(0);
    EXPECT_FALSE(d.health.retired_pages);
    ASSERT_FALSE(d.errors.empty());
    EXPECT_EQ(d.errors.front().call, "nvmlDeviceGetRetiredPages");
    EXPECT_EQ(d.errors.front().code, NVML_ERROR_INSUFFICIENT_SIZE);
  }
  testing::FakeNvml f("r580",
                      V100Scenario("  - {kind: call-error, call: "
                                   "nvmlDeviceGetRetiredPagesPendingStatus, gpu: 0, code: 15}\n"),
                      16);
  const auto d = f.Sample().devices.at(0);
  EXPECT_TRUE(d.lost);
  EXPECT_FALSE(d.health.retired_pages);
}

// A failed health call is recorded and leaves that part unknown, never 0.
TEST(HealthFailure, AFailedEccReadIsUnknownAndRecorded) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  testing::FakeNvml f(
      "r580",
      testing::WriteTempScenario(text.str() + "\nfaults:\n  - {kind: call-error, call: "
                                              "nvmlDeviceGetTotalEccErrors, gpu: 0, code: 999}\n",
                                 "ecc-fail"),
      10);
  const auto d = f.Sample().devices.at(0);
  EXPECT_FALSE(d.health.ecc_uncorrected);
  EXPECT_FALSE(d.health.ecc_corrected);
  bool recorded = false;
  for (const auto& e : d.errors) recorded = recorded || e.call == "nvmlDeviceGetTotalEccErrors";
  EXPECT_TRUE(recorded);
  EXPECT_TRUE(d.health.clock_event_reasons) << "the other calls still answer";
}

// XID events through the source's watcher thread: each delivered once, in the pass after it came,
// with its GPU instance where the driver gives one (r418's plain wait does not), stamped when
// received; the watcher says it waits; the source stops and joins it within a wait.
class Xids : public ::testing::TestWithParam<std::string> {};

TEST_P(Xids, EachEventComesOnceWithTheDeviceItNames) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  auto fake = std::make_unique<testing::FakeNvml>(
      GetParam(),
      testing::WriteTempScenario(text.str() +
                                     "\nfaults:\n  - {kind: xid, gpu: 0, at_s: 12, xid: 48}\n"
                                     "  - {kind: xid, gpu: 0, at_s: 12.5, xid: 13, gi: 2}\n",
                                 "xid-source"),
      10, nullptr, /*watch_xid=*/true);
  auto& f = *fake;
  const auto first = f.Sample();
  ASSERT_TRUE(first.xid_watch_ok.has_value());
  EXPECT_TRUE(*first.xid_watch_ok) << first.xid_watch_error;
  EXPECT_TRUE(first.devices.at(0).health.xid_events.empty());
  f.SetTime(13);
  std::vector<gpu::XidEvent> got;
  for (int i = 0; i < 200 && got.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto snap = f.Sample();
    const auto& x = snap.devices.at(0).health.xid_events;
    got.insert(got.end(), x.begin(), x.end());
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].xid, 48u);
  EXPECT_NEAR(
      static_cast<double>(got[0].seen_us) / 1e6 - static_cast<double>(first.timestamp_us) / 1e6, 3,
      0.01)
      << "stamped when received, on the source's clock (13 s; the first pass was at 10 s)";
  EXPECT_FALSE(got[0].gpu_instance_id);
  EXPECT_EQ(got[1].xid, 13u);
  EXPECT_EQ(got[1].gpu_instance_id.has_value(), GetParam() != "r418")
      << "the plain wait of drivers before 450.51 has no instance fields";
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_TRUE(f.Sample().devices.at(0).health.xid_events.empty()) << "each comes once";
  const auto stop = std::chrono::steady_clock::now();
  fake.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::milliseconds(1000))
      << "the watcher is joined within its wait";
}

INSTANTIATE_TEST_SUITE_P(Profiles, Xids, ::testing::Values("r580", "r418"));

// A GPU that falls off the bus fails every wait on the event set it is in: the source starts the
// watcher again on the GPUs still there, so an XID on another GPU afterwards is seen.
TEST(XidsAfterALostGpu, TheOtherGpusAreWatchedAgain) {
  std::ifstream in(testing::ScenarioPath("node-8gpu"));  // GPU 7 falls off the bus at 240 s
  std::stringstream text;
  text << in.rdbuf();
  testing::FakeNvml f("r580",
                      testing::WriteTempScenario(
                          text.str() + "  - {kind: xid, gpu: 0, at_s: 250, xid: 48}\n", "lost-xid"),
                      230, nullptr, /*watch_xid=*/true);
  ASSERT_TRUE(f.Sample().xid_watch_ok.value_or(false));
  f.SetTime(241);
  bool lost_seen = false;
  for (int i = 0; i < 100 && !lost_seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto snap = f.Sample();
    lost_seen = snap.devices.size() == 8 && snap.devices[7].lost;
  }
  ASSERT_TRUE(lost_seen);
  f.SetTime(251);
  std::vector<gpu::XidEvent> got;
  bool up = false;
  for (int i = 0; i < 200 && (got.empty() || !up); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto snap = f.Sample();
    const auto& x = snap.devices.at(0).health.xid_events;
    got.insert(got.end(), x.begin(), x.end());
    up = snap.xid_watch_ok.value_or(false);
  }
  ASSERT_EQ(got.size(), 1u) << "GPU 0's XID after GPU 7 was lost";
  EXPECT_EQ(got[0].xid, 48u);
  EXPECT_TRUE(up) << "waiting works again on the GPUs still there";
}

// The XID a GPU sends as it falls, received before the watcher is started again, is kept and
// delivered with the lost GPU.
TEST(XidsAfterALostGpu, TheEventBeforeTheFallIsKept) {
  std::ifstream in(testing::ScenarioPath("node-8gpu"));
  std::stringstream text;
  text << in.rdbuf();
  testing::FakeNvml f(
      "r580",
      testing::WriteTempScenario(text.str() + "  - {kind: xid, gpu: 7, at_s: 239.5, xid: 79}\n",
                                 "fall-xid"),
      230, nullptr, /*watch_xid=*/true);
  ASSERT_TRUE(f.Sample().xid_watch_ok.value_or(false));
  f.SetTime(239.7);  // the watcher receives XID 79; no pass takes it yet
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  f.SetTime(241);
  std::vector<gpu::XidEvent> got;
  for (int i = 0; i < 100 && got.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto snap = f.Sample();
    if (snap.devices.size() == 8) {
      const auto& x = snap.devices[7].health.xid_events;
      got.insert(got.end(), x.begin(), x.end());
    }
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].xid, 79u);
}

// With every GPU lost there is nothing to watch: the watch is reported down, not dropped.
TEST(XidsAfterALostGpu, EveryGpuLostIsAWatchDown) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  testing::FakeNvml f(
      "r580",
      testing::WriteTempScenario(
          text.str() + "\nfaults:\n  - {kind: gpu-lost, gpu: 0, from_s: 12}\n", "all-lost"),
      10, nullptr, /*watch_xid=*/true);
  ASSERT_TRUE(f.Sample().xid_watch_ok.value_or(false));
  f.SetTime(13);
  gpu::GpuSnapshot snap;
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snap = f.Sample();
    if (!snap.xid_watch_ok.value_or(true)) break;
  }
  ASSERT_TRUE(snap.xid_watch_ok.has_value()) << "gpumeter_xid_watch_up must stay, at 0";
  EXPECT_FALSE(*snap.xid_watch_ok);
}

// A wait that fails on the watcher's thread (a driver fault from 11 s to 14 s, and from 20 s): the
// source says
// the watch is down and why, loses no event (the XID at 12 s comes once the waits answer again),
// and a stop during the failures still joins within a wait.
TEST_P(Xids, AFailingWaitIsReportedAndTheEventsComeAfter) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string wait_call = GetParam() == "r418" ? "nvmlEventSetWait" : "nvmlEventSetWait_v2";
  auto fake = std::make_unique<testing::FakeNvml>(
      GetParam(),
      testing::WriteTempScenario(text.str() +
                                     "\nfaults:\n  - {kind: xid, gpu: 0, at_s: 12, xid: 48}\n"
                                     "  - {kind: call-error, call: " +
                                     wait_call + ", code: 999, from_s: 11, to_s: 14}\n" +
                                     "  - {kind: call-error, call: " + wait_call +
                                     ", code: 999, from_s: 20}\n",
                                 "xid-wait-fails"),
      10, nullptr, /*watch_xid=*/true);
  auto& f = *fake;
  ASSERT_TRUE(f.Sample().xid_watch_ok.value_or(false));
  // Into the failures before the XID: a wait begun at 10 s may still be running, and it would
  // deliver an event that came during it. Once a wait has failed, the next ones fail too.
  f.SetTime(11);
  gpu::GpuSnapshot down;
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    down = f.Sample();
    if (!down.xid_watch_ok.value_or(true)) break;
  }
  ASSERT_TRUE(down.xid_watch_ok.has_value());
  EXPECT_FALSE(*down.xid_watch_ok) << "the failing wait shows";
  EXPECT_NE(down.xid_watch_error.find("nvmlEventSetWait failed (999)"), std::string::npos)
      << down.xid_watch_error;
  f.SetTime(12);  // the XID comes while every wait fails
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(f.Sample().devices.at(0).health.xid_events.empty())
        << "no event while the waits fail";
  }
  f.SetTime(15);
  std::vector<gpu::XidEvent> got;
  bool up = false;
  for (int i = 0; i < 300 && (got.empty() || !up); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto snap = f.Sample();
    const auto& x = snap.devices.at(0).health.xid_events;
    got.insert(got.end(), x.begin(), x.end());
    up = snap.xid_watch_ok.value_or(false);
  }
  EXPECT_TRUE(up) << "the watch is up again once a wait answers";
  ASSERT_EQ(got.size(), 1u) << "the XID that came during the failures, once";
  EXPECT_EQ(got[0].xid, 48u);

  // Failing again from 20 s, then stopped: joined within a wait (50 ms here), back-off or not.
  f.SetTime(21);
  for (int i = 0; i < 200 && f.Sample().xid_watch_ok.value_or(false); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(f.Sample().xid_watch_ok.value_or(true)) << "failing when stopped";
  const auto stop = std::chrono::steady_clock::now();
  fake.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace gpumeter::nvml
