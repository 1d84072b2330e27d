// The one list of NVML entry points gpumeter resolves. The loader builds its function table from
// it, and the fake library's contract test checks that the fake exports every one of them, so the
// two cannot drift. X(symbol, function type).
#pragma once

#include "sources/nvml/nvml_abi.h"

#define GPUMETER_NVML_SYMBOLS(X)                                                                   \
  X(nvmlInit_v2, nvmlReturn_t (*)(void))                                                           \
  X(nvmlInit, nvmlReturn_t (*)(void))                                                              \
  X(nvmlShutdown, nvmlReturn_t (*)(void))                                                          \
  X(nvmlErrorString, const char* (*)(nvmlReturn_t))                                                \
  X(nvmlSystemGetDriverVersion, nvmlReturn_t (*)(char*, unsigned int))                             \
  X(nvmlSystemGetNVMLVersion, nvmlReturn_t (*)(char*, unsigned int))                               \
  X(nvmlDeviceGetCount_v2, nvmlReturn_t (*)(unsigned int*))                                        \
  X(nvmlDeviceGetCount, nvmlReturn_t (*)(unsigned int*))                                           \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t (*)(unsigned int, nvmlDevice_t*))                  \
  X(nvmlDeviceGetHandleByIndex, nvmlReturn_t (*)(unsigned int, nvmlDevice_t*))                     \
  X(nvmlDeviceGetUUID, nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int))                        \
  X(nvmlDeviceGetName, nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int))                        \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*))                  \
  X(nvmlDeviceGetMemoryInfo, nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*))                        \
  X(nvmlDeviceGetUtilizationRates, nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*))             \
  X(nvmlDeviceGetPowerUsage, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*))                        \
  X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*))      \
  X(nvmlDeviceGetComputeMode, nvmlReturn_t (*)(nvmlDevice_t, int*))                                \
  X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*)) \
  X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*)) \
  X(nvmlDeviceGetComputeRunningProcesses, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*))    \
  X(nvmlDeviceGetMPSComputeRunningProcesses_v3,                                                    \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*))                                          \
  X(nvmlDeviceGetMPSComputeRunningProcesses_v2,                                                    \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*))                                          \
  X(nvmlDeviceGetMPSComputeRunningProcesses, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*)) \
  X(nvmlDeviceGetConfComputeMemSizeInfo, nvmlReturn_t (*)(nvmlDevice_t, void*))                    \
  X(nvmlDeviceGetRunningProcessDetailList,                                                         \
    nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessDetailList_v1_t*))                                   \
  X(nvmlDeviceGetProcessUtilization,                                                               \
    nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*,                 \
                     unsigned long long))                                                          \
  X(nvmlDeviceGetProcessesUtilizationInfo,                                                         \
    nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessesUtilizationInfo_v1_t*))                            \
  X(nvmlDeviceGetSamples, nvmlReturn_t (*)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long,   \
                                           nvmlValueType_t*, unsigned int*, nvmlSample_t*))        \
  X(nvmlDeviceGetMigMode, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*))            \
  X(nvmlDeviceGetMaxMigDeviceCount, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*))                 \
  X(nvmlDeviceGetMigDeviceHandleByIndex,                                                           \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*))                                   \
  X(nvmlDeviceGetGpuInstanceId, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*))                     \
  X(nvmlDeviceGetComputeInstanceId, nvmlReturn_t (*)(nvmlDevice_t, unsigned int*))                 \
  X(nvmlDeviceGetGpuInstanceProfileInfo,                                                           \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_t*))                   \
  X(nvmlDeviceGetGpuInstanceById,                                                                  \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*))                              \
  X(nvmlGpuInstanceGetInfo, nvmlReturn_t (*)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*))           \
  X(nvmlGpmQueryDeviceSupport, nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSupport_t*))                  \
  X(nvmlGpmSampleAlloc, nvmlReturn_t (*)(nvmlGpmSample_t*))                                        \
  X(nvmlGpmSampleFree, nvmlReturn_t (*)(nvmlGpmSample_t))                                          \
  X(nvmlGpmSampleGet, nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t))                             \
  X(nvmlGpmMigSampleGet, nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpmSample_t))            \
  X(nvmlGpmMetricsGet, nvmlReturn_t (*)(nvmlGpmMetricsGet_t*))                                     \
  X(nvmlDeviceGetCurrentClocksEventReasons, nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*))   \
  X(nvmlDeviceGetCurrentClocksThrottleReasons,                                                     \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*))                                           \
  X(nvmlDeviceGetTotalEccErrors, nvmlReturn_t (*)(nvmlDevice_t, nvmlMemoryErrorType_t,             \
                                                  nvmlEccCounterType_t, unsigned long long*))      \
  X(nvmlDeviceGetRemappedRows,                                                                     \
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*))    \
  X(nvmlDeviceGetRetiredPages,                                                                     \
    nvmlReturn_t (*)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int*, unsigned long long*)) \
  X(nvmlDeviceGetRetiredPagesPendingStatus, nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*))    \
  X(nvmlEventSetCreate, nvmlReturn_t (*)(nvmlEventSet_t*))                                         \
  X(nvmlEventSetFree, nvmlReturn_t (*)(nvmlEventSet_t))                                            \
  X(nvmlDeviceGetSupportedEventTypes, nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*))         \
  X(nvmlDeviceRegisterEvents, nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t))  \
  X(nvmlEventSetWait_v2, nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int))         \
  X(nvmlEventSetWait, nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int))
