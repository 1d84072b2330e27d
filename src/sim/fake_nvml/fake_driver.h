// The driver that the fake libnvidia-ml.so.1 emulates: it serves a scenario (named by
// GPUMETER_FAKE_NVML_SCENARIO) with the real driver's return codes and quirks (docs/nvml.md).
// Time is the scenario's: seconds since the first nvmlInit, times GPUMETER_FAKE_NVML_SPEEDUP, or
// set by hand through gpumeterFakeNvmlSetTime(). All methods are thread-safe (one mutex), as NVML
// is. The exported C functions (exports.cpp) forward here; nothing else is in the library.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "sim/scenario/model.h"
#include "sim/scenario/truth.h"
#include "sources/nvml/nvml_abi.h"

// Opaque to callers; the fake hands out pointers to these.
struct nvmlDevice_st {
  size_t gpu = 0;  // position in Scenario::gpus
  int mig = -1;    // position in Gpu::mig_instances, or -1 for the physical GPU
};
struct nvmlGpuInstance_st {
  size_t gpu = 0;  // position in Scenario::gpus
  size_t mig = 0;  // position in Gpu::mig_instances
};
struct nvmlEventSet_st {
  std::map<size_t, double> registered;  // GPU position -> when its XIDs were registered
  std::set<size_t> delivered;           // positions in Scenario::faults already delivered
  bool freed = false;
};
struct nvmlGpmSample_st {
  nvmlDevice_t device = nullptr;
  int gi = -1;      // GPU instance id for nvmlGpmMigSampleGet, else -1
  double t_s = -1;  // when it was taken; -1: never filled
};

namespace gpumeter::fake {

// What a driver release exports and how its quirks look (one per built library).
struct Profile {
  const char* name;
  size_t v3_stride;  // bytes per entry written by *RunningProcesses_v3
};
const Profile& ActiveProfile();  // defined per built library (profile_*.cpp)

// The driver samples per-process utilization (and board power) about every 1/6 s and keeps a
// rolling buffer of the last 64 periods (10.7 s).
inline constexpr double kUtilPeriodS = 1.0 / 6.0;
inline constexpr long kUtilBufferPeriods = 64;

class FakeDriver {
 public:
  nvmlReturn_t Init();
  nvmlReturn_t Shutdown();
  void SetTime(double t_s);

  // Every device call starts here: init, handle, GPU-lost and injected faults.
  nvmlReturn_t Enter(const char* call, nvmlDevice_t device);
  nvmlReturn_t EnterSystem(const char* call);

  nvmlReturn_t DriverVersion(char* buf, unsigned int len);
  nvmlReturn_t NvmlVersion(char* buf, unsigned int len);
  nvmlReturn_t Count(unsigned int* count);
  nvmlReturn_t HandleByIndex(unsigned int index, nvmlDevice_t* out);
  nvmlReturn_t Uuid(nvmlDevice_t d, char* buf, unsigned int len);
  nvmlReturn_t Name(nvmlDevice_t d, char* buf, unsigned int len);
  nvmlReturn_t Memory(nvmlDevice_t d, unsigned long long* total, unsigned long long* reserved,
                      unsigned long long* used, bool v2);
  nvmlReturn_t Utilization(nvmlDevice_t d, nvmlUtilization_t* u);
  nvmlReturn_t Power(nvmlDevice_t d, unsigned int* mw);
  nvmlReturn_t Energy(nvmlDevice_t d, unsigned long long* mj);
  nvmlReturn_t ComputeMode(nvmlDevice_t d, int* mode);
  // Writes entries of `stride` bytes (16, 24 or 32); mps selects the MPS client list.
  nvmlReturn_t Processes(nvmlDevice_t d, bool mps, unsigned int* count, void* buf, size_t stride);
  nvmlReturn_t ProcessUtil(nvmlDevice_t d, unsigned long long last_seen_us, unsigned int* count,
                           nvmlProcessUtilizationSample_t* samples);
  nvmlReturn_t ProcessesUtilInfo(nvmlDevice_t d, nvmlProcessesUtilizationInfo_v1_t* info);
  // nvmlDeviceGetSamples: board power only (TOTAL_POWER_SAMPLES, mW), one sample per driver
  // period of the same ring as per-process samples, the period's mean power (fake_samples.cpp).
  nvmlReturn_t Samples(nvmlDevice_t d, nvmlSamplingType_t type, unsigned long long last_seen_us,
                       nvmlValueType_t* value_type, unsigned int* count, nvmlSample_t* samples);
  nvmlReturn_t MigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending);
  nvmlReturn_t MaxMigCount(nvmlDevice_t d, unsigned int* count);
  nvmlReturn_t MigHandle(nvmlDevice_t d, unsigned int index, nvmlDevice_t* out);
  nvmlReturn_t InstanceId(nvmlDevice_t d, bool compute, unsigned int* id);
  // GPU-instance profiles by index (1, 2, 3, 4, 7 slices; IDs as on an H100) and instances.
  nvmlReturn_t GiProfileInfo(nvmlDevice_t d, unsigned int profile,
                             nvmlGpuInstanceProfileInfo_t* info);
  nvmlReturn_t GiById(nvmlDevice_t d, unsigned int id, nvmlGpuInstance_t* out);
  nvmlReturn_t GiInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t* info);
  nvmlReturn_t GpmSupport(nvmlDevice_t d, nvmlGpmSupport_t* s);
  nvmlReturn_t GpmAlloc(nvmlGpmSample_t* s);
  nvmlReturn_t GpmFree(nvmlGpmSample_t s);
  nvmlReturn_t GpmSampleGet(nvmlDevice_t d, int gi, nvmlGpmSample_t s);
  nvmlReturn_t GpmMetrics(nvmlGpmMetricsGet_t* m);
  // Health (fake_health.cpp): the scenario's health events at the fake's time.
  nvmlReturn_t ClockReasons(nvmlDevice_t d, unsigned long long* reasons);
  nvmlReturn_t EccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter,
                         unsigned long long* count);
  nvmlReturn_t RemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                            unsigned int* pending, unsigned int* failure);
  nvmlReturn_t RetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause, unsigned int* count,
                            unsigned long long* addresses);
  nvmlReturn_t RetiredPagesPending(nvmlDevice_t d, nvmlEnableState_t* pending);
  // Monitoring calls of NVML tools (fake_monitoring.cpp): PCI identity, temperature, clocks, fan,
  // power limit, PCIe link and traffic, codec use, graphics processes. `bytes`: how much of
  // nvmlPciInfo_t the entry point's layout has.
  nvmlReturn_t PciInfo(nvmlDevice_t d, nvmlPciInfo_t* pci, size_t bytes);
  nvmlReturn_t Temperature(nvmlDevice_t d, unsigned int sensor, unsigned int* celsius);
  nvmlReturn_t TemperatureThreshold(nvmlDevice_t d, unsigned int type, unsigned int* celsius);
  nvmlReturn_t Clock(nvmlDevice_t d, unsigned int type, bool max, unsigned int* mhz);
  nvmlReturn_t FanSpeed(nvmlDevice_t d, unsigned int* percent);
  nvmlReturn_t EnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw);
  nvmlReturn_t PcieLink(nvmlDevice_t d, bool width, bool max, unsigned int* value);
  nvmlReturn_t PcieThroughput(nvmlDevice_t d, unsigned int counter, unsigned int* kbps);
  nvmlReturn_t CodecUtilization(nvmlDevice_t d, unsigned int* percent, unsigned int* period_us);
  nvmlReturn_t GraphicsProcesses(nvmlDevice_t d, unsigned int* count);
  nvmlReturn_t CudaDriverVersion(int* version);  // the scenario's driver.cuda_version
  nvmlReturn_t HandleByUuid(const char* uuid, nvmlDevice_t* out);  // a GPU or a MIG instance
  // Events (fake_events.cpp): XIDs from the scenario's `xid` faults; a lost GPU's wait returns
  // GPU_IS_LOST. Wait sleeps (without the lock) up to `timeout_ms` of real time.
  nvmlReturn_t EventSetCreate(nvmlEventSet_t* set);
  nvmlReturn_t EventSetFree(nvmlEventSet_t set);
  nvmlReturn_t SupportedEvents(nvmlDevice_t d, unsigned long long* types);
  nvmlReturn_t RegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set);
  nvmlReturn_t EventWait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms,
                         bool v2);

 private:
  struct Load {
    double busy = 0;                 // the GPU's busy fraction now
    double power_fraction = 0;       // where its power is between idle and maximum, 0-1
    unsigned long long reasons = 0;  // the scenario's clocks-event reasons now
  };
  Load LoadLocked(const scenario::Gpu& g) const;
  double NowLocked() const;
  uint64_t EpochUsLocked(double t_s) const;
  const scenario::Gpu& GpuOf(nvmlDevice_t d) const { return scenario_->gpus[d->gpu]; }
  std::string UnitUuid(nvmlDevice_t d) const;
  bool ValidHandle(nvmlDevice_t d) const;
  nvmlDevice_t ParentHandleLocked(size_t gpu);

  mutable std::mutex mu_;
  int refcount_ = 0;
  std::unique_ptr<scenario::Scenario> scenario_;
  std::deque<nvmlDevice_st> handles_;  // stable addresses
  std::deque<nvmlGpmSample_st> gpm_samples_;
  std::deque<nvmlGpuInstance_st> gpu_instances_;  // stable addresses, one per MIG instance
  std::deque<nvmlEventSet_st> event_sets_;        // stable addresses; freed ones stay, marked
  std::chrono::steady_clock::time_point start_;
  uint64_t epoch_at_start_us_ = 0;
  double speedup_ = 1.0;
  double offset_s_ = 0;
  std::optional<double> manual_t_s_;
};

// The one driver instance of this library (a driver is process-wide state by nature).
FakeDriver& Driver();

}  // namespace gpumeter::fake
