// The subset of the NVML C ABI that gpumeter uses, declared from the layouts in
// docs/nvml.md (taken from NVIDIA's nvml.h 13.3 and checked with static_asserts below; LP64).
// There is no nvml.h at build time: both the loader and the fake library use these declarations,
// so they cannot disagree about a layout.
#pragma once

#include <cstddef>

extern "C" {

typedef int nvmlReturn_t;  // a C enum: 4 bytes on gcc/clang Linux
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

enum : nvmlReturn_t {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

// nvmlComputeMode_t, as nvmlDeviceGetComputeMode writes it (an int).
enum : int {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

// nvmlSamplingType_t and nvmlValueType_t (C enums: int-sized), for nvmlDeviceGetSamples.
typedef enum nvmlSamplingType_enum {
  NVML_TOTAL_POWER_SAMPLES = 0,  // board power, mW, NVML_VALUE_TYPE_UNSIGNED_INT
  NVML_GPU_UTILIZATION_SAMPLES = 1,
} nvmlSamplingType_t;
typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
} nvmlValueType_t;

constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ull;
constexpr unsigned int NVML_VALUE_NOT_AVAILABLE_UINT = ~0u;
constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
constexpr unsigned int nvmlMemory_v2 =
    static_cast<unsigned int>(sizeof(nvmlMemory_v2_t) | (2u << 24));

typedef struct {
  unsigned int gpu, memory;  // percent
} nvmlUtilization_t;

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

// The 32-byte entry that _v3 wrote on drivers 535.43–535.86 (nvmlProcessDetail_v1_t later).
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;

typedef struct {
  unsigned int version;
  unsigned int mode;  // 0 compute, 1 graphics, 2 MPS
  unsigned int numProcArrayEntries;
  nvmlProcessDetail_v1_t* procArray;
} nvmlProcessDetailList_v1_t;
constexpr unsigned int nvmlProcessDetailList_v1 =
    static_cast<unsigned int>(sizeof(nvmlProcessDetailList_v1_t) | (1u << 24));

typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;  // epoch µs
  unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
  unsigned long long timeStamp;  // epoch µs
  unsigned int pid, smUtil, memUtil, encUtil, decUtil, jpgUtil, ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;

typedef struct {
  unsigned int version;
  unsigned int processSamplesCount;
  unsigned long long lastSeenTimeStamp;
  nvmlProcessUtilizationInfo_v1_t* procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;
constexpr unsigned int nvmlProcessesUtilizationInfo_v1 =
    static_cast<unsigned int>(sizeof(nvmlProcessesUtilizationInfo_v1_t) | (1u << 24));

typedef struct {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION = 1 (plain integer)
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

constexpr unsigned int kGpmMetricSlots = 98;  // the oldest header's NVML_GPM_METRIC_MAX
typedef struct {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION = 1
  unsigned int numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[kGpmMetricSlots];
} nvmlGpmMetricsGet_t;
constexpr unsigned int NVML_GPM_METRIC_SM_UTIL = 2;
constexpr unsigned int NVML_GPM_METRIC_DRAM_BW_UTIL = 10;  // % of peak DRAM bandwidth

// MIG GPU-instance profiles (v1 struct: present in every MIG-capable driver).
typedef struct {
  unsigned int id;  // device-specific profile ID, as in nvmlGpuInstanceInfo_t::profileId
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct {
  unsigned long long timeStamp;  // epoch µs
  nvmlValue_t sampleValue;       // of the nvmlValueType_t the call writes
} nvmlSample_t;

typedef struct {
  unsigned int start;
  unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct {
  nvmlDevice_t device;  // the parent GPU
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

// Health (docs/nvml.md, "Health"). nvmlMemoryErrorType_t and nvmlEccCounterType_t are C enums
// (int-sized), passed by value to nvmlDeviceGetTotalEccErrors.
typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
} nvmlMemoryErrorType_t;
typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,   // since the driver loaded
  NVML_AGGREGATE_ECC = 1,  // over the board's life
} nvmlEccCounterType_t;
// Why a page was retired (nvmlDeviceGetRetiredPages; Kepler to Turing boards with ECC: Ampere
// and later remap rows instead).
typedef enum nvmlPageRetirementCause_enum {
  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
} nvmlPageRetirementCause_t;
typedef enum nvmlEnableState_enum {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

// Clocks-event ("throttle") reason bits, the same under both names of the call; the three
// hardware bits have only the old nvmlClocksThrottleReason* macros.
constexpr unsigned long long nvmlClocksEventReasonGpuIdle = 0x1ull;
constexpr unsigned long long nvmlClocksEventReasonApplicationsClocksSetting = 0x2ull;
constexpr unsigned long long nvmlClocksEventReasonSwPowerCap = 0x4ull;
constexpr unsigned long long nvmlClocksThrottleReasonHwSlowdown = 0x8ull;
constexpr unsigned long long nvmlClocksEventReasonSyncBoost = 0x10ull;
constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x20ull;
constexpr unsigned long long nvmlClocksThrottleReasonHwThermalSlowdown = 0x40ull;
constexpr unsigned long long nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x80ull;
constexpr unsigned long long nvmlClocksEventReasonDisplayClockSetting = 0x100ull;
constexpr unsigned long long nvmlClocksEventReasonAll = 0x1FFull;

// Events (nvmlEventSetWait_v2 from 450.51; the plain nvmlEventSetWait of older drivers writes the
// first three fields only, 24 bytes). eventData is the XID for nvmlEventTypeXidCriticalError
// (999: unknown); the instance IDs are 0xFFFFFFFF where the event is not attributable to one.
constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ull;
constexpr unsigned int kNvmlNoInstanceId = 0xFFFFFFFFu;
typedef struct {
  nvmlDevice_t device;  // the (parent) GPU of the event
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

}  // extern "C"

// Layout checks against the sizes and offsets in docs/nvml.md.
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, reserved) == 16 &&
              offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(nvmlMemory_v2 == 0x02000028);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24 &&
              offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16);
static_assert(sizeof(nvmlProcessDetail_v1_t) == 32);
static_assert(nvmlProcessDetailList_v1 == 0x01000018);
static_assert(sizeof(nvmlValue_t) == 8 && sizeof(nvmlSample_t) == 16 &&
              offsetof(nvmlSample_t, sampleValue) == 8);
static_assert(sizeof(nvmlSamplingType_t) == 4 && sizeof(nvmlValueType_t) == 4);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32 &&
              offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(sizeof(nvmlProcessUtilizationInfo_v1_t) == 40 &&
              offsetof(nvmlProcessUtilizationInfo_v1_t, smUtil) == 12);
static_assert(nvmlProcessesUtilizationInfo_v1 == 0x01000018);
static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24 && sizeof(nvmlGpmMetricsGet_t) == 3944);
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48 &&
              offsetof(nvmlGpuInstanceProfileInfo_t, sliceCount) == 8 &&
              offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40);
static_assert(sizeof(nvmlMemoryErrorType_t) == 4 && sizeof(nvmlEccCounterType_t) == 4);
static_assert(sizeof(nvmlPageRetirementCause_t) == 4 && sizeof(nvmlEnableState_t) == 4);
static_assert(sizeof(nvmlEventData_t) == 32 && offsetof(nvmlEventData_t, eventData) == 16 &&
              offsetof(nvmlEventData_t, gpuInstanceId) == 24 &&
              offsetof(nvmlEventData_t, computeInstanceId) == 28);
static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24 &&
              offsetof(nvmlGpuInstanceInfo_t, profileId) == 12 &&
              offsetof(nvmlGpuInstanceInfo_t, placement) == 16);

// Monitoring calls that NVML tools (nvtop, nvitop) make; the agent does not, the fake serves them
// (docs/nvml.md, "Monitoring calls"). nvmlPciInfo_t is the 68-byte layout of _v3; drivers before
// 415.13 wrote 52 bytes under _v2 and the plain name, of which the first 36 are the same.
typedef struct {
  char busIdLegacy[16];  // "%04X:%02X:%02X.0"
  unsigned int domain, bus, device;
  unsigned int pciDeviceId;  // device ID << 16 | vendor 0x10DE
  unsigned int pciSubSystemId;
  char busId[32];  // "%08X:%02X:%02X.0"
} nvmlPciInfo_t;
constexpr size_t kNvmlPciInfoLegacyPrefix = 36;  // the bytes every layout shares
typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;
typedef enum nvmlTemperatureThresholds_enum {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
  NVML_TEMPERATURE_THRESHOLD_GPS_CURR = 7,  // the highest defined (550.76)
} nvmlTemperatureThresholds_t;
typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;
typedef enum nvmlPcieUtilCounter_enum {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1,
} nvmlPcieUtilCounter_t;
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, domain) == 16 &&
              offsetof(nvmlPciInfo_t, pciDeviceId) == 28 &&
              offsetof(nvmlPciInfo_t, busId) == kNvmlPciInfoLegacyPrefix);
static_assert(sizeof(nvmlTemperatureSensors_t) == 4 && sizeof(nvmlTemperatureThresholds_t) == 4 &&
              sizeof(nvmlClockType_t) == 4 && sizeof(nvmlPcieUtilCounter_t) == 4);
