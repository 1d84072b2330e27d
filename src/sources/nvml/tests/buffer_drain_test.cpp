// Draining the driver's sample buffers between passes (NvmlGpuSource::Drain), through the real
// loading path against the fake driver, whose rings hold 64 periods of 1/6 s (10.7 s).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sources/nvml/nvml_gpu_source.h"
#include "support/fake_nvml.h"

namespace gpumeter::nvml {
namespace {

using testing::FakeNvml;

double Seconds(uint64_t us) { return static_cast<double>(us) / 1e6; }

std::string WithFault(const std::string& fault_yaml, const std::string& name) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  return testing::WriteTempScenario(text.str() + "\nfaults:\n" + fault_yaml, name);
}

// Polls at 10 and 12 s, then one at 35 s: the ring's span is learnt (a long read).
void Warm(FakeNvml& f) {
  f.Sample();
  f.SetTime(12);
  f.Sample();
  f.SetTime(35);
  ASSERT_TRUE(f.Sample().devices.at(0).process_util_buffer_span_us);
}

void DrainAt(FakeNvml& f, double t) {
  f.SetTime(t);
  f.source().Drain();
}

// Stamps strictly increasing: each drained or re-read period once.
template <typename T, typename F>
bool StrictlyIncreasing(const std::vector<T>& v, F stamp) {
  for (size_t i = 1; i < v.size(); ++i)
    if (stamp(v[i]) <= stamp(v[i - 1])) return false;
  return true;
}

// PID 52001 of timeslice-h100 is busy in every driver period: 6 samples a second.
size_t SamplesOf(const gpu::DeviceSample& d, uint32_t pid) {
  size_t n = 0;
  for (const auto& u : d.process_util) n += u.pid == pid;
  return n;
}

// A 15 s interval drained at 5 and 10 s loses nothing: every period's per-process sample and
// power sample is in the pass, each once, the window reaches back to the last pass. The same
// interval undrained loses its first 4.3 s (the ring holds 10.7 s): the set-up is a lossy one.
TEST(BufferDrain, ALongIntervalDrainedLosesNoSample) {
  FakeNvml f("r580", testing::ScenarioPath("timeslice-h100"), 10);
  Warm(f);
  DrainAt(f, 40);
  DrainAt(f, 45);
  f.SetTime(50);
  const auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  EXPECT_EQ(d.process_util_uncovered_us, 0u);
  EXPECT_TRUE(d.errors.empty());
  EXPECT_NEAR(Seconds(d.process_util_window_end_us - d.process_util_window_start_us), 15, 0.2);
  EXPECT_NEAR(static_cast<double>(SamplesOf(d, 52001)), 15 * 6, 1);
  // Power: one sample per period since the window's start, none twice.
  ASSERT_FALSE(d.power_samples.empty());
  EXPECT_TRUE(StrictlyIncreasing(d.power_samples, [](const auto& p) { return p.timestamp_us; }));
  EXPECT_LE(Seconds(d.power_samples.front().timestamp_us - d.process_util_window_start_us),
            1.0 / 6 + 0.01);
  EXPECT_GE(static_cast<double>(d.power_samples.size()), 15 * 6 - 1);

  f.SetTime(65);  // not drained
  const auto lossy = f.Sample();
  EXPECT_NEAR(Seconds(lossy.devices.at(0).process_util_uncovered_us), 15 - 64.0 / 6, 0.2);
}

// A drain that fails loses nothing: its error comes with the next pass, and the next drain reads
// from where the failed one began.
TEST(BufferDrain, AFailedDrainIsReportedAndLosesNothing) {
  FakeNvml f("r580",
             WithFault("  - {kind: call-error, call: nvmlDeviceGetProcessesUtilizationInfo, gpu: "
                       "0, code: 999, from_s: 39, to_s: 41}\n",
                       "drain-fault"),
             10);
  Warm(f);
  DrainAt(f, 40);  // fails
  DrainAt(f, 45);
  f.SetTime(50);
  const auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  int reported = 0;
  for (const auto& e : d.errors)
    reported += e.call == "nvmlDeviceGetProcessesUtilizationInfo" && e.code == 999;
  EXPECT_EQ(reported, 1) << "the drain's failure is the next pass's error, once";
  EXPECT_TRUE(d.process_utilization_supported) << "the pass's own read worked";
  EXPECT_EQ(d.process_util_uncovered_us, 0u);
  EXPECT_NEAR(static_cast<double>(SamplesOf(d, 52001)), 15 * 6, 1);
}

// A pass whose own read fails keeps its window open, and the drained samples with it: the next
// pass has all of them, from the last good pass on.
TEST(BufferDrain, DrainedSamplesWaitForAPassWhoseReadFailed) {
  FakeNvml f("r580",
             WithFault("  - {kind: call-error, call: nvmlDeviceGetProcessesUtilizationInfo, gpu: "
                       "0, code: 999, from_s: 49.5, to_s: 50.5}\n",
                       "pass-fault"),
             10);
  Warm(f);
  DrainAt(f, 40);
  DrainAt(f, 45);
  f.SetTime(50);
  const auto failed = f.Sample();
  EXPECT_FALSE(failed.devices.at(0).process_utilization_supported);
  EXPECT_TRUE(failed.devices.at(0).process_util.empty());
  DrainAt(f, 55);
  f.SetTime(60);
  const auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  EXPECT_TRUE(d.process_utilization_supported);
  EXPECT_EQ(d.process_util_uncovered_us, 0u);
  EXPECT_NEAR(Seconds(d.process_util_window_end_us - d.process_util_window_start_us), 25, 0.2);
  EXPECT_NEAR(static_cast<double>(SamplesOf(d, 52001)), 25 * 6, 1);
  EXPECT_TRUE(StrictlyIncreasing(d.power_samples, [](const auto& p) { return p.timestamp_us; }));
}

// Draining a source that has not sampled yet, or a MIG GPU (no per-process samples), does
// nothing, and the next pass is as without it; node-8gpu's GPUs without MIG are drained.
TEST(BufferDrain, NothingToDrainBeforeAPassAndOnlyPowerOnMig) {
  FakeNvml f("r580", testing::ScenarioPath("node-8gpu"), 10);
  f.source().Drain();
  const auto first = f.Sample();
  ASSERT_FALSE(first.devices.empty());
  f.SetTime(17);
  f.source().Drain();
  f.SetTime(24);
  f.source().Drain();
  f.SetTime(30);
  const auto snap = f.Sample();
  size_t mig = 0, whole = 0;
  for (const auto& d : snap.devices) {
    if (!d.mig_enabled) {
      // Drained at 17 and 24 s, read at 30 s: the 20 s window since the pass at 10 s is whole
      // (undrained, the 10.7 s ring would have lost 9.3 s of it).
      if (d.process_utilization_supported && !d.lost && !d.process_util.empty()) {
        ++whole;
        EXPECT_NEAR(Seconds(d.process_util_window_end_us - d.process_util_window_start_us), 20, 0.2)
            << d.uuid;
        EXPECT_EQ(d.process_util_uncovered_us, 0u) << d.uuid;
      }
      continue;
    }
    ++mig;
    // No per-process samples on MIG; board power is drained as on whole GPUs, so the pass at
    // 30 s has every driver period since the pass at 10 s (the ring holds only 10.7 s).
    EXPECT_TRUE(d.process_util.empty());
    EXPECT_TRUE(d.errors.empty());
    ASSERT_FALSE(d.power_samples.empty()) << d.uuid;
    EXPECT_GE(Seconds(d.power_samples.back().timestamp_us - d.power_samples.front().timestamp_us),
              19.5)
        << d.uuid;
    for (size_t k = 1; k < d.power_samples.size(); ++k)
      EXPECT_LT(Seconds(d.power_samples[k].timestamp_us - d.power_samples[k - 1].timestamp_us), 0.2)
          << d.uuid << ": a gap before sample " << k;
  }
  EXPECT_GT(mig, 0u);
  EXPECT_GT(whole, 0u);
}

// Two processes on one GPU: 6100 busy throughout, 6200 only until 12.5 s.
std::string ShortLivedScenario() {
  return R"(name: short-lived
description: One process busy throughout, another only until 12.5 s.
node: n
duration_s: 60
gpus:
  - {index: 0, uuid: GPU-d0000001-0000-4000-8000-000000000001, model: NVIDIA H100 80GB HBM3, memory_mib: 81559, reserved_mib: 548, power: {idle_watts: 70, max_watts: 700}, gpm: true}
pods:
  - namespace: ns
    name: p
    uid: d0000000-0000-4000-8000-000000000001
    qos: Guaranteed
    containers:
      - {name: c, id: "containerd://d000000000000000000000000000000000000000000000000000000000000001", devices: [GPU-d0000001-0000-4000-8000-000000000001], requests: {nvidia.com/gpu: "1"}}
processes:
  - pid: 6200
    name: python
    container: ns/p/c
    usage:
      - {unit: GPU-d0000001-0000-4000-8000-000000000001, memory_mib: 1000, sm: [{at_s: 0, pct: 40}, {at_s: 12.5, pct: 0}]}
  - pid: 6100
    name: python
    container: ns/p/c
    usage:
      - {unit: GPU-d0000001-0000-4000-8000-000000000001, memory_mib: 1000, sm_pct: 30}
)";
}

// Drain returns the PIDs of the per-process samples it read, sorted, each once: 6200's samples
// were read by the drain at 13 s, so the drain at 16 s does not return it although the driver's
// ring still holds them; the pass at 18 s still has them (drained, not lost).
TEST(BufferDrain, DrainReturnsThePidsOfTheSamplesItRead) {
  FakeNvml f("r580", testing::WriteTempScenario(ShortLivedScenario(), "short-lived"), 10);
  EXPECT_TRUE(f.source().Drain().empty()) << "nothing to drain before a pass";
  f.Sample();
  f.SetTime(13);
  EXPECT_EQ(f.source().Drain(), (std::vector<uint32_t>{6100, 6200}));
  f.SetTime(16);
  EXPECT_EQ(f.source().Drain(), (std::vector<uint32_t>{6100}));
  f.SetTime(18);
  const auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  EXPECT_GT(SamplesOf(d, 6200), 0u);
  EXPECT_GT(SamplesOf(d, 6100), SamplesOf(d, 6200));
  f.SetTime(21);
  EXPECT_EQ(f.source().Drain(), (std::vector<uint32_t>{6100}));
}

}  // namespace
}  // namespace gpumeter::nvml
