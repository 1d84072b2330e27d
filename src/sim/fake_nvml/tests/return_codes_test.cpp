// The fake's return codes against docs/nvml.md (the driver behaviour the agent must survive),
// called raw through dlsym, without gpumeter's source in between.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sources/nvml/nvml_abi.h"
#include "support/fake_nvml.h"
#include "support/paths.h"

namespace gpumeter::fake {
namespace {

class RawFake : public ::testing::Test {
 protected:
  void Open(const std::string& scenario, double t_s) {
    OpenPath(testing::ScenarioPath(scenario), t_s);
  }
  void OpenPath(const std::string& path, double t_s) {
    ::setenv("GPUMETER_FAKE_NVML_SCENARIO", path.c_str(), 1);
    handle_ = dlopen(testing::FakeNvmlPath("r580").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    t_ = t_s;
  }
  void TearDown() override {
    if (handle_) {
      for (; inits_ > 0; --inits_) (void)F<nvmlReturn_t (*)()>("nvmlShutdown")();
      dlclose(handle_);
    }
  }
  template <typename Fn>
  Fn F(const char* name) {
    auto* p = dlsym(handle_, name);
    EXPECT_NE(p, nullptr) << name;
    return reinterpret_cast<Fn>(p);
  }
  void Init() {
    ASSERT_EQ(F<nvmlReturn_t (*)()>("nvmlInit_v2")(), NVML_SUCCESS);
    ++inits_;
    F<void (*)(double)>("gpumeterFakeNvmlSetTime")(t_);
  }
  nvmlDevice_t Device(unsigned int i) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(
        F<nvmlReturn_t (*)(unsigned int, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2")(i, &d),
        NVML_SUCCESS);
    return d;
  }
  using ProcFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);
  using UtilFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*,
                                  unsigned long long);

  void* handle_ = nullptr;
  int inits_ = 0;
  double t_ = 0;
};

TEST_F(RawFake, InitIsReferenceCountedAndCallsBeforeInitFail) {
  Open("exclusive", 10);
  unsigned int n = 0;
  auto count = F<nvmlReturn_t (*)(unsigned int*)>("nvmlDeviceGetCount_v2");
  auto shutdown = F<nvmlReturn_t (*)()>("nvmlShutdown");
  EXPECT_EQ(count(&n), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(shutdown(), NVML_SUCCESS) << "extra shutdowns are tolerated";
  Init();
  Init();
  EXPECT_EQ(shutdown(), NVML_SUCCESS);
  --inits_;
  EXPECT_EQ(count(&n), NVML_SUCCESS) << "one init reference is still held";
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(shutdown(), NVML_SUCCESS);
  --inits_;
  EXPECT_EQ(count(&n), NVML_ERROR_UNINITIALIZED);
}

TEST_F(RawFake, RunningProcessesTwoCallPattern) {
  Open("timeslice-h100", 10);
  Init();
  auto fn = F<ProcFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  unsigned int n = 0;
  EXPECT_EQ(fn(Device(0), &n, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(n, 3u);
  nvmlProcessInfo_v2_t buf[3] = {};
  n = 2;
  EXPECT_EQ(fn(Device(0), &n, buf), NVML_ERROR_INSUFFICIENT_SIZE) << "capacity too small";
  EXPECT_EQ(n, 3u);
  n = 3;
  ASSERT_EQ(fn(Device(0), &n, buf), NVML_SUCCESS);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(buf[0].pid, 52001u);
  EXPECT_EQ(buf[0].usedGpuMemory, 12288ull << 20);
  EXPECT_EQ(buf[0].gpuInstanceId, 0xFFFFFFFFu) << "not MIG";
  // The v1 symbol writes 16-byte entries.
  nvmlProcessInfo_v1_t v1[3] = {};
  n = 3;
  ASSERT_EQ(F<ProcFn>("nvmlDeviceGetComputeRunningProcesses")(Device(0), &n, v1), NVML_SUCCESS);
  EXPECT_EQ(v1[1].pid, 52107u);
  EXPECT_EQ(v1[1].usedGpuMemory, 20480ull << 20);
}

TEST_F(RawFake, NoProcessesIsSuccessWithZero) {
  Open("node-8gpu", 1);  // GPU 6 has no process until 10 s
  Init();
  unsigned int n = 0;
  EXPECT_EQ(F<ProcFn>("nvmlDeviceGetComputeRunningProcesses_v3")(Device(6), &n, nullptr),
            NVML_SUCCESS);
  EXPECT_EQ(n, 0u);
}

TEST_F(RawFake, MemoryInfoVersionsAndReserved) {
  Open("exclusive", 0);
  Init();
  nvmlMemory_v2_t m2{};
  m2.version = 2;  // the literal the docs suggest; real drivers reject it with 13
  auto v2 = F<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*)>("nvmlDeviceGetMemoryInfo_v2");
  EXPECT_EQ(v2(Device(0), &m2), NVML_ERROR_FUNCTION_NOT_FOUND);
  m2.version = nvmlMemory_v2;
  ASSERT_EQ(v2(Device(0), &m2), NVML_SUCCESS);
  nvmlMemory_t m1{};
  ASSERT_EQ(
      F<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo")(Device(0), &m1),
      NVML_SUCCESS);
  EXPECT_EQ(m2.reserved, 912ull << 20);
  EXPECT_EQ(m2.used, 30000ull << 20);
  EXPECT_EQ(m1.used, m2.used + m2.reserved) << "v1 used includes the reservation";
  EXPECT_EQ(m1.used + m1.free, m1.total);
  EXPECT_EQ(m2.reserved + m2.used + m2.free, m2.total);
}

TEST_F(RawFake, ProcessUtilizationSemantics) {
  Open("timeslice-h100", 20);
  Init();
  auto fn = F<UtilFn>("nvmlDeviceGetProcessUtilization");
  unsigned int n = 0;
  EXPECT_EQ(fn(Device(0), nullptr, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_GT(n, 0u);
  std::vector<nvmlProcessUtilizationSample_t> buf(n);
  ASSERT_EQ(fn(Device(0), buf.data(), &n, 0), NVML_SUCCESS);
  const auto now_us = static_cast<unsigned long long>(testing::WallUs());
  unsigned long long newest = 0;
  for (unsigned int i = 0; i < n; ++i) {
    EXPECT_GT(buf[i].smUtil, 0u) << "only busy processes get samples";
    newest = std::max(newest, buf[i].timeStamp);
  }
  // Epoch microseconds: the fake's t=20 s lies ~20 s after the wall clock at its init.
  EXPECT_NEAR(static_cast<double>(newest), static_cast<double>(now_us) + 20e6, 5e6);
  n = 0;
  EXPECT_EQ(fn(Device(0), nullptr, &n, newest), NVML_ERROR_NOT_FOUND)
      << "nothing newer than lastSeen";
}

TEST_F(RawFake, MigGpuRejectsUtilizationQueries) {
  Open("mig-h200", 5);
  Init();
  unsigned int n = 0;
  EXPECT_EQ(F<UtilFn>("nvmlDeviceGetProcessUtilization")(Device(0), nullptr, &n, 0),
            NVML_ERROR_NOT_SUPPORTED);
  nvmlUtilization_t u{};
  EXPECT_EQ(F<nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*)>("nvmlDeviceGetUtilizationRates")(
                Device(0), &u),
            NVML_ERROR_NOT_SUPPORTED);
  nvmlDevice_t mig = nullptr;
  auto by_index = F<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*)>(
      "nvmlDeviceGetMigDeviceHandleByIndex");
  ASSERT_EQ(by_index(Device(0), 0, &mig), NVML_SUCCESS);
  EXPECT_EQ(by_index(Device(0), 5, &mig), NVML_ERROR_NOT_FOUND)
      << "4 instances: no MIG device at index 5";
  // Processes on the parent carry their GPU instance ids.
  nvmlProcessInfo_v2_t buf[8] = {};
  n = 8;
  ASSERT_EQ(F<ProcFn>("nvmlDeviceGetComputeRunningProcesses_v3")(Device(0), &n, buf), NVML_SUCCESS);
  ASSERT_EQ(n, 2u);  // the notebook starts at 30 s
  EXPECT_EQ(buf[0].gpuInstanceId, 1u);
}

TEST_F(RawFake, GpmReadsOnlyNumMetricsAndReportsPerMetric) {
  Open("timeslice-h100", 10);
  Init();
  auto alloc = F<nvmlReturn_t (*)(nvmlGpmSample_t*)>("nvmlGpmSampleAlloc");
  auto get = F<nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t)>("nvmlGpmSampleGet");
  auto release = F<nvmlReturn_t (*)(nvmlGpmSample_t)>("nvmlGpmSampleFree");
  nvmlGpmSample_t a = nullptr, b = nullptr;
  ASSERT_EQ(alloc(&a), NVML_SUCCESS);
  ASSERT_EQ(alloc(&b), NVML_SUCCESS);
  ASSERT_EQ(get(Device(0), a), NVML_SUCCESS);
  F<void (*)(double)>("gpumeterFakeNvmlSetTime")(12);
  ASSERT_EQ(get(Device(0), b), NVML_SUCCESS);
  auto m = std::make_unique<nvmlGpmMetricsGet_t>();
  *m = {};
  m->version = 1;
  m->numMetrics = 2;
  m->sample1 = a;
  m->sample2 = b;
  m->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
  m->metrics[1].metricId = 5;  // ANY_TENSOR_UTIL: not modelled
  m->metrics[2].metricId = NVML_GPM_METRIC_SM_UTIL;
  m->metrics[2].nvmlReturn = 4242;  // beyond numMetrics: must stay untouched
  ASSERT_EQ(F<nvmlReturn_t (*)(nvmlGpmMetricsGet_t*)>("nvmlGpmMetricsGet")(m.get()), NVML_SUCCESS);
  EXPECT_EQ(m->metrics[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_NEAR(m->metrics[0].value, 85.0, 1e-9);
  EXPECT_EQ(m->metrics[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(m->metrics[2].nvmlReturn, 4242);
  EXPECT_EQ(release(a), NVML_SUCCESS);
  EXPECT_EQ(release(b), NVML_SUCCESS);
}

TEST_F(RawFake, PreHopperHasNoGpm) {
  Open("exclusive", 1);  // A100
  Init();
  nvmlGpmSupport_t s{};
  s.version = 1;
  s.isSupportedDevice = 7;
  ASSERT_EQ(F<nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSupport_t*)>("nvmlGpmQueryDeviceSupport")(
                Device(0), &s),
            NVML_SUCCESS);
  EXPECT_EQ(s.isSupportedDevice, 0u);
}

TEST_F(RawFake, LostGpuFailsEveryDeviceCall) {
  Open("node-8gpu", 300);
  Init();
  const nvmlDevice_t d = Device(7);
  char buf[96];
  EXPECT_EQ(F<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int)>("nvmlDeviceGetUUID")(d, buf,
                                                                                        sizeof buf),
            NVML_ERROR_GPU_IS_LOST);
  unsigned int mw = 0;
  EXPECT_EQ(F<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)>("nvmlDeviceGetPowerUsage")(d, &mw),
            NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(
      F<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)>("nvmlDeviceGetPowerUsage")(Device(6), &mw),
      NVML_SUCCESS);
}

TEST_F(RawFake, StringBuffersAndErrorStrings) {
  Open("exclusive", 0);
  Init();
  char small[8];
  EXPECT_EQ(F<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int)>("nvmlDeviceGetUUID")(
                Device(0), small, sizeof small),
            NVML_ERROR_INSUFFICIENT_SIZE);
  auto err = F<const char* (*)(nvmlReturn_t)>("nvmlErrorString");
  EXPECT_STREQ(err(15), "GPU is lost");
  ASSERT_NE(err(12345), nullptr);
  EXPECT_STREQ(err(12345), "Unknown Error");
}

// XID events: registration refuses a mask with any unsupported bit (and registers nothing), a set
// gets each event at or after its registration once, the plain wait writes the 24-byte layout,
// a set made later sees nothing earlier, and a freed set is refused.
TEST_F(RawFake, XidEventsAreDeliveredOnceToSetsRegisteredBefore) {
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  OpenPath(testing::WriteTempScenario(text.str() +
                                          "\nfaults:\n  - {kind: xid, gpu: 0, at_s: 12, xid: 48}\n"
                                          "  - {kind: xid, gpu: 0, at_s: 14, xid: 31, gi: 3}\n",
                                      "xid-raw"),
           10);
  Init();
  auto create = F<nvmlReturn_t (*)(nvmlEventSet_t*)>("nvmlEventSetCreate");
  auto free_set = F<nvmlReturn_t (*)(nvmlEventSet_t)>("nvmlEventSetFree");
  auto supported =
      F<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetSupportedEventTypes");
  auto reg = F<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t)>(
      "nvmlDeviceRegisterEvents");
  using WaitFn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
  auto wait_v2 = F<WaitFn>("nvmlEventSetWait_v2");
  auto wait = F<WaitFn>("nvmlEventSetWait");
  auto set_time = F<void (*)(double)>("gpumeterFakeNvmlSetTime");
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(create(&set), NVML_SUCCESS);
  const nvmlDevice_t d = Device(0);
  unsigned long long types = 0;
  ASSERT_EQ(supported(d, &types), NVML_SUCCESS);
  EXPECT_TRUE(types & nvmlEventTypeXidCriticalError);
  EXPECT_EQ(reg(d, nvmlEventTypeXidCriticalError | 0x10, set), NVML_ERROR_NOT_SUPPORTED);
  nvmlEventData_t e{};
  set_time(13);
  EXPECT_EQ(wait_v2(set, &e, 0), NVML_ERROR_TIMEOUT) << "nothing was registered";
  ASSERT_EQ(reg(d, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  EXPECT_EQ(wait_v2(set, &e, 0), NVML_ERROR_TIMEOUT) << "the XID at 12 s came before";
  set_time(10);
  nvmlEventSet_t early = nullptr;
  ASSERT_EQ(create(&early), NVML_SUCCESS);
  ASSERT_EQ(reg(d, nvmlEventTypeXidCriticalError, early), NVML_SUCCESS);
  set_time(13);
  ASSERT_EQ(wait_v2(early, &e, 0), NVML_SUCCESS);
  EXPECT_EQ(e.device, d);
  EXPECT_EQ(e.eventType, nvmlEventTypeXidCriticalError);
  EXPECT_EQ(e.eventData, 48u);
  EXPECT_EQ(e.gpuInstanceId, kNvmlNoInstanceId);
  EXPECT_EQ(wait_v2(early, &e, 20), NVML_ERROR_TIMEOUT) << "delivered once";
  set_time(15);
  std::memset(&e, 0xAB, sizeof e);
  ASSERT_EQ(wait(early, &e, 0), NVML_SUCCESS);
  EXPECT_EQ(e.eventData, 31u);
  EXPECT_EQ(e.gpuInstanceId, 0xABABABABu) << "the plain call writes 24 bytes";
  EXPECT_EQ(wait_v2(set, &e, 0), NVML_SUCCESS) << "the later set got the XID at 14 s";
  EXPECT_EQ(e.gpuInstanceId, 3u);
  EXPECT_EQ(free_set(early), NVML_SUCCESS);
  EXPECT_EQ(free_set(early), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wait_v2(early, &e, 0), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(free_set(set), NVML_SUCCESS);
}

}  // namespace
}  // namespace gpumeter::fake
