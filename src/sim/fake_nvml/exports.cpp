// The C entry points of the fake libnvidia-ml.so.1. Each checks init, handle and injected faults
// (FakeDriver::Enter) and forwards to the driver. Which of them a built library exports is decided
// by its profile's version script (CMakeLists.txt), as symbols differ between driver releases.
#include "sim/fake_nvml/fake_driver.h"

using gpumeter::fake::Driver;

#define ENTER_SYS(name) \
  if (nvmlReturn_t rc_ = Driver().EnterSystem(name); rc_ != NVML_SUCCESS) return rc_
#define ENTER_DEV(name, dev) \
  if (nvmlReturn_t rc_ = Driver().Enter(name, dev); rc_ != NVML_SUCCESS) return rc_

extern "C" {

#define EXPORT __attribute__((visibility("default")))

EXPORT nvmlReturn_t nvmlInit_v2(void) { return Driver().Init(); }
EXPORT nvmlReturn_t nvmlInit(void) { return Driver().Init(); }
// nvidia-ml-py (nvitop) initialises with flags; no flag changes what the fake does.
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int /*flags*/) { return Driver().Init(); }
EXPORT nvmlReturn_t nvmlShutdown(void) { return Driver().Shutdown(); }

EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 5:
      return "Already Initialized";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 8:
      return "Insufficient External Power";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 11:
      return "Interrupt Request Issue";
    case 12:
      return "NVML Shared Library Not Found";
    case 13:
      return "Function Not Found";
    case 14:
      return "Corrupted infoROM";
    case 15:
      return "GPU is lost";
    case 16:
      return "GPU requires restart";
    case 17:
      return "The operating system has blocked the request.";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    case 19:
      return "In use by another client";
    case 20:
      return "Insufficient Memory";
    case 21:
      return "No data";
    case 25:
      return "Argument version mismatch";
    case 26:
      return "Deprecated";
    case 27:
      return "Not Ready";
    case 28:
      return "GPU Not Found";
    case 29:
      return "Invalid State";
    case 999:
      return "Unknown Error";
    default:
      return "Unknown Error";
  }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned int len) {
  ENTER_SYS("nvmlSystemGetDriverVersion");
  return Driver().DriverVersion(v, len);
}
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* v, unsigned int len) {
  ENTER_SYS("nvmlSystemGetNVMLVersion");
  return Driver().NvmlVersion(v, len);
}
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
  ENTER_SYS("nvmlDeviceGetCount_v2");
  return Driver().Count(n);
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* n) {
  ENTER_SYS("nvmlDeviceGetCount");
  return Driver().Count(n);  // v1 would skip forbidden GPUs; scenarios with those use _v2
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  ENTER_SYS("nvmlDeviceGetHandleByIndex_v2");
  return Driver().HandleByIndex(i, d);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t* d) {
  ENTER_SYS("nvmlDeviceGetHandleByIndex");
  return Driver().HandleByIndex(i, d);
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* b, unsigned int len) {
  ENTER_DEV("nvmlDeviceGetUUID", d);
  return Driver().Uuid(d, b, len);
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* b, unsigned int len) {
  ENTER_DEV("nvmlDeviceGetName", d);
  return Driver().Name(d, b, len);
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  ENTER_DEV("nvmlDeviceGetMemoryInfo_v2", d);
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  // Real drivers answer a wrong version (e.g. a literal 2) with FUNCTION_NOT_FOUND.
  if (m->version != nvmlMemory_v2) return NVML_ERROR_FUNCTION_NOT_FOUND;
  const nvmlReturn_t rc = Driver().Memory(d, &m->total, &m->reserved, &m->used, true);
  if (rc == NVML_SUCCESS) m->free = m->total - m->reserved - m->used;
  return rc;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  ENTER_DEV("nvmlDeviceGetMemoryInfo", d);
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long reserved = 0;
  const nvmlReturn_t rc = Driver().Memory(d, &m->total, &reserved, &m->used, false);
  if (rc == NVML_SUCCESS) m->free = m->total - m->used;
  return rc;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  ENTER_DEV("nvmlDeviceGetUtilizationRates", d);
  return Driver().Utilization(d, u);
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  ENTER_DEV("nvmlDeviceGetPowerUsage", d);
  return Driver().Power(d, mw);
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  ENTER_DEV("nvmlDeviceGetTotalEnergyConsumption", d);
  return Driver().Energy(d, mj);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* mode) {
  ENTER_DEV("nvmlDeviceGetComputeMode", d);
  return Driver().ComputeMode(d, mode);
}

#define PROCESS_FN(sym, mps, stride)                                      \
  EXPORT nvmlReturn_t sym(nvmlDevice_t d, unsigned int* n, void* infos) { \
    ENTER_DEV(#sym, d);                                                   \
    return Driver().Processes(d, mps, n, infos, stride);                  \
  }
PROCESS_FN(nvmlDeviceGetComputeRunningProcesses_v3, false,
           gpumeter::fake::ActiveProfile().v3_stride)
PROCESS_FN(nvmlDeviceGetComputeRunningProcesses_v2, false, sizeof(nvmlProcessInfo_v2_t))
PROCESS_FN(nvmlDeviceGetComputeRunningProcesses, false, sizeof(nvmlProcessInfo_v1_t))
PROCESS_FN(nvmlDeviceGetMPSComputeRunningProcesses_v3, true,
           gpumeter::fake::ActiveProfile().v3_stride)
PROCESS_FN(nvmlDeviceGetMPSComputeRunningProcesses_v2, true, sizeof(nvmlProcessInfo_v2_t))
PROCESS_FN(nvmlDeviceGetMPSComputeRunningProcesses, true, sizeof(nvmlProcessInfo_v1_t))
#undef PROCESS_FN

EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t d, void* info) {
  ENTER_DEV("nvmlDeviceGetConfComputeMemSizeInfo", d);
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_ERROR_NOT_SUPPORTED;  // confidential computing is off on simulated GPUs
}
EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t d,
                                                          nvmlProcessDetailList_v1_t* l) {
  ENTER_DEV("nvmlDeviceGetRunningProcessDetailList", d);
  if (!l || l->version != nvmlProcessDetailList_v1 || l->mode > 2)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (l->mode == 1) {  // no graphics processes on simulated nodes
    l->numProcArrayEntries = 0;
    return NVML_SUCCESS;
  }
  return Driver().Processes(d, l->mode == 2, &l->numProcArrayEntries, l->procArray,
                            sizeof(nvmlProcessDetail_v1_t));
}
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                                    nvmlProcessUtilizationSample_t* s,
                                                    unsigned int* n, unsigned long long last_seen) {
  ENTER_DEV("nvmlDeviceGetProcessUtilization", d);
  return Driver().ProcessUtil(d, last_seen, n, s);
}
EXPORT nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t d,
                                                          nvmlProcessesUtilizationInfo_v1_t* i) {
  ENTER_DEV("nvmlDeviceGetProcessesUtilizationInfo", d);
  return Driver().ProcessesUtilInfo(d, i);
}
EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t d, nvmlSamplingType_t type,
                                         unsigned long long last_seen, nvmlValueType_t* value_type,
                                         unsigned int* n, nvmlSample_t* s) {
  ENTER_DEV("nvmlDeviceGetSamples", d);
  return Driver().Samples(d, type, last_seen, value_type, n, s);
}
// Both names of the clocks-event reasons call (the old one is deprecated from 535.43.02); each
// profile's version script exports the ones its release has.
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                           unsigned long long* reasons) {
  ENTER_DEV("nvmlDeviceGetCurrentClocksEventReasons", d);
  return Driver().ClockReasons(d, reasons);
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                              unsigned long long* reasons) {
  ENTER_DEV("nvmlDeviceGetCurrentClocksThrottleReasons", d);
  return Driver().ClockReasons(d, reasons);
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type,
                                                nvmlEccCounterType_t counter,
                                                unsigned long long* count) {
  ENTER_DEV("nvmlDeviceGetTotalEccErrors", d);
  return Driver().EccErrors(d, type, counter, count);
}
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                              unsigned int* pending, unsigned int* failure) {
  ENTER_DEV("nvmlDeviceGetRemappedRows", d);
  return Driver().RemappedRows(d, corr, unc, pending, failure);
}
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause,
                                              unsigned int* count, unsigned long long* addresses) {
  ENTER_DEV("nvmlDeviceGetRetiredPages", d);
  return Driver().RetiredPages(d, cause, count, addresses);
}
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d,
                                                           nvmlEnableState_t* pending) {
  ENTER_DEV("nvmlDeviceGetRetiredPagesPendingStatus", d);
  return Driver().RetiredPagesPending(d, pending);
}
// Monitoring calls (nvtop, nvitop; fake_monitoring.cpp). _v2 and the plain PCI call write the
// 36 bytes every layout shares.
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  ENTER_DEV("nvmlDeviceGetPciInfo_v3", d);
  return Driver().PciInfo(d, pci, sizeof(nvmlPciInfo_t));
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  ENTER_DEV("nvmlDeviceGetPciInfo_v2", d);
  return Driver().PciInfo(d, pci, kNvmlPciInfoLegacyPrefix);
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  ENTER_DEV("nvmlDeviceGetPciInfo", d);
  return Driver().PciInfo(d, pci, kNvmlPciInfoLegacyPrefix);
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned int sensor, unsigned int* c) {
  ENTER_DEV("nvmlDeviceGetTemperature", d);
  return Driver().Temperature(d, sensor, c);
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, unsigned int type,
                                                      unsigned int* c) {
  ENTER_DEV("nvmlDeviceGetTemperatureThreshold", d);
  return Driver().TemperatureThreshold(d, type, c);
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, unsigned int type, unsigned int* mhz) {
  ENTER_DEV("nvmlDeviceGetClockInfo", d);
  return Driver().Clock(d, type, false, mhz);
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, unsigned int type,
                                              unsigned int* mhz) {
  ENTER_DEV("nvmlDeviceGetMaxClockInfo", d);
  return Driver().Clock(d, type, true, mhz);
}
EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int* percent) {
  ENTER_DEV("nvmlDeviceGetFanSpeed", d);
  return Driver().FanSpeed(d, percent);
}
EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  ENTER_DEV("nvmlDeviceGetEnforcedPowerLimit", d);
  return Driver().EnforcedPowerLimit(d, mw);
}
// nvitop reads the management limit; no scenario sets one apart from the enforced limit.
EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int* mw) {
  ENTER_DEV("nvmlDeviceGetPowerManagementLimit", d);
  return Driver().EnforcedPowerLimit(d, mw);
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  ENTER_SYS("nvmlSystemGetCudaDriverVersion");
  return Driver().CudaDriverVersion(version);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* out) {
  ENTER_SYS("nvmlDeviceGetHandleByUUID");
  return Driver().HandleByUuid(uuid, out);
}
#define PCIE_LINK_FN(sym, width, max)                            \
  EXPORT nvmlReturn_t sym(nvmlDevice_t d, unsigned int* value) { \
    ENTER_DEV(#sym, d);                                          \
    return Driver().PcieLink(d, width, max, value);              \
  }
PCIE_LINK_FN(nvmlDeviceGetCurrPcieLinkGeneration, false, false)
PCIE_LINK_FN(nvmlDeviceGetMaxPcieLinkGeneration, false, true)
PCIE_LINK_FN(nvmlDeviceGetCurrPcieLinkWidth, true, false)
PCIE_LINK_FN(nvmlDeviceGetMaxPcieLinkWidth, true, true)
#undef PCIE_LINK_FN
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, unsigned int counter,
                                                unsigned int* kbps) {
  ENTER_DEV("nvmlDeviceGetPcieThroughput", d);
  return Driver().PcieThroughput(d, counter, kbps);
}
EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int* pct,
                                                    unsigned int* period_us) {
  ENTER_DEV("nvmlDeviceGetEncoderUtilization", d);
  return Driver().CodecUtilization(d, pct, period_us);
}
EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int* pct,
                                                    unsigned int* period_us) {
  ENTER_DEV("nvmlDeviceGetDecoderUtilization", d);
  return Driver().CodecUtilization(d, pct, period_us);
}
#define GRAPHICS_FN(sym)                                                      \
  EXPORT nvmlReturn_t sym(nvmlDevice_t d, unsigned int* n, void* /*infos*/) { \
    ENTER_DEV(#sym, d);                                                       \
    return Driver().GraphicsProcesses(d, n);                                  \
  }
GRAPHICS_FN(nvmlDeviceGetGraphicsRunningProcesses_v3)
GRAPHICS_FN(nvmlDeviceGetGraphicsRunningProcesses_v2)
GRAPHICS_FN(nvmlDeviceGetGraphicsRunningProcesses)
#undef GRAPHICS_FN
EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  ENTER_SYS("nvmlEventSetCreate");
  return Driver().EventSetCreate(set);
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  ENTER_SYS("nvmlEventSetFree");
  return Driver().EventSetFree(set);
}
EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long* types) {
  ENTER_DEV("nvmlDeviceGetSupportedEventTypes", d);
  return Driver().SupportedEvents(d, types);
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t set) {
  ENTER_DEV("nvmlDeviceRegisterEvents", d);
  return Driver().RegisterEvents(d, types, set);
}
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                        unsigned int timeout_ms) {
  ENTER_SYS("nvmlEventSetWait_v2");
  return Driver().EventWait(set, data, timeout_ms, true);
}
EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                     unsigned int timeout_ms) {
  ENTER_SYS("nvmlEventSetWait");
  return Driver().EventWait(set, data, timeout_ms, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* cur, unsigned int* pend) {
  ENTER_DEV("nvmlDeviceGetMigMode", d);
  return Driver().MigMode(d, cur, pend);
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* n) {
  ENTER_DEV("nvmlDeviceGetMaxMigDeviceCount", d);
  return Driver().MaxMigCount(d, n);
}
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i,
                                                        nvmlDevice_t* m) {
  ENTER_DEV("nvmlDeviceGetMigDeviceHandleByIndex", d);
  return Driver().MigHandle(d, i, m);
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  ENTER_DEV("nvmlDeviceGetGpuInstanceId", d);
  return Driver().InstanceId(d, false, id);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  ENTER_DEV("nvmlDeviceGetComputeInstanceId", d);
  return Driver().InstanceId(d, true, id);
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t d, unsigned int profile,
                                                        nvmlGpuInstanceProfileInfo_t* info) {
  ENTER_DEV("nvmlDeviceGetGpuInstanceProfileInfo", d);
  return Driver().GiProfileInfo(d, profile, info);
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned int id,
                                                 nvmlGpuInstance_t* gi) {
  ENTER_DEV("nvmlDeviceGetGpuInstanceById", d);
  return Driver().GiById(d, id, gi);
}
EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t* info) {
  ENTER_SYS("nvmlGpuInstanceGetInfo");
  return Driver().GiInfo(gi, info);
}
EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* s) {
  ENTER_DEV("nvmlGpmQueryDeviceSupport", d);
  return Driver().GpmSupport(d, s);
}
EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  ENTER_SYS("nvmlGpmSampleAlloc");
  return Driver().GpmAlloc(s);
}
EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) { return Driver().GpmFree(s); }
EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
  ENTER_DEV("nvmlGpmSampleGet", d);
  return Driver().GpmSampleGet(d, -1, s);
}
EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned int gi, nvmlGpmSample_t s) {
  ENTER_DEV("nvmlGpmMigSampleGet", d);
  return Driver().GpmSampleGet(d, static_cast<int>(gi), s);
}
EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  ENTER_SYS("nvmlGpmMetricsGet");
  return Driver().GpmMetrics(m);
}

// Test control, not part of NVML: pins the scenario clock at t_s seconds.
EXPORT void gpumeterFakeNvmlSetTime(double t_s) { Driver().SetTime(t_s); }

}  // extern "C"
