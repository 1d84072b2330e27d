// The monitoring calls NVML tools make, called raw as nvtop 3.0.1 makes them (its symbol list, its
// PCI fallbacks, its process loop), on every driver profile; and the values following the
// scenario: load, idleness, a thermal slowdown, MIG.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sources/nvml/nvml_abi.h"
#include "support/fake_nvml.h"
#include "support/paths.h"

namespace gpumeter::fake {
namespace {

using U = unsigned int;
using DevU = nvmlReturn_t (*)(nvmlDevice_t, U*);
using DevUU = nvmlReturn_t (*)(nvmlDevice_t, U, U*);
using DevUU2 = nvmlReturn_t (*)(nvmlDevice_t, U*, U*);
using ProcFn = nvmlReturn_t (*)(nvmlDevice_t, U*, void*);
using PciFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);

class Lib {
 public:
  Lib(const std::string& profile, const std::string& scenario_path, double t_s) {
    ::setenv("GPUMETER_FAKE_NVML_SCENARIO", scenario_path.c_str(), 1);
    handle_ = dlopen(testing::FakeNvmlPath(profile).c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle_, nullptr) << dlerror();
    if (!handle_) return;
    EXPECT_EQ(Fn<nvmlReturn_t (*)()>("nvmlInit")(), NVML_SUCCESS);
    Fn<void (*)(double)>("gpumeterFakeNvmlSetTime")(t_s);
  }
  ~Lib() {
    if (!handle_) return;
    (void)Fn<nvmlReturn_t (*)()>("nvmlShutdown")();
    dlclose(handle_);
  }
  void* Sym(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }
  template <typename F>
  F Fn(const char* name) const {
    void* p = Sym(name);
    EXPECT_NE(p, nullptr) << name;
    return reinterpret_cast<F>(p);
  }
  // The first of `names` the library has, as nvtop resolves its fallbacks.
  template <typename F>
  F First(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (void* p = Sym(n)) return reinterpret_cast<F>(p);
    ADD_FAILURE() << "none of " << *names.begin() << "…";
    return nullptr;
  }
  nvmlDevice_t Device(U i) const {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(Fn<nvmlReturn_t (*)(U, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex")(i, &d),
              NVML_SUCCESS);
    return d;
  }
  U Get(const char* name, nvmlDevice_t d) const {
    U v = 0;
    EXPECT_EQ(Fn<DevU>(name)(d, &v), NVML_SUCCESS) << name;
    return v;
  }
  U Get(const char* name, nvmlDevice_t d, U arg) const {
    U v = 0;
    EXPECT_EQ(Fn<DevUU>(name)(d, arg, &v), NVML_SUCCESS) << name << "(" << arg << ")";
    return v;
  }

 private:
  void* handle_ = nullptr;
};

// nvtop 3.0.1's required symbols (any one of a group; a miss turns its NVIDIA support off).
const std::vector<std::vector<const char*>> kNvtopSymbols = {
    {"nvmlInit_v2", "nvmlInit"},
    {"nvmlShutdown"},
    {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
    {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
    {"nvmlErrorString"},
    {"nvmlDeviceGetName"},
    {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
    {"nvmlDeviceGetMaxPcieLinkGeneration"},
    {"nvmlDeviceGetMaxPcieLinkWidth"},
    {"nvmlDeviceGetTemperatureThreshold"},
    {"nvmlDeviceGetClockInfo"},
    {"nvmlDeviceGetMaxClockInfo"},
    {"nvmlDeviceGetUtilizationRates"},
    {"nvmlDeviceGetMemoryInfo"},
    {"nvmlDeviceGetCurrPcieLinkGeneration"},
    {"nvmlDeviceGetCurrPcieLinkWidth"},
    {"nvmlDeviceGetPcieThroughput"},
    {"nvmlDeviceGetFanSpeed"},
    {"nvmlDeviceGetTemperature"},
    {"nvmlDeviceGetPowerUsage"},
    {"nvmlDeviceGetEnforcedPowerLimit"},
    {"nvmlDeviceGetEncoderUtilization"},
    {"nvmlDeviceGetDecoderUtilization"},
    {"nvmlDeviceGetGraphicsRunningProcesses"},
    {"nvmlDeviceGetComputeRunningProcesses"},
};

// nvtop's process loop: graphics then compute into one buffer of 16-byte entries, from capacity
// 0 and NULL, 16 entries more after each INSUFFICIENT_SIZE. It loops until the call succeeds, so a
// bound here stands for a hang there.
std::vector<nvmlProcessInfo_v1_t> NvtopProcesses(const Lib& lib, nvmlDevice_t d) {
  std::vector<nvmlProcessInfo_v1_t> all;
  for (const char* name :
       {"nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetComputeRunningProcesses"}) {
    const auto fn = lib.Fn<ProcFn>(name);
    std::vector<nvmlProcessInfo_v1_t> buf;
    for (int tries = 0;; ++tries) {
      if (tries == 50) {
        ADD_FAILURE() << name << " never succeeded: nvtop would loop forever";
        return all;
      }
      U count = static_cast<U>(buf.size());
      const nvmlReturn_t rc = fn(d, &count, buf.empty() ? nullptr : buf.data());
      if (rc == NVML_SUCCESS) {
        all.insert(all.end(), buf.begin(), buf.begin() + count);
        break;
      }
      EXPECT_EQ(rc, NVML_ERROR_INSUFFICIENT_SIZE) << name;
      buf.resize(buf.size() + 16);
    }
  }
  return all;
}

class Nvtop : public ::testing::TestWithParam<std::string> {};

// Every profile serves nvtop: all 25 symbols, a listing of each GPU by its PCI bus ID, memory with
// a non-zero total (nvtop divides by it unchecked), the process lists.
TEST_P(Nvtop, EverySymbolItNeedsAndItsLoopsEnd) {
  Lib lib(GetParam(), testing::ScenarioPath("node-8gpu"), 60);
  for (const auto& group : kNvtopSymbols) {
    bool found = false;
    for (const char* n : group) found = found || lib.Sym(n);
    EXPECT_TRUE(found) << group.front();
  }
  U count = 0;
  ASSERT_EQ(
      lib.First<nvmlReturn_t (*)(U*)>({"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"})(&count),
      NVML_SUCCESS);
  ASSERT_EQ(count, 8u);
  const auto pci = lib.First<PciFn>(
      {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"});
  std::set<std::string> bus_ids;
  size_t processes = 0;
  for (U i = 0; i < count; ++i) {
    const nvmlDevice_t d = lib.Device(i);
    nvmlPciInfo_t p{};
    ASSERT_EQ(pci(d, &p), NVML_SUCCESS);
    bus_ids.insert(p.busIdLegacy);
    EXPECT_EQ(p.pciDeviceId & 0xFFFF, 0x10DEu) << "NVIDIA's vendor ID";
    nvmlMemory_t m{};
    ASSERT_EQ(
        lib.Fn<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo")(d, &m),
        NVML_SUCCESS);
    EXPECT_GT(m.total, 0u);
    EXPECT_GT(lib.Get("nvmlDeviceGetTemperatureThreshold", d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN),
              lib.Get("nvmlDeviceGetTemperatureThreshold", d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN));
    for (U clock : {NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM}) {
      const U now = lib.Get("nvmlDeviceGetClockInfo", d, clock);
      EXPECT_GT(now, 0u);
      EXPECT_LE(now, lib.Get("nvmlDeviceGetMaxClockInfo", d, clock));
    }
    processes += NvtopProcesses(lib, d).size();
  }
  EXPECT_EQ(bus_ids.size(), 8u) << "one PCI bus ID per GPU";
  EXPECT_GT(processes, 5u);
}

INSTANTIATE_TEST_SUITE_P(EveryProfile, Nvtop, ::testing::Values("r580", "r535_43", "r470", "r418"));

// nvitop (nvidia-ml-py) starts with nvmlInitWithFlags, without a fallback, and finds devices by
// UUID; it reads the CUDA version and the management power limit.
TEST(Monitoring, NvitopsEntryPoints) {
  Lib lib("r580", testing::ScenarioPath("node-8gpu"), 60);
  ASSERT_EQ(lib.Fn<nvmlReturn_t (*)(U)>("nvmlInitWithFlags")(0), NVML_SUCCESS);
  int cuda = 0;
  ASSERT_EQ(lib.Fn<nvmlReturn_t (*)(int*)>("nvmlSystemGetCudaDriverVersion")(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 13000) << "the scenario's driver.cuda_version";
  using ByUuid = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
  nvmlDevice_t d = nullptr;
  ASSERT_EQ(
      lib.Fn<ByUuid>("nvmlDeviceGetHandleByUUID")("GPU-7e1d0003-aa10-4c2b-9e3f-5b6a7c8d9e03", &d),
      NVML_SUCCESS);
  EXPECT_EQ(d, lib.Device(3));
  nvmlDevice_t mig = nullptr;
  ASSERT_EQ(
      lib.Fn<ByUuid>("nvmlDeviceGetHandleByUUID")("MIG-7e1d00ff-bb20-5c3d-8f4e-6c7d8e9f0a02", &mig),
      NVML_SUCCESS);
  char uuid[96] = {};
  ASSERT_EQ(lib.Fn<nvmlReturn_t (*)(nvmlDevice_t, char*, U)>("nvmlDeviceGetUUID")(mig, uuid, 96),
            NVML_SUCCESS);
  EXPECT_STREQ(uuid, "MIG-7e1d00ff-bb20-5c3d-8f4e-6c7d8e9f0a02");
  EXPECT_EQ(lib.Fn<ByUuid>("nvmlDeviceGetHandleByUUID")("GPU-none", &d), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(lib.Get("nvmlDeviceGetPowerManagementLimit", lib.Device(0)), 700000u);
  (void)lib.Fn<nvmlReturn_t (*)()>("nvmlShutdown")();  // the second init's
}

// The legacy PCI entry points write only the 36 bytes every layout shares: a 52-byte struct of
// drivers before 415.13 is not overrun, and the shared part equals _v3's.
TEST(Monitoring, OlderPciCallsWriteTheSharedPrefixOnly) {
  Lib lib("r580", testing::ScenarioPath("timeslice-h100"), 10);
  const nvmlDevice_t d = lib.Device(0);
  nvmlPciInfo_t v3{};
  ASSERT_EQ(lib.Fn<PciFn>("nvmlDeviceGetPciInfo_v3")(d, &v3), NVML_SUCCESS);
  EXPECT_STREQ(v3.busId, "00000000:18:00.0");
  EXPECT_STREQ(v3.busIdLegacy, "0000:18:00.0");
  EXPECT_EQ(v3.pciDeviceId, 0x233010DEu) << "an H100 SXM5";
  for (const char* name : {"nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"}) {
    nvmlPciInfo_t old;
    std::memset(&old, 0xAB, sizeof old);
    ASSERT_EQ(lib.Fn<PciFn>(name)(d, &old), NVML_SUCCESS);
    EXPECT_EQ(std::memcmp(&old, &v3, kNvmlPciInfoLegacyPrefix), 0) << name;
    for (size_t i = kNvmlPciInfoLegacyPrefix; i < sizeof old; ++i)
      ASSERT_EQ(reinterpret_cast<unsigned char*>(&old)[i], 0xAB) << name << " wrote byte " << i;
  }
}

// Values follow the scenario: a busy GPU runs at its maximum clocks, warmer, on a full-speed PCIe
// link with traffic; an idle one at its idle clock, cool, its link at generation 1. A thermal
// slowdown (from 20 s) halves the clocks and heats the GPU past its slowdown threshold.
TEST(Monitoring, ValuesFollowLoadIdlenessAndSlowdown) {
  {
    Lib lib("r580", testing::ScenarioPath("node-8gpu"), 60);
    const nvmlDevice_t busy = lib.Device(0), idle = lib.Device(5);
    ASSERT_GT(lib.Get("nvmlDeviceGetPowerUsage", busy), 600000u) << "GPU 0 trains flat out";
    ASSERT_LE(lib.Get("nvmlDeviceGetPowerUsage", idle), 70000u) << "GPU 5 idles";
    EXPECT_EQ(lib.Get("nvmlDeviceGetClockInfo", busy, NVML_CLOCK_SM),
              lib.Get("nvmlDeviceGetMaxClockInfo", busy, NVML_CLOCK_SM));
    EXPECT_EQ(lib.Get("nvmlDeviceGetClockInfo", idle, NVML_CLOCK_GRAPHICS), 345u);
    EXPECT_GT(lib.Get("nvmlDeviceGetTemperature", busy, NVML_TEMPERATURE_GPU),
              lib.Get("nvmlDeviceGetTemperature", idle, NVML_TEMPERATURE_GPU) + 20);
    EXPECT_EQ(lib.Get("nvmlDeviceGetCurrPcieLinkGeneration", busy), 5u);
    EXPECT_EQ(lib.Get("nvmlDeviceGetCurrPcieLinkGeneration", idle), 1u);
    EXPECT_EQ(lib.Get("nvmlDeviceGetMaxPcieLinkGeneration", idle), 5u);
    EXPECT_EQ(lib.Get("nvmlDeviceGetMaxPcieLinkWidth", idle), 16u);
    EXPECT_GT(lib.Get("nvmlDeviceGetPcieThroughput", busy, NVML_PCIE_UTIL_RX_BYTES), 1000000u);
    EXPECT_EQ(lib.Get("nvmlDeviceGetPcieThroughput", idle, NVML_PCIE_UTIL_RX_BYTES), 0u);
    EXPECT_EQ(lib.Get("nvmlDeviceGetEnforcedPowerLimit", busy), 700000u);
    U fan = 0;
    EXPECT_EQ(lib.Fn<DevU>("nvmlDeviceGetFanSpeed")(busy, &fan), NVML_ERROR_NOT_SUPPORTED)
        << "a data-center board has no fan of its own";
    U pct = 0, period = 0;
    EXPECT_EQ(lib.Fn<DevUU2>("nvmlDeviceGetEncoderUtilization")(busy, &pct, &period), NVML_SUCCESS);
    EXPECT_EQ(pct, 0u);
    EXPECT_EQ(period, 166667u);
    const nvmlDevice_t mig = lib.Device(4);  // MIG on
    EXPECT_EQ(lib.Fn<DevUU2>("nvmlDeviceGetDecoderUtilization")(mig, &pct, &period),
              NVML_ERROR_NOT_SUPPORTED);
    nvmlDevice_t mig_handle = nullptr;
    ASSERT_EQ(lib.Fn<nvmlReturn_t (*)(nvmlDevice_t, U, nvmlDevice_t*)>(
                  "nvmlDeviceGetMigDeviceHandleByIndex")(mig, 0, &mig_handle),
              NVML_SUCCESS);
    U c = 0;
    EXPECT_EQ(lib.Fn<DevUU>("nvmlDeviceGetTemperature")(mig_handle, NVML_TEMPERATURE_GPU, &c),
              NVML_ERROR_NOT_SUPPORTED)
        << "asked of the parent";
    EXPECT_EQ(lib.Fn<DevUU>("nvmlDeviceGetTemperatureThreshold")(busy, 99, &c),
              NVML_ERROR_INVALID_ARGUMENT);
  }
  std::ifstream in(testing::ScenarioPath("timeslice-h100"));
  std::stringstream text;
  text << in.rdbuf();
  Lib lib("r580",
          testing::WriteTempScenario(
              text.str() +
                  "\nfaults:\n  - {kind: throttle, gpu: 0, from_s: 20, reasons: [hw_thermal]}\n",
              "hot"),
          10);
  const nvmlDevice_t d = lib.Device(0);
  const U cool_mhz = lib.Get("nvmlDeviceGetClockInfo", d, NVML_CLOCK_GRAPHICS);
  const U cool_c = lib.Get("nvmlDeviceGetTemperature", d, NVML_TEMPERATURE_GPU);
  lib.Fn<void (*)(double)>("gpumeterFakeNvmlSetTime")(25);
  EXPECT_EQ(lib.Get("nvmlDeviceGetClockInfo", d, NVML_CLOCK_GRAPHICS), cool_mhz / 2);
  const U hot_c = lib.Get("nvmlDeviceGetTemperature", d, NVML_TEMPERATURE_GPU);
  EXPECT_GT(hot_c,
            lib.Get("nvmlDeviceGetTemperatureThreshold", d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN));
  EXPECT_GT(hot_c, cool_c);
}

}  // namespace
}  // namespace gpumeter::fake
