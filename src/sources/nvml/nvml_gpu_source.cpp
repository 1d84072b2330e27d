#include "sources/nvml/nvml_gpu_source.h"

#include <chrono>

#include "sources/nvml/device_readers.h"
#include "sources/nvml/gpu_state.h"
#include "sources/nvml/process_lists.h"
#include "sources/nvml/xid_events.h"

namespace gpumeter::nvml {
namespace {

uint64_t SystemNowUs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

constexpr unsigned int kMigEnabled = 1;

gpu::ComputeMode ToComputeMode(int mode) {
  return mode == NVML_COMPUTEMODE_DEFAULT             ? gpu::ComputeMode::kDefault
         : mode == NVML_COMPUTEMODE_EXCLUSIVE_PROCESS ? gpu::ComputeMode::kExclusiveProcess
         : mode == NVML_COMPUTEMODE_PROHIBITED        ? gpu::ComputeMode::kProhibited
                                                      : gpu::ComputeMode::kUnknown;
}

// Device utilization, power, energy and compute mode (the first and the last: not on a
// MIG-enabled GPU, whose MIG handles have them).
void ReadReadings(const DeviceRead& r) {
  const NvmlApi& api = r.api();
  gpu::DeviceSample& dev = r.dev;
  nvmlUtilization_t u{};
  if (api.nvmlDeviceGetUtilizationRates && !dev.mig_enabled &&
      r.Ok<Sym::nvmlDeviceGetUtilizationRates>(r.h, &u) && u.gpu <= 100) {
    dev.utilization_gpu_percent = u.gpu;
    if (u.memory <= 100) dev.utilization_memory_percent = u.memory;
  }
  unsigned int mw = 0;
  if (api.nvmlDeviceGetPowerUsage && r.Ok<Sym::nvmlDeviceGetPowerUsage>(r.h, &mw))
    dev.power_watts = mw / 1000.0;
  unsigned long long mj = 0;
  if (api.nvmlDeviceGetTotalEnergyConsumption &&
      r.Ok<Sym::nvmlDeviceGetTotalEnergyConsumption>(r.h, &mj))
    dev.energy_joules = static_cast<double>(mj) / 1000.0;
  int mode = 0;
  if (api.nvmlDeviceGetComputeMode && !dev.mig_enabled &&
      r.Ok<Sym::nvmlDeviceGetComputeMode>(r.h, &mode))
    dev.compute_mode = ToComputeMode(mode);
}

}  // namespace

std::optional<gpu::MemoryInfo> ReadMemory(const NvmlCalls& nvml, nvmlDevice_t h,
                                          gpu::DeviceSample& dev) {
  if (nvml.Has<Sym::nvmlDeviceGetMemoryInfo_v2>()) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;  // the encoded value; a literal 2 gets FUNCTION_NOT_FOUND
    const nvmlReturn_t rc = nvml.Call<Sym::nvmlDeviceGetMemoryInfo_v2>(h, &m);
    if (rc == NVML_SUCCESS) return gpu::MemoryInfo{m.total, m.used, m.reserved, m.free};
    // 13/25/2 after a versioned call: this struct version is unknown to the driver; try v1.
    if (rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH &&
        rc != NVML_ERROR_INVALID_ARGUMENT) {
      nvml.Check<Sym::nvmlDeviceGetMemoryInfo_v2>(dev, rc);
      return std::nullopt;
    }
  }
  nvmlMemory_t m{};
  if (nvml.Has<Sym::nvmlDeviceGetMemoryInfo>() && nvml.Ok<Sym::nvmlDeviceGetMemoryInfo>(dev, h, &m))
    return gpu::MemoryInfo{m.total, m.used, std::nullopt, m.free};  // v1 used includes reserved
  return std::nullopt;
}

Expected<std::unique_ptr<NvmlGpuSource>> NvmlGpuSource::Create(NvmlSourceOptions options) {
  if (options.library_candidates.empty()) options.library_candidates = {kNvmlSoname};
  if (!options.wall_clock_us) options.wall_clock_us = SystemNowUs;
  auto lib = NvmlLibrary::Open(options.library_candidates);
  if (!lib) return tl::unexpected(lib.error());
  auto session = NvmlSession::Start(**lib);
  if (!session) return tl::unexpected(session.error());
  std::unique_ptr<NvmlGpuSource> src(
      new NvmlGpuSource(std::move(options), std::move(*lib), std::move(*session)));
  src->DetectCapabilities();
  return src;
}

NvmlGpuSource::NvmlGpuSource(NvmlSourceOptions options, std::unique_ptr<NvmlLibrary> lib,
                             std::unique_ptr<NvmlSession> session)
    : options_(std::move(options)),
      lib_(std::move(lib)),
      session_(std::move(session)),
      procs_(std::make_unique<ProcessLists>()) {
  if (options_.watch_xid)
    xid_ = std::make_unique<XidEvents>(lib_->api(), options_.xid_wait, options_.wall_clock_us);
}

NvmlGpuSource::~NvmlGpuSource() {
  xid_.reset();   // joins its waiter and frees its event set while NVML is still up
  gpus_.clear();  // free GPM samples before the session and library go
  session_.reset();
}

void NvmlGpuSource::DetectCapabilities() {
  const NvmlApi& api = lib_->api();
  caps_.library_path = lib_->path();
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (api.nvmlSystemGetDriverVersion &&
      api.nvmlSystemGetDriverVersion(buf, sizeof buf) == NVML_SUCCESS)
    caps_.driver_version = buf;
  if (api.nvmlSystemGetNVMLVersion && api.nvmlSystemGetNVMLVersion(buf, sizeof buf) == NVML_SUCCESS)
    caps_.nvml_version = buf;
  caps_.process_api = procs_->Detect(api);
  caps_.memory_api = api.nvmlDeviceGetMemoryInfo_v2 ? kNameOf<Sym::nvmlDeviceGetMemoryInfo_v2>
                     : api.nvmlDeviceGetMemoryInfo  ? kNameOf<Sym::nvmlDeviceGetMemoryInfo>
                                                    : "";
  caps_.util_api = api.nvmlDeviceGetProcessesUtilizationInfo
                       ? kNameOf<Sym::nvmlDeviceGetProcessesUtilizationInfo>
                   : api.nvmlDeviceGetProcessUtilization
                       ? kNameOf<Sym::nvmlDeviceGetProcessUtilization>
                       : "";
  caps_.gpm = api.nvmlGpmQueryDeviceSupport && api.nvmlGpmSampleAlloc && api.nvmlGpmSampleFree &&
              api.nvmlGpmSampleGet && api.nvmlGpmMetricsGet;
  caps_.mig = api.nvmlDeviceGetMigMode && api.nvmlDeviceGetMaxMigDeviceCount &&
              api.nvmlDeviceGetMigDeviceHandleByIndex;
}

Expected<gpu::GpuSnapshot> NvmlGpuSource::Sample() {
  const NvmlCalls nvml(*lib_, options_.observer);
  gpu::GpuSnapshot snap;
  snap.timestamp_us = options_.wall_clock_us();
  // Never mix v1 and v2 count/handle calls: their indices differ (v1 skips forbidden GPUs). Both
  // versions are named by the v1 entry.
  const bool v2 =
      nvml.Has<Sym::nvmlDeviceGetCount_v2>() && nvml.Has<Sym::nvmlDeviceGetHandleByIndex_v2>();
  unsigned int count = 0;
  const nvmlReturn_t rc =
      v2 ? nvml.Call<Sym::nvmlDeviceGetCount_v2, Sym::nvmlDeviceGetCount>(&count)
         : nvml.Call<Sym::nvmlDeviceGetCount>(&count);
  if (rc != NVML_SUCCESS)
    return MakeError(ErrorCode::kUnavailable, std::string(kNameOf<Sym::nvmlDeviceGetCount>) +
                                                  " failed: " + lib_->ErrorString(rc));
  drain_targets_.clear();
  std::vector<nvmlDevice_t> handles;  // of snap.devices, in order
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t h = nullptr;
    const nvmlReturn_t hrc =
        v2 ? nvml.Call<Sym::nvmlDeviceGetHandleByIndex_v2, Sym::nvmlDeviceGetHandleByIndex>(i, &h)
           : nvml.Call<Sym::nvmlDeviceGetHandleByIndex>(i, &h);
    if (hrc != NVML_SUCCESS) {
      // NO_PERMISSION: counted by count_v2 but not ours to open (e.g. another container's GPU).
      snap.errors.push_back(
          {std::string(kNameOf<Sym::nvmlDeviceGetHandleByIndex>) + "(" + std::to_string(i) + ")",
           hrc, lib_->ErrorString(hrc)});
      continue;
    }
    gpu::DeviceSample dev;
    dev.index = i;
    SampleDevice(nvml, h, dev, snap.timestamp_us);
    // A lost GPU cannot tell its UUID or name; indices are stable while the driver stays loaded.
    auto& known = identity_by_index_[i];
    if (!dev.uuid.empty() && dev.uuid != known.first) known = {dev.uuid, ""};  // another GPU
    if (dev.uuid.empty()) dev.uuid = known.first;
    if (!dev.name.empty())
      known.second = dev.name;
    else if (dev.uuid == known.first)
      dev.name = known.second;
    snap.devices.push_back(std::move(dev));
    handles.push_back(h);
  }
  DropDrainedOfUntargeted();
  if (xid_) xid_->Take(handles, snap);
  return snap;
}

GpuState& NvmlGpuSource::StateOf(const std::string& uuid) {
  auto& state = gpus_[uuid];
  if (!state) state = std::make_unique<GpuState>();
  return *state;
}

void NvmlGpuSource::SampleDevice(const NvmlCalls& nvml, nvmlDevice_t h, gpu::DeviceSample& dev,
                                 uint64_t now_us) {
  char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  constexpr unsigned int kBufSize = sizeof buf;
  if (!nvml.Ok<Sym::nvmlDeviceGetUUID>(dev, h, buf, kBufSize))
    return;  // without a UUID the device cannot be keyed; its error says why
  dev.uuid = buf;
  if (nvml.Ok<Sym::nvmlDeviceGetName>(dev, h, buf, kBufSize)) dev.name = buf;
  if (dev.lost) return;
  const DeviceRead r{nvml, h, StateOf(dev.uuid), dev};

  unsigned int current = 0, pending = 0;
  if (caps_.mig && r.Ok<Sym::nvmlDeviceGetMigMode>(h, &current, &pending))
    dev.mig_enabled = current == kMigEnabled;
  dev.memory = ReadMemory(nvml, h, dev);
  if (dev.lost) return;
  ReadReadings(r);
  if (dev.lost) return;
  ReadHealth(r);
  if (dev.lost) return;
  dev.processes = procs_->Read(nvml, h, dev, dev.memory ? dev.memory->total_bytes : 0);
  if (dev.lost) return;
  if (dev.mig_enabled)
    ReadMigGpu(r);
  else
    ReadWholeGpu(r, now_us);
}

void NvmlGpuSource::ReadWholeGpu(const DeviceRead& r, uint64_t now_us) {
  gpu::DeviceSample& dev = r.dev;
  const bool window_closed = ReadProcessUtilization(r, now_us, options_.first_util_lookback_us);
  ReadPowerSamples(r);
  TakeDrained(r.gpu, dev, window_closed);
  // Drained while its reads work, and while a failed read holds its window open.
  if (!dev.lost && r.gpu.util_last_seen_us && (dev.process_utilization_supported || !window_closed))
    drain_targets_.push_back({&r.gpu, r.h, false});
  if (!caps_.gpm) return;
  const auto gpm = GpmActivity(r, std::nullopt);
  dev.sm_active_ratio = gpm.sm;
  dev.dram_bw_ratio = gpm.dram_bw;
}

// NVML documents per-process utilization as unsupported on MIG GPUs; GPM per instance instead.
// Board power is sampled on a MIG-enabled GPU too: it tells when, inside a DCGM collection, the
// instances were busy (core/attribution/collection_profile.h). Drained between passes once the
// driver has given samples (not where they are not supported).
void NvmlGpuSource::ReadMigGpu(const DeviceRead& r) {
  r.dev.process_utilization_supported = false;
  ReadMigInstances(r, *procs_, caps_);
  ReadPowerSamples(r);
  TakeDrainedPower(r.gpu, r.dev);
  if (!r.dev.lost && r.gpu.power_last_seen_us > 0) drain_targets_.push_back({&r.gpu, r.h, true});
}

void NvmlGpuSource::DropDrainedOfUntargeted() {
  for (auto& [uuid, gpu] : gpus_) {
    if (!gpu->drained) continue;
    const bool targeted = std::any_of(drain_targets_.begin(), drain_targets_.end(),
                                      [&](const DrainTarget& t) { return t.gpu == gpu.get(); });
    if (!targeted) gpu->drained.reset();
  }
}

}  // namespace gpumeter::nvml
