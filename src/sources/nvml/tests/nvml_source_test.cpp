// The NVML source over the fake libnvidia-ml.so.1, through the real dlopen path: every bundled
// scenario on every driver profile, checked against the scenario's ground truth.
#include "sources/nvml/nvml_gpu_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/scenario/loader.h"
#include "sim/scenario/truth.h"
#include "support/fake_nvml.h"

namespace gpumeter::nvml {
namespace {

using testing::FakeNvml;
using ::testing::HasSubstr;

scenario::Scenario LoadBundled(const std::string& name) {
  auto s = scenario::LoadScenarioFile(testing::ScenarioPath(name));
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

const gpu::DeviceSample* FindDevice(const gpu::GpuSnapshot& snap, const std::string& uuid) {
  for (const auto& d : snap.devices)
    if (d.uuid == uuid) return &d;
  return nullptr;
}

struct Case {
  std::string scenario, profile;
};

class EveryScenarioEveryProfile : public ::testing::TestWithParam<Case> {};

TEST_P(EveryScenarioEveryProfile, SampleMatchesGroundTruth) {
  const auto& [name, profile] = GetParam();
  const auto s = LoadBundled(name);
  constexpr double t = 120;  // node-8gpu: after the power-call fault, before GPU 7 is lost
  FakeNvml fake(profile, testing::ScenarioPath(name), t);
  ASSERT_TRUE(fake.ok());
  const bool has_mps = profile != "r418";  // MPS process lists arrived with R470
  const bool has_mig = profile != "r418";
  const bool mem_v2 = profile == "r580" || profile == "r535_43";
  const auto snap = fake.Sample();
  ASSERT_EQ(snap.devices.size(), s.gpus.size());
  for (const auto& g : s.gpus) {
    SCOPED_TRACE(g.uuid);
    const auto* d = FindDevice(snap, g.uuid);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->name, g.model);
    EXPECT_EQ(d->mig_enabled, g.mig_enabled && has_mig);
    ASSERT_TRUE(d->memory);
    EXPECT_EQ(d->memory->total_bytes, g.memory_bytes);
    uint64_t proc_bytes = 0;
    std::set<uint32_t> expected_pids;
    std::vector<std::string> units{g.uuid};
    for (const auto& m : g.mig_instances) units.push_back(m.uuid);
    for (const auto& u : units) {
      const auto truth = scenario::UnitAt(s, u, t);
      proc_bytes += truth.process_memory_bytes;
      for (const auto& pt : truth.processes)
        if (pt.process->list == scenario::ProcessList::kCompute || has_mps)
          expected_pids.insert(pt.process->pid);
    }
    if (mem_v2) {
      EXPECT_EQ(d->memory->reserved_bytes, g.reserved_bytes);
      EXPECT_EQ(d->memory->used_bytes, proc_bytes);
      EXPECT_EQ(d->memory->free_bytes, g.memory_bytes - g.reserved_bytes - proc_bytes);
    } else {
      EXPECT_FALSE(d->memory->reserved_bytes.has_value())
          << "v1 has no reserved field: unknown, not 0";
      EXPECT_EQ(d->memory->used_bytes, proc_bytes + g.reserved_bytes);  // v1 used includes reserved
    }
    ASSERT_TRUE(d->power_watts);
    EXPECT_NEAR(*d->power_watts, scenario::GpuPowerWattsAt(s, g, t), 0.001);
    ASSERT_TRUE(d->energy_joules);
    EXPECT_NEAR(*d->energy_joules, scenario::GpuEnergyJoulesAt(s, g, t), 0.001);
    std::set<uint32_t> seen;
    for (const auto& p : d->processes) seen.insert(p.pid);
    EXPECT_EQ(seen, expected_pids);
    for (const auto& p : d->processes) {
      ASSERT_TRUE(p.used_memory_bytes) << p.pid;
      if (g.mig_enabled && has_mig && profile != "r418") {
        EXPECT_TRUE(p.gpu_instance_id.has_value()) << p.pid;
      } else {
        EXPECT_FALSE(p.gpu_instance_id.has_value()) << p.pid;
      }
    }
    if (!g.mig_enabled) {
      ASSERT_TRUE(d->utilization_gpu_percent);
      EXPECT_NEAR(*d->utilization_gpu_percent, scenario::GpuBusyAt(s, g, t) * 100, 0.5);
    }
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (const char* s : testing::kBundledScenarios)
    for (const char* p : testing::kProfiles) out.push_back({s, p});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Fake, EveryScenarioEveryProfile, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           std::string n = p.param.scenario + "_" + p.param.profile;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(NvmlSource, CapabilitiesFollowTheDriverProfile) {
  const auto path = testing::ScenarioPath("exclusive");
  {
    FakeNvml f("r580", path);
    const auto& c = f.source().capabilities();
    EXPECT_THAT(c.process_api, HasSubstr("_v3 (24-byte"));
    EXPECT_EQ(c.memory_api, "nvmlDeviceGetMemoryInfo_v2");
    EXPECT_EQ(c.util_api, "nvmlDeviceGetProcessesUtilizationInfo");
    EXPECT_TRUE(c.gpm);
    EXPECT_TRUE(c.mig);
    EXPECT_EQ(c.driver_version, "580.65.06");
  }
  {
    FakeNvml f("r535_43", path);
    EXPECT_THAT(f.source().capabilities().process_api, HasSubstr("_v3 (32-byte"));
    EXPECT_EQ(f.source().capabilities().util_api, "nvmlDeviceGetProcessUtilization");
  }
  {
    FakeNvml f("r470", path);
    EXPECT_THAT(f.source().capabilities().process_api, HasSubstr("_v2 (24-byte"));
    EXPECT_EQ(f.source().capabilities().memory_api, "nvmlDeviceGetMemoryInfo");
    EXPECT_FALSE(f.source().capabilities().gpm);
  }
  {
    FakeNvml f("r418", path);
    EXPECT_THAT(f.source().capabilities().process_api, HasSubstr("(16-byte"));
    EXPECT_FALSE(f.source().capabilities().mig);
  }
}

TEST(NvmlSource, PerProcessSamplesMatchDutyOnBothUtilizationApis) {
  const auto s = LoadBundled("timeslice-h100");
  for (const char* profile : {"r580", "r535_43"}) {
    SCOPED_TRACE(profile);
    FakeNvml f(profile, testing::ScenarioPath("timeslice-h100"), 10);
    auto snap = f.Sample();
    f.SetTime(12);
    snap = f.Sample();  // window (10 s, 12 s]: 12 driver periods of 1/6 s
    ASSERT_EQ(snap.devices.size(), 1u);
    const auto& d = snap.devices[0];
    EXPECT_TRUE(d.process_utilization_supported);
    std::map<uint32_t, std::set<uint32_t>> by_pid;
    std::map<uint32_t, int> count;
    for (const auto& u : d.process_util) {
      by_pid[u.pid].insert(u.sm_percent);
      ++count[u.pid];
      EXPECT_GT(u.timestamp_us, d.process_util_window_start_us);
    }
    // Duties at t in (10, 12]: embedder 30 %, reranker 15 %, ctr-model 40 %.
    EXPECT_EQ(by_pid[52001], std::set<uint32_t>{30});
    EXPECT_EQ(by_pid[52107], std::set<uint32_t>{15});
    EXPECT_EQ(by_pid[53350], std::set<uint32_t>{40});
    for (const auto& [pid, n] : count) {
      EXPECT_NEAR(n, 12, 1) << pid;
    }
    // The next poll only gets samples newer than the last one seen.
    snap = f.Sample();
    EXPECT_TRUE(snap.devices[0].process_util.empty());
  }
}

// The fake driver keeps 64 periods of 1/6 s (10.7 s) of per-process samples, as a real driver
// keeps a fixed ring. Polled every 2 s, nothing is lost; polled after 15 s, the window's first
// 4.3 s are gone, and the source says so (lost samples were once silent). The ring first
// fills at 10.7 s of activity: the first long poll after that learns its span (a ring still
// growing is never taken for a lossy one), the next counts what it lost.
// A per-process utilization read that fails is no sample, not an idle window: that pass says it
// has none (the split is then an estimate, flagged), and the next read takes the samples the
// driver still holds from where the failed one began, so no busy period is skipped.
TEST(NvmlSource, AFailedPerProcessReadIsUnknownAndItsWindowIsReadNextTime) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  const auto path = testing::WriteTempScenario(
      text.str() +
          "\nfaults:\n  - {kind: call-error, call: nvmlDeviceGetProcessesUtilizationInfo, gpu: 0, "
          "code: 999, from_s: 11, to_s: 13}\n",
      "util-fault");
  FakeNvml f("r580", path, 10);
  f.Sample();
  f.SetTime(12);
  auto snap = f.Sample();
  ASSERT_EQ(snap.devices.size(), 1u);
  EXPECT_FALSE(snap.devices[0].process_utilization_supported) << "failed: no split this pass";
  EXPECT_TRUE(snap.devices[0].process_util.empty());
  bool recorded = false;
  for (const auto& e : snap.devices[0].errors)
    recorded = recorded || (e.call == "nvmlDeviceGetProcessesUtilizationInfo" && e.code == 999);
  EXPECT_TRUE(recorded);
  f.SetTime(14);  // recovered: the window reaches back to the last good read (10 s)
  snap = f.Sample();
  const auto& d = snap.devices[0];
  EXPECT_TRUE(d.process_utilization_supported);
  EXPECT_NEAR(
      static_cast<double>(d.process_util_window_end_us - d.process_util_window_start_us) / 1e6, 4,
      0.2);
  std::map<uint32_t, int> count;
  for (const auto& u : d.process_util) ++count[u.pid];
  EXPECT_NEAR(count[52001], 24, 1) << "4 s of 1/6 s periods: the failed pass's included";
}

TEST(NvmlSource, SamplesTheDriverNoLongerHeldAreCountedAsUncovered) {
  FakeNvml f("r580", testing::ScenarioPath("timeslice-h100"), 10);
  f.Sample();
  for (double t = 12; t <= 20; t += 2) {
    f.SetTime(t);
    const auto snap = f.Sample();
    ASSERT_EQ(snap.devices.size(), 1u);
    EXPECT_EQ(snap.devices[0].process_util_uncovered_us, 0u) << t;
  }
  f.SetTime(35);
  ASSERT_TRUE(f.Sample().devices[0].process_util_buffer_span_us);
  f.SetTime(50);
  const auto late = f.Sample();
  const auto& d = late.devices[0];
  ASSERT_TRUE(d.process_util_buffer_span_us);
  EXPECT_NEAR(static_cast<double>(*d.process_util_buffer_span_us) / 1e6, 64.0 / 6, 0.2);
  EXPECT_NEAR(static_cast<double>(d.process_util_uncovered_us) / 1e6, 15 - 64.0 / 6, 0.2);
  // Back to short polls: covered again.
  f.SetTime(51);
  EXPECT_EQ(f.Sample().devices[0].process_util_uncovered_us, 0u);
}

// A GPU idle since the agent's first read: each idle read starts the next
// window, so the first busy window is the last interval only. (It once reached back to the first
// read, and the shares were divided over all that time: the busy time went unattributed.)
TEST(NvmlSource, AnIdleGpusFirstBusyWindowStartsAtTheReadBefore) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  std::string late = text.str();
  // Every process starts at 60 s.
  for (size_t at = 0; (at = late.find("\n    container: ", at)) != std::string::npos;) {
    ++at;
    late.insert(at, "    start_s: 60\n");
    at += 40;
  }
  FakeNvml f("r580", testing::WriteTempScenario(late, "late-start"), 5);
  f.Sample();
  for (double t = 15; t <= 55; t += 10) {
    f.SetTime(t);
    EXPECT_TRUE(f.Sample().devices.at(0).process_util.empty()) << t;
  }
  f.SetTime(65);
  const auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  EXPECT_NEAR(static_cast<double>(d.process_util_window_start_us) / 1e6 -
                  static_cast<double>(snap.timestamp_us) / 1e6,
              -10, 0.2)
      << "the window starts at the read at 55 s, not at the first read";
  EXPECT_FALSE(d.process_util.empty());
}

// The driver's buffer (64 periods here) overflowed before any read had seen a sample in it: that
// it dropped some is not known, so the time before its oldest sample is uncovered, not idle.
TEST(NvmlSource, AGapBeforeTheBufferIsKnownIsUncoveredNotIdle) {
  FakeNvml f("r580", testing::ScenarioPath("timeslice-h100"), 0);
  f.Sample();  // the buffer is empty at 0 s: its span is not known
  f.SetTime(15);
  const auto snap = f.Sample();
  EXPECT_NEAR(static_cast<double>(snap.devices.at(0).process_util_uncovered_us) / 1e6,
              15 - 64.0 / 6, 0.2);
}

// One process busy at 50 % until 41 s, idle until 60 s, busy again; `extra` is appended.
std::string EmptyWindowScenario(const std::string& extra = "") {
  return std::string(R"(name: empty-window
description: One process busy until 41 s, idle until 60 s, then busy again.
node: n
duration_s: 120
gpus:
  - {index: 0, uuid: GPU-e0000001-0000-4000-8000-000000000001, model: NVIDIA H100 80GB HBM3, memory_mib: 81559, reserved_mib: 548, power: {idle_watts: 70, max_watts: 700}, gpm: true}
pods:
  - namespace: ns
    name: p
    uid: e0000000-0000-4000-8000-000000000001
    qos: Guaranteed
    containers:
      - {name: c, id: "containerd://e000000000000000000000000000000000000000000000000000000000000001", devices: [GPU-e0000001-0000-4000-8000-000000000001], requests: {nvidia.com/gpu: "1"}}
processes:
  - pid: 5100
    name: python
    container: ns/p/c
    usage:
      - {unit: GPU-e0000001-0000-4000-8000-000000000001, memory_mib: 1000, sm: [{at_s: 0, pct: 50}, {at_s: 41, pct: 0}, {at_s: 60, pct: 50}]}
)") + extra;
}

// A window with no sample at all, longer than the buffer: the buffer's emptiness says nothing was
// busy in its last 10.7 s, not before. The process is read at 31 s and then at 57 s: its last
// 10 s of busy time fell out of the buffer before the read (it was taken for idle time).
TEST(NvmlSource, AnEmptyWindowLongerThanTheBufferIsUncoveredNotIdle) {
  const std::string yaml = EmptyWindowScenario();
  FakeNvml f("r580", testing::WriteTempScenario(yaml, "empty-window"), 10);
  f.Sample();
  for (double t : {12.0, 14.0, 30.0, 31.0}) {  // 14 -> 30 overflows the buffer: its span is seen
    f.SetTime(t);
    f.Sample();
  }
  f.SetTime(57);
  const auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  EXPECT_TRUE(d.process_util.empty());
  EXPECT_NEAR(static_cast<double>(d.process_util_uncovered_us) / 1e6, 26 - 64.0 / 6, 0.2);
  // An empty window shorter than the buffer is idle time, known.
  f.SetTime(58);
  EXPECT_EQ(f.Sample().devices.at(0).process_util_uncovered_us, 0u);
  // Busy again from 60 s: a 4 s window whose first sample comes 2 s in lies within the span the
  // buffer was seen to hold, so its start was idle, not lost (it was counted as lost before).
  f.SetTime(62);
  const auto back = f.Sample();
  const auto& b = back.devices.at(0);
  EXPECT_FALSE(b.process_util.empty());
  EXPECT_EQ(b.process_util_uncovered_us, 0u);
  // Board power per period over the same window: idle power, then 70 + 630 × 0.5 W.
  ASSERT_FALSE(b.power_samples.empty());
  EXPECT_GT(b.power_samples.front().timestamp_us, b.process_util_window_start_us);
  EXPECT_NEAR(b.power_samples.front().watts, 70, 1e-3);
  EXPECT_NEAR(b.power_samples.back().watts, 385, 1e-3);
  EXPECT_NEAR(static_cast<double>(b.power_samples.size()), 4.0 * 6, 1);
}

// A failing power-sample read is recorded and leaves no samples (energy then follows time at the
// interval's mean power); the per-process samples are unaffected.
TEST(NvmlSource, AFailedPowerSampleReadIsRecordedAndGivesNoSamples) {
  FakeNvml f("r580",
             testing::WriteTempScenario(
                 EmptyWindowScenario("faults:\n  - {kind: call-error, call: nvmlDeviceGetSamples, "
                                     "gpu: 0, code: 999, from_s: 11, to_s: 13}\n"),
                 "power-fault"),
             10);
  f.Sample();
  f.SetTime(12);
  auto snap = f.Sample();
  const auto& d = snap.devices.at(0);
  EXPECT_TRUE(d.power_samples.empty());
  EXPECT_FALSE(d.process_util.empty());
  bool recorded = false;
  for (const auto& e : d.errors)
    recorded = recorded || (e.call == "nvmlDeviceGetSamples" && e.code == 999);
  EXPECT_TRUE(recorded);
  f.SetTime(14);  // recovered: the window's power samples are read again
  snap = f.Sample();
  EXPECT_NEAR(static_cast<double>(snap.devices.at(0).power_samples.size()), 2.0 * 6, 1);
  EXPECT_NEAR(snap.devices.at(0).power_samples.back().watts, 385, 1e-3);
}

// Samples the driver hands back wrong though the call succeeds are not power: 0 W, 9 kW, a stamp
// at or before the window's start, a value type other than milliwatts (recorded as a failed call).
// No sample gets through, and the per-process samples are unaffected; after the fault, samples
// come back.
TEST(NvmlSource, PowerSamplesTheDriverGetsWrongAreNotPower) {
  const char* const values[] = {"zero", "huge", "stale", "type"};
  for (const char* value : values) {
    FakeNvml f("r580",
               testing::WriteTempScenario(
                   EmptyWindowScenario(std::string("faults:\n  - {kind: bad-value, call: "
                                                   "nvmlDeviceGetSamples, gpu: 0, value: ") +
                                       value + ", from_s: 11, to_s: 13}\n"),
                   std::string("bad-power-") + value),
               10);
    f.Sample();
    f.SetTime(12);
    auto snap = f.Sample();
    const auto& d = snap.devices.at(0);
    EXPECT_TRUE(d.power_samples.empty()) << value;
    EXPECT_FALSE(d.process_util.empty()) << value;
    bool recorded = false;
    for (const auto& e : d.errors) recorded = recorded || e.call == "nvmlDeviceGetSamples";
    EXPECT_EQ(recorded, std::string(value) == "type") << value;
    f.SetTime(14);
    snap = f.Sample();
    EXPECT_FALSE(snap.devices.at(0).power_samples.empty()) << value;
    for (const auto& p : snap.devices.at(0).power_samples)
      EXPECT_TRUE(p.watts > 0 && p.watts < 5000) << value;
  }
}

// A count the driver reports sizes the next call's buffer, with headroom, up to a cap: a corrupt
// count (4e9 entries) costs a failed call, never gigabytes.
TEST(NvmlSource, ADriverReportedCountIsCappedWhenSizingABuffer) {
  EXPECT_EQ(nvml::DriverListEntries(3, 8, 128), 11u);
  EXPECT_EQ(nvml::DriverListEntries(0, 8, 128), 128u) << "0 may come with INSUFFICIENT_SIZE";
  EXPECT_EQ(nvml::DriverListEntries(4'000'000'000u, 8, 128), nvml::kMaxDriverListEntries);
  EXPECT_EQ(nvml::DriverListEntries(4'000'000'000u, 4'000'000'005ull, 5),
            nvml::kMaxDriverListEntries);
}

TEST(NvmlSource, FailingCallDegradesThatGpuOnly) {
  FakeNvml f("r580", testing::ScenarioPath("node-8gpu"), 30);  // power fails on GPU 1 in [0, 90)
  const auto snap = f.Sample();
  ASSERT_EQ(snap.devices.size(), 8u);
  EXPECT_FALSE(snap.devices[1].power_watts) << "a failed call is unknown, not 0";
  ASSERT_EQ(snap.devices[1].errors.size(), 1u);
  EXPECT_EQ(snap.devices[1].errors[0].call, "nvmlDeviceGetPowerUsage");
  EXPECT_EQ(snap.devices[1].errors[0].code, 999);
  EXPECT_EQ(snap.devices[1].errors[0].message, "Unknown Error");
  EXPECT_TRUE(snap.devices[1].memory);
  EXPECT_TRUE(snap.devices[0].power_watts);
  EXPECT_TRUE(snap.devices[0].errors.empty());
}

TEST(NvmlSource, LostGpuIsMarkedAndOthersContinue) {
  FakeNvml f("r580", testing::ScenarioPath("node-8gpu"), 230);  // GPU 7 lost from 240 s
  EXPECT_FALSE(f.Sample().devices[7].lost);
  f.SetTime(250);
  const auto snap = f.Sample();
  ASSERT_EQ(snap.devices.size(), 8u);
  const auto& lost = snap.devices[7];
  EXPECT_TRUE(lost.lost);
  // Even the UUID call fails on a lost GPU; the source names it from the earlier pass, and keeps
  // its model (what its holders' time is priced at).
  EXPECT_EQ(lost.uuid, "GPU-7e1d0007-aa10-4c2b-9e3f-5b6a7c8d9e07");
  EXPECT_EQ(lost.name, "NVIDIA H100 80GB HBM3");
  ASSERT_FALSE(lost.errors.empty());
  EXPECT_EQ(lost.errors[0].code, 15);
  EXPECT_FALSE(lost.memory);
  FakeNvml fresh("r580", testing::ScenarioPath("node-8gpu"), 250);
  EXPECT_TRUE(fresh.Sample().devices[7].uuid.empty()) << "lost before it was ever seen: unknown";
  for (int i = 0; i < 7; ++i) {
    EXPECT_FALSE(snap.devices[static_cast<size_t>(i)].lost) << i;
  }
}

TEST(NvmlSource, ReusedPidMovesToItsNewOwnerDevice) {
  const auto s = LoadBundled("node-8gpu");
  auto has_pid = [](const gpu::DeviceSample& d, uint32_t pid) {
    for (const auto& p : d.processes)
      if (p.pid == pid) return true;
    return false;
  };
  FakeNvml f("r580", testing::ScenarioPath("node-8gpu"), 50);
  auto snap = f.Sample();
  EXPECT_TRUE(has_pid(snap.devices[2], 90102));
  EXPECT_FALSE(has_pid(snap.devices[3], 90102));
  f.SetTime(200);
  snap = f.Sample();
  EXPECT_FALSE(has_pid(snap.devices[2], 90102));
  EXPECT_TRUE(has_pid(snap.devices[3], 90102));
}

TEST(NvmlSource, ForbiddenGpuIsSkippedNotFatal) {
  const auto path = testing::WriteTempScenario(R"(
name: forbidden
gpus:
  - {index: 0, uuid: GPU-a, model: T, memory_mib: 1000, power: {idle_watts: 1, max_watts: 2}, forbidden: true}
  - {index: 1, uuid: GPU-b, model: T, memory_mib: 1000, power: {idle_watts: 1, max_watts: 2}}
)",
                                               "forbidden");
  FakeNvml f("r580", path);
  const auto snap = f.Sample();
  ASSERT_EQ(snap.devices.size(), 1u);
  EXPECT_EQ(snap.devices[0].uuid, "GPU-b");
  ASSERT_EQ(snap.errors.size(), 1u);
  EXPECT_EQ(snap.errors[0].code, 4);
}

TEST(NvmlSource, NoLibraryNamesWhereItLookedAndPointsToDemo) {
  NvmlSourceOptions o;
  o.library_candidates = {"/nonexistent/libnvidia-ml.so.1", "libnvidia-ml-not-here.so.1"};
  auto src = NvmlGpuSource::Create(o);
  ASSERT_FALSE(src);
  EXPECT_EQ(src.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(src.error().message, HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  EXPECT_THAT(src.error().message, HasSubstr("libnvidia-ml-not-here.so.1"));
  EXPECT_THAT(src.error().message, HasSubstr("gpumeter demo"));
}

TEST(NvmlSource, DriverNotLoadedIsExplained) {
  ::unsetenv("GPUMETER_FAKE_NVML_SCENARIO");
  NvmlSourceOptions o;
  o.library_candidates = {testing::FakeNvmlPath("r580")};
  auto src = NvmlGpuSource::Create(o);
  ASSERT_FALSE(src);
  EXPECT_EQ(src.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(src.error().message, HasSubstr("Driver Not Loaded"));
  EXPECT_THAT(src.error().message, HasSubstr("kernel driver is not loaded"));
}

}  // namespace
}  // namespace gpumeter::nvml
