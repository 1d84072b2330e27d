#include "sources/sampler/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "support/fake_nvml.h"

namespace gpumeter::sampler {
namespace {

TEST(Sampler, PublishesPassesOnItsOwnThread) {
  CallWatch watch;
  testing::FakeNvml fake("r580", testing::ScenarioPath("timeslice-h100"), 5, &watch);
  ASSERT_TRUE(fake.ok());
  Sampler sampler(fake.source(), watch,
                  {std::chrono::milliseconds(20), std::chrono::milliseconds(2000), {}, {}});
  EXPECT_FALSE(sampler.Health().latest) << "nothing before Start";
  sampler.Start();
  ASSERT_TRUE(sampler.WaitForPass(3, std::chrono::seconds(10)));
  const auto h = sampler.Health();
  ASSERT_TRUE(h.last_good);
  EXPECT_GE(h.passes, 3u);
  EXPECT_EQ(h.failures, 0u);
  EXPECT_EQ(h.last_good->snapshot.devices.size(), 1u);
  EXPECT_TRUE(h.stalled_call.empty());
  sampler.Stop();
  const auto passes = sampler.Health().passes;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(sampler.Health().passes, passes) << "no passes after Stop";
}

TEST(Sampler, HungCallIsReportedWhileReadersStayFree) {
  const auto path = testing::WriteTempScenario(R"(
name: hang
gpus:
  - {index: 0, uuid: GPU-a, model: T, memory_mib: 1000, power: {idle_watts: 1, max_watts: 2}}
faults:
  - {kind: delay, call: nvmlDeviceGetPowerUsage, gpu: 0, delay_ms: 1500}
)",
                                               "hang");
  CallWatch watch;
  testing::FakeNvml fake("r580", path, 0, &watch);
  ASSERT_TRUE(fake.ok());
  Sampler sampler(fake.source(), watch,
                  {std::chrono::milliseconds(50), std::chrono::milliseconds(200), {}, {}});
  sampler.Start();
  SamplerHealth h;
  for (int i = 0; i < 100 && h.stalled_call.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    h = sampler.Health();  // never blocks on the hung call
  }
  EXPECT_EQ(h.stalled_call, "nvmlDeviceGetPowerUsage");
  EXPECT_GE(h.deadline_exceeded, 1u);
  EXPECT_GT(h.stalled_seconds, 0.2);
  EXPECT_FALSE(h.last_good) << "the first pass is still stuck in the driver";
  // When the call returns, the pass is published and the stall clears.
  ASSERT_TRUE(sampler.WaitForPass(1, std::chrono::seconds(5)));
  h = sampler.Health();
  ASSERT_TRUE(h.last_good);
  EXPECT_TRUE(h.last_good->snapshot.devices[0].power_watts.has_value());
  sampler.Stop();
}

TEST(CallWatch, TracksTheCallInFlight) {
  CallWatch w;
  EXPECT_EQ(w.Current().call, nullptr);
  w.Begin("nvmlDeviceGetUUID");
  EXPECT_STREQ(w.Current().call, "nvmlDeviceGetUUID");
  EXPECT_GE(w.Current().elapsed.count(), 0);
  w.End();
  EXPECT_EQ(w.Current().call, nullptr);
}

// Counts the per-process utilization reads and passes them on to the sampler's watch.
class CountingWatch final : public gpu::CallObserver {
 public:
  explicit CountingWatch(CallWatch& watch) : watch_(watch) {}
  void Begin(const char* call) override {
    if (std::string(call) == "nvmlDeviceGetProcessesUtilizationInfo") ++util_reads;
    watch_.Begin(call);
  }
  void End() override { watch_.End(); }
  std::atomic<int> util_reads{0};

 private:
  CallWatch& watch_;
};

// With an interval longer than the drain interval, the source is drained between passes; with
// drain_interval 0, or an interval no longer than it, it is not.
TEST(Sampler, DrainsTheSourceBetweenLongPasses) {
  auto util_reads_per_pass = [](std::chrono::milliseconds interval,
                                std::chrono::milliseconds drain) {
    CallWatch watch;
    CountingWatch counting(watch);
    testing::FakeNvml fake("r580", testing::ScenarioPath("timeslice-h100"), 5, &counting);
    EXPECT_TRUE(fake.ok());
    SamplerOptions o{interval, std::chrono::milliseconds(2000), {}, {}};
    o.drain_interval = drain;
    Sampler sampler(fake.source(), watch, o);
    sampler.Start();
    EXPECT_TRUE(sampler.WaitForPass(4, std::chrono::seconds(20)));
    sampler.Stop();
    return static_cast<double>(counting.util_reads.load()) /
           static_cast<double>(sampler.Health().passes);
  };
  using std::chrono::milliseconds;
  // Three drains fit between passes 400 ms apart, each one read (a pass reads once or twice: the
  // fake's clock stands still, so some windows look like gaps and read the whole ring too).
  const double undrained = util_reads_per_pass(milliseconds(400), milliseconds(0));
  EXPECT_GE(util_reads_per_pass(milliseconds(400), milliseconds(100)), undrained + 2);
  EXPECT_LE(util_reads_per_pass(milliseconds(100), milliseconds(400)), undrained + 0.5);
}

// Each drain hands what it met to on_drain, on the sampling thread, between the passes: with
// passes 400 ms apart and drains every 100 ms, several per pass, none after Stop.
TEST(Sampler, HandsEachDrainsPidsToOnDrain) {
  CallWatch watch;
  testing::FakeNvml fake("r580", testing::ScenarioPath("timeslice-h100"), 5, &watch);
  ASSERT_TRUE(fake.ok());
  std::atomic<int> drains{0};
  std::atomic<bool> sorted{true};
  SamplerOptions o{std::chrono::milliseconds(400), std::chrono::milliseconds(2000), {}, {}};
  o.drain_interval = std::chrono::milliseconds(100);
  o.on_drain = [&](const std::vector<uint32_t>& pids) {
    ++drains;
    if (!std::is_sorted(pids.begin(), pids.end())) sorted = false;
  };
  Sampler sampler(fake.source(), watch, o);
  sampler.Start();
  ASSERT_TRUE(sampler.WaitForPass(3, std::chrono::seconds(20)));
  sampler.Stop();
  const int seen = drains.load();
  EXPECT_GE(seen, 4) << "about three drains fit between two passes";
  EXPECT_TRUE(sorted);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(drains.load(), seen) << "no drain after Stop";
}

}  // namespace
}  // namespace gpumeter::sampler
