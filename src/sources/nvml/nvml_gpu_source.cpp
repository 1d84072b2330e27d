#include "sources/nvml/nvml_gpu_source.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "sources/nvml/gpm_sample.h"
#include "sources/nvml/process_entries.h"

namespace gpumeter::nvml {
namespace {

uint64_t SystemNowUs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

constexpr int kMaxSizeRetries = 8;  // the list can grow between the two calls of the pattern
constexpr unsigned int kMigEnabled = 1;

}  // namespace

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
    : options_(std::move(options)), lib_(std::move(lib)), session_(std::move(session)) {}

NvmlGpuSource::~NvmlGpuSource() {
  xid_.reset();       // joins its waiter and frees its event set while NVML is still up
  gpm_prev_.clear();  // free GPM samples before the session and library go
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

  // _v3 wrote 32-byte entries only on 535.43–535.86, the drivers that had ConfComputeMemSizeInfo
  // but not yet RunningProcessDetailList (nvitop PR #94). Later drivers: 24 bytes again.
  if (api.nvmlDeviceGetComputeRunningProcesses_v3) {
    const bool wide =
        api.nvmlDeviceGetConfComputeMemSizeInfo && !api.nvmlDeviceGetRunningProcessDetailList;
    procs_ = {api.nvmlDeviceGetComputeRunningProcesses_v3,
              api.nvmlDeviceGetMPSComputeRunningProcesses_v3,
              wide ? sizeof(nvmlProcessDetail_v1_t) : sizeof(nvmlProcessInfo_v2_t)};
    caps_.process_api = std::string("nvmlDeviceGetComputeRunningProcesses_v3 (") +
                        (wide ? "32" : "24") + "-byte entries)";
  } else if (api.nvmlDeviceGetComputeRunningProcesses_v2) {
    procs_ = {api.nvmlDeviceGetComputeRunningProcesses_v2,
              api.nvmlDeviceGetMPSComputeRunningProcesses_v2, sizeof(nvmlProcessInfo_v2_t)};
    caps_.process_api = "nvmlDeviceGetComputeRunningProcesses_v2 (24-byte entries)";
  } else if (api.nvmlDeviceGetComputeRunningProcesses) {
    procs_ = {api.nvmlDeviceGetComputeRunningProcesses, api.nvmlDeviceGetMPSComputeRunningProcesses,
              sizeof(nvmlProcessInfo_v1_t)};
    caps_.process_api = "nvmlDeviceGetComputeRunningProcesses (16-byte entries)";
  }
  caps_.memory_api = api.nvmlDeviceGetMemoryInfo_v2 ? "nvmlDeviceGetMemoryInfo_v2"
                     : api.nvmlDeviceGetMemoryInfo  ? "nvmlDeviceGetMemoryInfo"
                                                    : "";
  caps_.util_api = api.nvmlDeviceGetProcessesUtilizationInfo
                       ? "nvmlDeviceGetProcessesUtilizationInfo"
                   : api.nvmlDeviceGetProcessUtilization ? "nvmlDeviceGetProcessUtilization"
                                                         : "";
  caps_.gpm = api.nvmlGpmQueryDeviceSupport && api.nvmlGpmSampleAlloc && api.nvmlGpmSampleFree &&
              api.nvmlGpmSampleGet && api.nvmlGpmMetricsGet;
  caps_.mig = api.nvmlDeviceGetMigMode && api.nvmlDeviceGetMaxMigDeviceCount &&
              api.nvmlDeviceGetMigDeviceHandleByIndex;
}

nvmlReturn_t NvmlGpuSource::Call(const char* name, const std::function<nvmlReturn_t()>& fn) {
  if (options_.observer) options_.observer->Begin(name);
  const nvmlReturn_t rc = fn();
  if (options_.observer) options_.observer->End();
  return rc;
}

bool NvmlGpuSource::Check(gpu::DeviceSample& dev, const char* call, nvmlReturn_t rc) {
  if (rc == NVML_SUCCESS) return true;
  if (rc == NVML_ERROR_GPU_IS_LOST) dev.lost = true;
  if (rc != NVML_ERROR_NOT_SUPPORTED) dev.errors.push_back({call, rc, lib_->ErrorString(rc)});
  return false;
}

Expected<gpu::GpuSnapshot> NvmlGpuSource::Sample() {
  const NvmlApi& api = lib_->api();
  gpu::GpuSnapshot snap;
  snap.timestamp_us = options_.wall_clock_us();
  // Never mix v1 and v2 count/handle calls: their indices differ (v1 skips forbidden GPUs).
  const bool v2 = api.nvmlDeviceGetCount_v2 && api.nvmlDeviceGetHandleByIndex_v2;
  unsigned int count = 0;
  const nvmlReturn_t rc = Call("nvmlDeviceGetCount", [&] {
    return v2 ? api.nvmlDeviceGetCount_v2(&count) : api.nvmlDeviceGetCount(&count);
  });
  if (rc != NVML_SUCCESS)
    return MakeError(ErrorCode::kUnavailable,
                     "nvmlDeviceGetCount failed: " + lib_->ErrorString(rc));
  drain_targets_.clear();
  power_only_targets_.clear();
  std::vector<nvmlDevice_t> handles;  // of snap.devices, in order
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t h = nullptr;
    const nvmlReturn_t hrc = Call("nvmlDeviceGetHandleByIndex", [&] {
      return v2 ? api.nvmlDeviceGetHandleByIndex_v2(i, &h) : api.nvmlDeviceGetHandleByIndex(i, &h);
    });
    if (hrc != NVML_SUCCESS) {
      // NO_PERMISSION: counted by count_v2 but not ours to open (e.g. another container's GPU).
      snap.errors.push_back(
          {"nvmlDeviceGetHandleByIndex(" + std::to_string(i) + ")", hrc, lib_->ErrorString(hrc)});
      continue;
    }
    gpu::DeviceSample dev;
    dev.index = i;
    SampleDevice(h, dev, snap.timestamp_us);
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
  if (options_.watch_xid) TakeXids(handles, snap);
  return snap;
}

void NvmlGpuSource::SampleDevice(nvmlDevice_t h, gpu::DeviceSample& dev, uint64_t now_us) {
  const NvmlApi& api = lib_->api();
  char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (!Check(dev, "nvmlDeviceGetUUID",
             Call("nvmlDeviceGetUUID", [&] { return api.nvmlDeviceGetUUID(h, buf, sizeof buf); })))
    return;  // without a UUID the device cannot be keyed; its error says why
  dev.uuid = buf;
  if (Check(dev, "nvmlDeviceGetName",
            Call("nvmlDeviceGetName", [&] { return api.nvmlDeviceGetName(h, buf, sizeof buf); })))
    dev.name = buf;
  if (dev.lost) return;

  if (caps_.mig) {
    unsigned int current = 0, pending = 0;
    if (Check(dev, "nvmlDeviceGetMigMode", Call("nvmlDeviceGetMigMode", [&] {
                return api.nvmlDeviceGetMigMode(h, &current, &pending);
              })))
      dev.mig_enabled = current == kMigEnabled;
  }
  dev.memory = ReadMemory(h, dev);
  if (dev.lost) return;

  if (api.nvmlDeviceGetUtilizationRates && !dev.mig_enabled) {
    nvmlUtilization_t u{};
    if (Check(dev, "nvmlDeviceGetUtilizationRates",
              Call("nvmlDeviceGetUtilizationRates",
                   [&] { return api.nvmlDeviceGetUtilizationRates(h, &u); })) &&
        u.gpu <= 100) {
      dev.utilization_gpu_percent = u.gpu;
      if (u.memory <= 100) dev.utilization_memory_percent = u.memory;
    }
  }
  if (api.nvmlDeviceGetPowerUsage) {
    unsigned int mw = 0;
    if (Check(dev, "nvmlDeviceGetPowerUsage",
              Call("nvmlDeviceGetPowerUsage", [&] { return api.nvmlDeviceGetPowerUsage(h, &mw); })))
      dev.power_watts = mw / 1000.0;
  }
  if (api.nvmlDeviceGetTotalEnergyConsumption) {
    unsigned long long mj = 0;
    if (Check(dev, "nvmlDeviceGetTotalEnergyConsumption",
              Call("nvmlDeviceGetTotalEnergyConsumption",
                   [&] { return api.nvmlDeviceGetTotalEnergyConsumption(h, &mj); })))
      dev.energy_joules = static_cast<double>(mj) / 1000.0;
  }
  if (api.nvmlDeviceGetComputeMode && !dev.mig_enabled) {  // MIG: only on MIG handles
    int mode = 0;
    if (Check(dev, "nvmlDeviceGetComputeMode", Call("nvmlDeviceGetComputeMode", [&] {
                return api.nvmlDeviceGetComputeMode(h, &mode);
              })))
      dev.compute_mode = mode == NVML_COMPUTEMODE_DEFAULT ? gpu::ComputeMode::kDefault
                         : mode == NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
                             ? gpu::ComputeMode::kExclusiveProcess
                         : mode == NVML_COMPUTEMODE_PROHIBITED ? gpu::ComputeMode::kProhibited
                                                               : gpu::ComputeMode::kUnknown;
  }
  if (dev.lost) return;
  ReadHealth(h, dev);
  if (dev.lost) return;
  dev.processes = ReadProcesses(h, dev, dev.memory ? dev.memory->total_bytes : 0);
  if (dev.lost) return;
  if (dev.mig_enabled) {
    // NVML documents per-process utilization as unsupported on MIG GPUs; GPM per instance instead.
    dev.process_utilization_supported = false;
    ReadMigInstances(h, dev);
    ReadMigPower(h, dev);
  } else {
    const bool window_closed = ReadProcessUtilization(h, dev, now_us);
    ReadPowerSamples(h, dev);
    TakeDrained(dev, window_closed);
    // Drained while its reads work, and while a failed read holds its window open.
    if (!dev.lost && last_seen_us_.count(dev.uuid) &&
        (dev.process_utilization_supported || !window_closed))
      drain_targets_.emplace_back(dev.uuid, h);
    const auto gpm = GpmActivity(dev.uuid, h, std::nullopt, dev);
    dev.sm_active_ratio = gpm.sm;
    dev.dram_bw_ratio = gpm.dram_bw;
  }
}

// Board power is sampled on a MIG-enabled GPU too: it tells when, inside a DCGM collection, the
// instances were busy (core/attribution/collection_profile.h). Drained between passes once the
// driver has given samples (not where they are not supported).
void NvmlGpuSource::ReadMigPower(nvmlDevice_t h, gpu::DeviceSample& dev) {
  ReadPowerSamples(h, dev);
  TakeDrainedPower(dev);
  if (const auto it = power_last_seen_us_.find(dev.uuid);
      !dev.lost && it != power_last_seen_us_.end() && it->second > 0) {
    drain_targets_.emplace_back(dev.uuid, h);
    power_only_targets_.insert(dev.uuid);
  }
}

std::optional<gpu::MemoryInfo> NvmlGpuSource::ReadMemory(nvmlDevice_t h, gpu::DeviceSample& dev) {
  const NvmlApi& api = lib_->api();
  if (api.nvmlDeviceGetMemoryInfo_v2) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;  // the encoded value; a literal 2 gets FUNCTION_NOT_FOUND
    const nvmlReturn_t rc =
        Call("nvmlDeviceGetMemoryInfo_v2", [&] { return api.nvmlDeviceGetMemoryInfo_v2(h, &m); });
    if (rc == NVML_SUCCESS) return gpu::MemoryInfo{m.total, m.used, m.reserved, m.free};
    // 13/25/2 after a versioned call: this struct version is unknown to the driver; try v1.
    if (rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH &&
        rc != NVML_ERROR_INVALID_ARGUMENT) {
      Check(dev, "nvmlDeviceGetMemoryInfo_v2", rc);
      return std::nullopt;
    }
  }
  if (api.nvmlDeviceGetMemoryInfo) {
    nvmlMemory_t m{};
    if (Check(dev, "nvmlDeviceGetMemoryInfo",
              Call("nvmlDeviceGetMemoryInfo", [&] { return api.nvmlDeviceGetMemoryInfo(h, &m); })))
      return gpu::MemoryInfo{m.total, m.used, std::nullopt, m.free};  // v1 used includes reserved
  }
  return std::nullopt;
}

std::vector<gpu::GpuProcess> NvmlGpuSource::ReadProcesses(nvmlDevice_t h, gpu::DeviceSample& dev,
                                                          uint64_t total_bytes) {
  std::vector<gpu::GpuProcess> out;
  if (!procs_.compute) return out;
  ReadProcessList(h, dev, false, total_bytes, out);
  if (procs_.mps && !dev.lost) ReadProcessList(h, dev, true, total_bytes, out);
  return out;
}

void NvmlGpuSource::ReadProcessList(nvmlDevice_t h, gpu::DeviceSample& dev, bool mps,
                                    uint64_t total_bytes, std::vector<gpu::GpuProcess>& out) {
  const auto fn = mps ? procs_.mps : procs_.compute;
  const char* name =
      mps ? "nvmlDeviceGetMPSComputeRunningProcesses" : "nvmlDeviceGetComputeRunningProcesses";
  const auto type = mps ? gpu::ProcessType::kMps : gpu::ProcessType::kCompute;
  unsigned int count = 0;
  nvmlReturn_t rc = Call(name, [&] { return fn(h, &count, nullptr); });
  std::vector<unsigned char> buf;
  for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < kMaxSizeRetries;
       ++attempt) {
    // Headroom: the list can grow between calls.
    count = static_cast<unsigned int>(DriverListEntries(count, count + 5ull, 5));
    buf.assign(static_cast<size_t>(count) * procs_.stride, 0);
    rc = Call(name, [&] { return fn(h, &count, buf.data()); });
  }
  if (rc == NVML_SUCCESS && buf.empty()) return;  // no processes
  if (!Check(dev, name, rc)) return;
  auto entries = detail::DecodeProcessEntries(buf.data(), count, procs_.stride, type);
  // Some drivers wrote a different stride than their header declared (docs/nvml.md §3.3).
  if (detail::CountImplausible(entries, total_bytes) >= 2 &&
      procs_.stride != sizeof(nvmlProcessInfo_v1_t)) {
    const size_t other = procs_.stride == sizeof(nvmlProcessInfo_v2_t)
                             ? sizeof(nvmlProcessDetail_v1_t)
                             : sizeof(nvmlProcessInfo_v2_t);
    if (static_cast<size_t>(count) * other <= buf.size()) {
      auto alt = detail::DecodeProcessEntries(buf.data(), count, other, type);
      if (detail::CountImplausible(alt, total_bytes) == 0) {
        procs_.stride = other;
        entries = std::move(alt);
      }
    }
  }
  for (auto& e : entries) out.push_back(e);
}

nvmlReturn_t NvmlGpuSource::ReadUtilSamples(nvmlDevice_t h, uint64_t since_us,
                                            std::vector<gpu::ProcessUtilSample>& out,
                                            const char** name) {
  const NvmlApi& api = lib_->api();
  nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
  *name = "";
  if (api.nvmlDeviceGetProcessesUtilizationInfo) {
    *name = "nvmlDeviceGetProcessesUtilizationInfo";
    nvmlProcessesUtilizationInfo_v1_t info{};
    info.version = nvmlProcessesUtilizationInfo_v1;
    info.lastSeenTimeStamp = since_us;
    rc = Call(*name, [&] { return api.nvmlDeviceGetProcessesUtilizationInfo(h, &info); });
    std::vector<nvmlProcessUtilizationInfo_v1_t> buf;
    for (int a = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && a < kMaxSizeRetries; ++a) {
      buf.assign(DriverListEntries(info.processSamplesCount, 0, 100), {});  // count may be 0
      info.processSamplesCount = static_cast<unsigned int>(buf.size());
      info.procUtilArray = buf.data();
      rc = Call(*name, [&] { return api.nvmlDeviceGetProcessesUtilizationInfo(h, &info); });
    }
    if (rc == NVML_SUCCESS)
      for (unsigned int i = 0; i < info.processSamplesCount && i < buf.size(); ++i)
        out.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil});
  } else if (api.nvmlDeviceGetProcessUtilization) {
    *name = "nvmlDeviceGetProcessUtilization";
    unsigned int count = 0;
    rc = Call(*name,
              [&] { return api.nvmlDeviceGetProcessUtilization(h, nullptr, &count, since_us); });
    std::vector<nvmlProcessUtilizationSample_t> buf;
    for (int a = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && a < kMaxSizeRetries; ++a) {
      buf.assign(DriverListEntries(count, 0, 100), {});
      count = static_cast<unsigned int>(buf.size());
      rc = Call(*name, [&] {
        return api.nvmlDeviceGetProcessUtilization(h, buf.data(), &count, since_us);
      });
    }
    if (rc == NVML_SUCCESS)
      for (unsigned int i = 0; i < count && i < buf.size(); ++i)
        out.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil});
  }
  return rc;
}

// The driver keeps a ring of sample periods (NVML's buffer); a window longer than the ring loses
// its oldest part. When a read's first sample comes more than a period after the window's start,
// the gap is either idle time (no process was busy: NVML then writes no sample) or samples the
// ring dropped. One more read with lastSeenTimeStamp 0 (the whole ring) tells them apart: if the
// ring reaches back before the window, the gap was idle. If it does not, and the ring is full, the
// time before its oldest sample is uncovered. Full: its span did not grow since an earlier
// whole-ring read, or its oldest sample is newer than that read's (a ring still filling holds
// everything since the GPU's first sample, and keeps its oldest). The first read of a GPU is a
// whole-ring read too; while no read has shown a sample in the ring (an idle GPU since the agent
// started), whether it dropped any is not known, and the gap is uncovered: not taken for idle.
// A window with no sample at all is such a gap too once it is longer than the ring's span seen:
// an empty ring then says nothing was busy in its span, not before it (a burst early in a 15 s
// window, gone from a 10.7 s ring, was read as an idle window and its busy time lost).
void NvmlGpuSource::AccountUncovered(nvmlDevice_t h, gpu::DeviceSample& dev,
                                     const std::set<uint64_t>& stamps, uint64_t window_start_us,
                                     uint64_t now_us, uint64_t period_us, bool first_read) {
  const auto seen = util_span_us_.find(dev.uuid);
  const uint64_t seen_span = seen == util_span_us_.end() ? 0 : seen->second;
  // Half a period of slack: stamps jitter, and a window that only just misses its first period
  // is not worth a whole-buffer read (nor an estimate).
  const uint64_t slack = period_us + period_us / 2;
  const bool empty_gap = stamps.empty() && seen_span > 0 && now_us > window_start_us + seen_span &&
                         now_us - seen_span > window_start_us + slack;
  const bool gap = period_us > 0 &&
                   (empty_gap || (!stamps.empty() && *stamps.begin() > window_start_us + slack));
  if (!gap && !first_read) return;
  std::vector<gpu::ProcessUtilSample> ring;
  const char* name = "";
  const nvmlReturn_t rc = ReadUtilSamples(h, 0, ring, &name);
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND) return;
  std::set<uint64_t> ring_stamps;
  // The main read's filter (values above 100 % are not samples), and nothing stamped after this
  // pass's read: the driver may have taken a sample between the two reads.
  for (const auto& u : ring)
    if (u.sm_percent <= 100 && u.memory_percent <= 100 && u.timestamp_us <= now_us)
      ring_stamps.insert(u.timestamp_us);
  if (ring_stamps.empty()) {
    if (gap && empty_gap) dev.process_util_uncovered_us = now_us - seen_span - window_start_us;
    return;
  }
  // The period, for this estimate only (the windows' period is learnt from the windows' own
  // samples: a stale or off-grid stamp in the buffer must not shrink it).
  uint64_t period = period_us;
  for (auto a = ring_stamps.begin(); period_us == 0 && std::next(a) != ring_stamps.end(); ++a)
    if (period == 0 || *std::next(a) - *a < period) period = *std::next(a) - *a;
  if (period == 0) return;
  // The buffer may have dropped a sample between the two reads: the window's own first stamp
  // bounds what it held.
  const uint64_t oldest =
      std::min(*ring_stamps.begin(), stamps.empty() ? UINT64_MAX : *stamps.begin());
  const uint64_t ring_span = *ring_stamps.rbegin() - *ring_stamps.begin() + period;
  auto& span = util_span_us_[dev.uuid];
  auto& ring_oldest = util_oldest_us_[dev.uuid];
  const bool full = span == 0 || ring_span <= span + period / 2 ||
                    (ring_oldest > 0 && *ring_stamps.begin() > ring_oldest);
  span = std::max(span, ring_span);
  ring_oldest = *ring_stamps.begin();
  // A window no longer than a span the buffer has been seen to hold lost nothing: the buffer keeps
  // a span of periods, busy or not, so a late first sample there is idle time before it. (Without
  // this, a burst 3 s into a 5 s window, after an idle start, counted those 3 s as lost.)
  const bool within_seen = seen_span > 0 && now_us <= window_start_us + seen_span + slack;
  if (gap && full && !within_seen && oldest > window_start_us + period + period / 2)
    dev.process_util_uncovered_us = oldest - period - window_start_us;
}

bool NvmlGpuSource::ReadProcessUtilization(nvmlDevice_t h, gpu::DeviceSample& dev,
                                           uint64_t now_us) {
  auto it = last_seen_us_.find(dev.uuid);
  const bool first_read = it == last_seen_us_.end();
  const uint64_t last_seen = !first_read ? it->second : now_us - options_.first_util_lookback_us;
  dev.process_util_window_start_us = last_seen;
  dev.process_util_window_end_us = now_us;
  uint64_t newest = last_seen;
  std::vector<gpu::ProcessUtilSample> read;
  const char* name = "";
  const nvmlReturn_t rc = ReadUtilSamples(h, last_seen, read, &name);
  for (const auto& u : read) {
    // Values above 100 % occur (nvtop#110) and stale samples can come back: drop both.
    if (u.sm_percent > 100 || u.memory_percent > 100 || u.timestamp_us <= last_seen) continue;
    dev.process_util.push_back(u);
    newest = std::max(newest, u.timestamp_us);
  }
  if (rc == NVML_ERROR_NOT_SUPPORTED) {
    dev.process_utilization_supported = false;
    return true;
  }
  // NOT_FOUND: no sample newer than last_seen, i.e. no process was busy. Not an error.
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND) {
    Check(dev, name, rc);
    // A failed read is no sample, not an idle window: this pass has no per-process utilization
    // (its split is not known), and the window stays open, so the next read takes the samples
    // the driver still holds from where this one failed.
    dev.process_util.clear();
    dev.process_utilization_supported = false;
    return false;
  }
  // The driver stamps samples on a fixed period grid. Once the period is known, the window ends
  // at the last period boundary before now and the next one starts there, so every driver
  // period is counted in exactly one window (the share divides by whole periods).
  std::set<uint64_t> stamps;
  for (const auto& u : dev.process_util) stamps.insert(u.timestamp_us);
  auto& period = util_period_us_[dev.uuid];
  for (auto a = stamps.begin(); a != stamps.end() && std::next(a) != stamps.end(); ++a) {
    const uint64_t gap = *std::next(a) - *a;
    if (period == 0 || gap < period) period = gap;
  }
  AccountUncovered(h, dev, stamps, last_seen, now_us, period, first_read);
  if (period > 0) dev.process_util_period_us = period;
  if (auto sp = util_span_us_.find(dev.uuid); sp != util_span_us_.end() && sp->second > 0)
    dev.process_util_buffer_span_us = sp->second;
  const bool anchored = !stamps.empty() || !first_read;  // newest is a stamp or a boundary
  if (period > 0 && anchored && now_us >= newest) {
    dev.process_util_window_end_us = newest + (now_us - newest) / period * period;
    last_seen_us_[dev.uuid] = dev.process_util_window_end_us;
  } else if (stamps.empty()) {
    // Nothing was busy, and no period grid to align to: the next window starts at this read
    // (the driver stamps a sample when it takes it, so none taken later is stamped before now).
    // Kept at the old start, an idle GPU's first busy window reached back to the agent's start
    // and its shares were divided over all that time: the busy time went unattributed.
    // Never backwards (a wall clock stepped back): samples already counted stay counted once.
    last_seen_us_[dev.uuid] = std::max(now_us, last_seen);
  } else {
    last_seen_us_[dev.uuid] = std::max(newest, last_seen);
  }
  return true;
}

void NvmlGpuSource::ReadMigInstances(nvmlDevice_t h, gpu::DeviceSample& dev) {
  const NvmlApi& api = lib_->api();
  unsigned int max = 0;
  if (!Check(dev, "nvmlDeviceGetMaxMigDeviceCount", Call("nvmlDeviceGetMaxMigDeviceCount", [&] {
               return api.nvmlDeviceGetMaxMigDeviceCount(h, &max);
             })))
    return;
  for (unsigned int i = 0; i < max && !dev.lost; ++i) {
    nvmlDevice_t mh = nullptr;
    const nvmlReturn_t rc = Call("nvmlDeviceGetMigDeviceHandleByIndex", [&] {
      return api.nvmlDeviceGetMigDeviceHandleByIndex(h, i, &mh);
    });
    if (rc == NVML_ERROR_NOT_FOUND) continue;  // indices may be sparse: keep going
    if (!Check(dev, "nvmlDeviceGetMigDeviceHandleByIndex", rc)) continue;
    gpu::MigInstanceSample mig;
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (!Check(dev, "nvmlDeviceGetUUID(mig)", Call("nvmlDeviceGetUUID", [&] {
                 return api.nvmlDeviceGetUUID(mh, buf, sizeof buf);
               })))
      continue;
    mig.uuid = buf;
    if (Check(dev, "nvmlDeviceGetName(mig)", Call("nvmlDeviceGetName", [&] {
                return api.nvmlDeviceGetName(mh, buf, sizeof buf);
              })))
      mig.name = buf;
    unsigned int id = 0;
    if (api.nvmlDeviceGetGpuInstanceId &&
        Check(dev, "nvmlDeviceGetGpuInstanceId", Call("nvmlDeviceGetGpuInstanceId", [&] {
                return api.nvmlDeviceGetGpuInstanceId(mh, &id);
              })))
      mig.gpu_instance_id = id;
    if (api.nvmlDeviceGetComputeInstanceId &&
        Check(dev, "nvmlDeviceGetComputeInstanceId", Call("nvmlDeviceGetComputeInstanceId", [&] {
                return api.nvmlDeviceGetComputeInstanceId(mh, &id);
              })))
      mig.compute_instance_id = id;
    mig.memory = ReadMemory(mh, dev);
    mig.processes = ReadProcesses(mh, dev, mig.memory ? mig.memory->total_bytes : 0);
    // An instance's profile is fixed for its life (reconfiguring MIG gives new UUIDs): ask once.
    if (auto known = mig_slices_.find(mig.uuid); known != mig_slices_.end())
      mig.slices = known->second;
    else if ((mig.slices = InstanceSlices(h, mig.gpu_instance_id, dev)))
      mig_slices_.emplace(mig.uuid, *mig.slices);
    if (api.nvmlGpmMigSampleGet) {
      const auto gpm = GpmActivity(dev.uuid + "/gi" + std::to_string(mig.gpu_instance_id), h,
                                   mig.gpu_instance_id, dev);
      mig.sm_active_ratio = gpm.sm;
      mig.dram_bw_ratio = gpm.dram_bw;
    }
    dev.mig_instances.push_back(std::move(mig));
  }
  if (auto it = gi_profile_slices_.find(dev.uuid); it != gi_profile_slices_.end())
    for (const auto& [id, slices] : it->second)
      if (!dev.mig_total_slices || slices > *dev.mig_total_slices) dev.mig_total_slices = slices;
}

std::optional<uint32_t> NvmlGpuSource::InstanceSlices(nvmlDevice_t h, unsigned int gi_id,
                                                      gpu::DeviceSample& dev) {
  const NvmlApi& api = lib_->api();
  if (!api.nvmlDeviceGetGpuInstanceProfileInfo || !api.nvmlDeviceGetGpuInstanceById ||
      !api.nvmlGpuInstanceGetInfo)
    return std::nullopt;
  auto table = gi_profile_slices_.find(dev.uuid);
  if (table == gi_profile_slices_.end()) {
    // Profiles are fixed per GPU model: read them once. Indices run until INVALID_ARGUMENT;
    // NOT_SUPPORTED marks a profile this GPU lacks (nvml-abi §6.1).
    std::map<unsigned int, unsigned int> slices;
    for (unsigned int index = 0; index < 64; ++index) {
      nvmlGpuInstanceProfileInfo_t info{};
      const nvmlReturn_t rc = Call("nvmlDeviceGetGpuInstanceProfileInfo", [&] {
        return api.nvmlDeviceGetGpuInstanceProfileInfo(h, index, &info);
      });
      if (rc == NVML_ERROR_INVALID_ARGUMENT) break;
      if (rc == NVML_ERROR_NOT_SUPPORTED) continue;
      if (!Check(dev, "nvmlDeviceGetGpuInstanceProfileInfo", rc))
        return std::nullopt;  // try again next pass
      if (info.sliceCount > 0) slices[info.id] = info.sliceCount;
    }
    table = gi_profile_slices_.emplace(dev.uuid, std::move(slices)).first;
  }
  nvmlGpuInstance_t gi = nullptr;
  if (!Check(dev, "nvmlDeviceGetGpuInstanceById", Call("nvmlDeviceGetGpuInstanceById", [&] {
               return api.nvmlDeviceGetGpuInstanceById(h, gi_id, &gi);
             })))
    return std::nullopt;
  nvmlGpuInstanceInfo_t info{};
  if (!Check(dev, "nvmlGpuInstanceGetInfo",
             Call("nvmlGpuInstanceGetInfo", [&] { return api.nvmlGpuInstanceGetInfo(gi, &info); })))
    return std::nullopt;
  const auto it = table->second.find(info.profileId);
  if (it == table->second.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpumeter::nvml
