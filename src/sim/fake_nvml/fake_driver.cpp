#include "sim/fake_nvml/fake_driver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

#include "sim/scenario/loader.h"

namespace gpumeter::fake {
namespace {

constexpr double kGpmMinIntervalS = 0.1;  // GPM samples must be > 100 ms apart

nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned int len) {
  if (!buf) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

double EnvDouble(const char* name, double def) {
  const char* v = std::getenv(name);
  if (!v || !*v) return def;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  return (end && *end == '\0' && std::isfinite(d)) ? d : def;
}

}  // namespace

FakeDriver& Driver() {
  static FakeDriver driver;
  return driver;
}

nvmlReturn_t FakeDriver::Init() {
  std::lock_guard lock(mu_);
  if (refcount_ > 0) {
    ++refcount_;  // init is reference-counted
    return NVML_SUCCESS;
  }
  const char* path = std::getenv("GPUMETER_FAKE_NVML_SCENARIO");
  if (!path || !*path) return NVML_ERROR_DRIVER_NOT_LOADED;  // as on a node without a driver
  auto loaded = scenario::LoadScenarioFile(path);
  if (!loaded) {
    std::fprintf(stderr, "fake NVML: %s\n", loaded.error().message.c_str());
    return NVML_ERROR_UNKNOWN;
  }
  scenario_ = std::make_unique<scenario::Scenario>(std::move(*loaded));
  handles_.clear();
  gpu_instances_.clear();
  for (size_t g = 0; g < scenario_->gpus.size(); ++g) {
    handles_.push_back({g, -1});
    for (size_t m = 0; m < scenario_->gpus[g].mig_instances.size(); ++m) {
      handles_.push_back({g, static_cast<int>(m)});
      gpu_instances_.push_back({g, m});
    }
  }
  speedup_ = EnvDouble("GPUMETER_FAKE_NVML_SPEEDUP", 1.0);
  offset_s_ = EnvDouble("GPUMETER_FAKE_NVML_START_S", 0.0);
  start_ = std::chrono::steady_clock::now();
  // Sample timestamps are this epoch + scenario time. A harness that steps the clock passes its own
  // epoch, so its wall clock and the driver's stamps agree exactly (no real-time skew between
  // them).
  epoch_at_start_us_ =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  if (const char* e = std::getenv("GPUMETER_FAKE_NVML_EPOCH_US"); e && *e)
    epoch_at_start_us_ = std::strtoull(e, nullptr, 10);
  manual_t_s_.reset();
  refcount_ = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::Shutdown() {
  std::lock_guard lock(mu_);
  if (refcount_ > 0 && --refcount_ == 0) {
    scenario_.reset();
    // GPM samples stay allocated (callers free them); their device pointers go stale.
  }
  return NVML_SUCCESS;  // extra shutdowns are tolerated
}

void FakeDriver::SetTime(double t_s) {
  std::lock_guard lock(mu_);
  manual_t_s_ = t_s;
}

double FakeDriver::NowLocked() const {
  if (manual_t_s_) return *manual_t_s_;
  const double real =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return offset_s_ + real * speedup_;
}

uint64_t FakeDriver::EpochUsLocked(double t_s) const {
  return epoch_at_start_us_ + static_cast<uint64_t>(std::llround((t_s - offset_s_) * 1e6));
}

nvmlDevice_t FakeDriver::ParentHandleLocked(size_t gpu) {
  for (auto& h : handles_)
    if (h.gpu == gpu && h.mig < 0) return &h;
  return nullptr;
}

bool FakeDriver::ValidHandle(nvmlDevice_t d) const {
  for (const auto& h : handles_)
    if (&h == d) return true;
  return false;
}

std::string FakeDriver::UnitUuid(nvmlDevice_t d) const {
  const auto& g = GpuOf(d);
  return d->mig < 0 ? g.uuid : g.mig_instances[static_cast<size_t>(d->mig)].uuid;
}

nvmlReturn_t FakeDriver::EnterSystem(const char* call) { return Enter(call, nullptr); }

nvmlReturn_t FakeDriver::Enter(const char* call, nvmlDevice_t device) {
  uint32_t delay_ms = 0;
  nvmlReturn_t rc = NVML_SUCCESS;
  {
    std::lock_guard lock(mu_);
    if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;
    if (device && !ValidHandle(device)) return NVML_ERROR_INVALID_ARGUMENT;
    const double t = NowLocked();
    for (const auto& f : scenario_->faults) {
      if (t < f.from_s || (f.to_s && t >= *f.to_s)) continue;
      const bool gpu_match = !f.gpu_index || (device && GpuOf(device).index == *f.gpu_index);
      const bool call_match = f.call == "*" || f.call == call;
      if (f.kind == scenario::FaultKind::kGpuLost && device && gpu_match)
        return NVML_ERROR_GPU_IS_LOST;
      if (!call_match || !(gpu_match || (!device && !f.gpu_index))) continue;
      if (f.kind == scenario::FaultKind::kCallError && rc == NVML_SUCCESS) rc = f.code;
      if (f.kind == scenario::FaultKind::kDelay) delay_ms = std::max(delay_ms, f.delay_ms);
    }
  }
  // A hung driver call: block without holding the lock, as a slow ioctl would.
  if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  return rc;
}

nvmlReturn_t FakeDriver::DriverVersion(char* buf, unsigned int len) {
  std::lock_guard lock(mu_);
  return CopyString(scenario_->driver.version, buf, len);
}

nvmlReturn_t FakeDriver::NvmlVersion(char* buf, unsigned int len) {
  std::lock_guard lock(mu_);
  return CopyString(scenario_->driver.nvml_version, buf, len);
}

nvmlReturn_t FakeDriver::Count(unsigned int* count) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  *count = static_cast<unsigned int>(scenario_->gpus.size());  // _v2 counts forbidden GPUs too
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::HandleByIndex(unsigned int index, nvmlDevice_t* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (index >= scenario_->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  // NVML's enumeration order is the scenario's order; `index` in the file is informational.
  for (auto& h : handles_) {
    if (h.gpu == index && h.mig < 0) {
      if (scenario_->gpus[index].forbidden) return NVML_ERROR_NO_PERMISSION;
      *out = &h;
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t FakeDriver::Uuid(nvmlDevice_t d, char* buf, unsigned int len) {
  std::lock_guard lock(mu_);
  return CopyString(UnitUuid(d), buf, len);
}

nvmlReturn_t FakeDriver::Name(nvmlDevice_t d, char* buf, unsigned int len) {
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  const std::string name =
      d->mig < 0 ? g.model
                 : g.model + " MIG " + g.mig_instances[static_cast<size_t>(d->mig)].profile;
  return CopyString(name, buf, len);
}

nvmlReturn_t FakeDriver::Memory(nvmlDevice_t d, unsigned long long* total,
                                unsigned long long* reserved, unsigned long long* used, bool v2) {
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  const double t = NowLocked();
  uint64_t process_bytes = 0;
  if (d->mig >= 0) {
    const auto& m = g.mig_instances[static_cast<size_t>(d->mig)];
    *total = m.memory_bytes;
    *reserved = 0;
    process_bytes = scenario::UnitAt(*scenario_, m.uuid, t).process_memory_bytes;
  } else {
    *total = g.memory_bytes;
    *reserved = g.reserved_bytes;
    if (g.mig_enabled) {
      for (const auto& m : g.mig_instances)
        process_bytes += scenario::UnitAt(*scenario_, m.uuid, t).process_memory_bytes;
    } else {
      process_bytes = scenario::UnitAt(*scenario_, g.uuid, t).process_memory_bytes;
    }
  }
  // v1 counts the driver reservation as used; v2 reports it apart (docs/nvml.md §2.4).
  *used = std::min<unsigned long long>(*total - *reserved, process_bytes) + (v2 ? 0 : *reserved);
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::Utilization(nvmlDevice_t d, nvmlUtilization_t* u) {
  if (!u) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || g.mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
  const auto truth = scenario::UnitAt(*scenario_, g.uuid, NowLocked());
  u->gpu = static_cast<unsigned int>(std::lround(truth.busy * 100));
  u->memory = static_cast<unsigned int>(std::lround(truth.memory_busy * 100));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::Power(nvmlDevice_t d, unsigned int* mw) {
  if (!mw) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *mw = static_cast<unsigned int>(
      std::lround(scenario::GpuPowerWattsAt(*scenario_, GpuOf(d), NowLocked()) * 1000));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::Energy(nvmlDevice_t d, unsigned long long* mj) {
  if (!mj) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *mj = static_cast<unsigned long long>(
      std::floor(scenario::GpuEnergyJoulesAt(*scenario_, GpuOf(d), NowLocked()) * 1000));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::ComputeMode(nvmlDevice_t d, int* mode) {
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig < 0 && g.mig_enabled) return NVML_ERROR_NOT_SUPPORTED;  // needs a MIG handle
  switch (g.compute_mode) {
    case scenario::ComputeMode::kExclusiveProcess:
      *mode = NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
      break;
    case scenario::ComputeMode::kProhibited:
      *mode = NVML_COMPUTEMODE_PROHIBITED;
      break;
    default:
      *mode = NVML_COMPUTEMODE_DEFAULT;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::Processes(nvmlDevice_t d, bool mps, unsigned int* count, void* buf,
                                   size_t stride) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  const double t = NowLocked();
  struct Entry {
    unsigned int pid;
    unsigned long long mem;
    unsigned int gi, ci;
  };
  std::vector<Entry> entries;
  auto add_unit = [&](const std::string& uuid, unsigned int gi, unsigned int ci) {
    for (const auto& pt : scenario::UnitAt(*scenario_, uuid, t).processes) {
      if ((pt.process->list == scenario::ProcessList::kMps) != mps) continue;
      entries.push_back({pt.process->pid, pt.memory_bytes, gi, ci});
    }
  };
  if (d->mig >= 0) {
    const auto& m = g.mig_instances[static_cast<size_t>(d->mig)];
    add_unit(m.uuid, m.gi_id, m.ci_id);
  } else if (g.mig_enabled) {
    for (const auto& m : g.mig_instances) add_unit(m.uuid, m.gi_id, m.ci_id);  // aggregate view
  } else {
    add_unit(g.uuid, NVML_VALUE_NOT_AVAILABLE_UINT, NVML_VALUE_NOT_AVAILABLE_UINT);
  }
  if (entries.empty()) {
    *count = 0;
    return NVML_SUCCESS;
  }
  if (*count < entries.size() || !buf) {
    if (*count >= entries.size()) return NVML_ERROR_INVALID_ARGUMENT;  // capacity but no buffer
    *count = static_cast<unsigned int>(entries.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  auto* out = static_cast<unsigned char*>(buf);
  std::memset(out, 0, entries.size() * stride);
  for (size_t i = 0; i < entries.size(); ++i) {
    unsigned char* e = out + i * stride;
    std::memcpy(e, &entries[i].pid, sizeof(unsigned int));
    std::memcpy(e + 8, &entries[i].mem, sizeof(unsigned long long));
    if (stride >= 24) {
      std::memcpy(e + 16, &entries[i].gi, sizeof(unsigned int));
      std::memcpy(e + 20, &entries[i].ci, sizeof(unsigned int));
    }
  }
  *count = static_cast<unsigned int>(entries.size());
  return NVML_SUCCESS;
}

namespace {
struct UtilSample {
  unsigned int pid;
  unsigned long long ts;
  unsigned int sm, mem;
};

// Samples newer than last_seen_us from the driver's rolling buffer: one per busy process per
// period, stamped at the period's end. Processes with zero utilization (SM and memory) get no
// sample.
std::vector<UtilSample> CollectUtil(const scenario::Scenario& s, const std::string& unit,
                                    double now_s, double last_seen_s,
                                    const std::function<uint64_t(double)>& epoch_us) {
  std::vector<UtilSample> out;
  const long k_max = static_cast<long>(std::floor(now_s / kUtilPeriodS));
  long k_min = static_cast<long>(std::floor(last_seen_s / kUtilPeriodS)) + 1;
  k_min = std::max({k_min, k_max - kUtilBufferPeriods + 1, 1L});
  for (long k = k_min; k <= k_max; ++k) {
    const double end = static_cast<double>(k) * kUtilPeriodS;
    const auto truth = scenario::UnitAt(s, unit, end - kUtilPeriodS / 2);
    for (const auto& pt : truth.processes) {
      const auto sm = static_cast<unsigned int>(std::lround(pt.sm_share * 100));
      const auto mem = static_cast<unsigned int>(std::lround(pt.memory_share * 100));
      if (sm == 0 && mem == 0) continue;
      out.push_back({pt.process->pid, epoch_us(end), sm, mem});
    }
  }
  return out;
}
}  // namespace

nvmlReturn_t FakeDriver::ProcessUtil(nvmlDevice_t d, unsigned long long last_seen_us,
                                     unsigned int* count, nvmlProcessUtilizationSample_t* samples) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || g.mig_enabled || !g.per_process_utilization) return NVML_ERROR_NOT_SUPPORTED;
  const double last_s =
      last_seen_us <= epoch_at_start_us_
          ? -1e9
          : offset_s_ + static_cast<double>(last_seen_us - epoch_at_start_us_) / 1e6;
  const auto all = CollectUtil(*scenario_, g.uuid, NowLocked(), last_s,
                               [this](double t) { return EpochUsLocked(t); });
  std::vector<UtilSample> fresh;
  for (const auto& s : all)
    if (s.ts > last_seen_us) fresh.push_back(s);
  if (fresh.empty()) return NVML_ERROR_NOT_FOUND;
  if (!samples || *count < fresh.size()) {
    *count = static_cast<unsigned int>(fresh.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (size_t i = 0; i < fresh.size(); ++i)
    samples[i] = {fresh[i].pid, fresh[i].ts, fresh[i].sm, fresh[i].mem, 0, 0};
  *count = static_cast<unsigned int>(fresh.size());
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::ProcessesUtilInfo(nvmlDevice_t d,
                                           nvmlProcessesUtilizationInfo_v1_t* info) {
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != nvmlProcessesUtilizationInfo_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  std::vector<nvmlProcessUtilizationSample_t> tmp(info->procUtilArray ? info->processSamplesCount
                                                                      : 0);
  unsigned int count = info->procUtilArray ? info->processSamplesCount : 0;
  const nvmlReturn_t rc =
      ProcessUtil(d, info->lastSeenTimeStamp, &count, tmp.empty() ? nullptr : tmp.data());
  info->processSamplesCount = count;
  if (rc != NVML_SUCCESS) return rc;
  for (unsigned int i = 0; i < count; ++i)
    info->procUtilArray[i] = {
        tmp[i].timeStamp, tmp[i].pid, tmp[i].smUtil, tmp[i].memUtil, 0, 0, 0, 0};
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::MigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = GpuOf(d).mig_enabled ? 1 : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::MaxMigCount(nvmlDevice_t d, unsigned int* count) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  *count = g.mig_enabled ? g.mig_total_slices : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::MigHandle(nvmlDevice_t d, unsigned int index, nvmlDevice_t* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || !g.mig_enabled) return NVML_ERROR_INVALID_ARGUMENT;
  if (index >= g.mig_total_slices) return NVML_ERROR_INVALID_ARGUMENT;
  for (auto& h : handles_) {
    if (h.gpu == d->gpu && h.mig == static_cast<int>(index)) {
      *out = &h;
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;  // no MIG device at this index
}

nvmlReturn_t FakeDriver::InstanceId(nvmlDevice_t d, bool compute, unsigned int* id) {
  if (!id) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;  // only MIG handles have instance ids
  const auto& m = GpuOf(d).mig_instances[static_cast<size_t>(d->mig)];
  *id = compute ? m.ci_id : m.gi_id;
  return NVML_SUCCESS;
}

namespace {
// GPU-instance profile indices 0..4 (1_SLICE … 7_SLICE) and their profile IDs on an H100 80GB
// (nvml-abi §6.1); the fake uses them for every MIG GPU. A scenario's full-GPU slice count
// replaces 7 for the largest profile.
struct GiProfile {
  unsigned int slices, id;
};
constexpr GiProfile kGiProfiles[] = {{1, 19}, {2, 14}, {3, 9}, {4, 5}, {7, 0}};
constexpr unsigned int kGiProfileIndexCount = 0x12;  // NVML_GPU_INSTANCE_PROFILE_COUNT (13.3)

unsigned int ProfileIdForSlices(unsigned int slices) {
  for (const auto& p : kGiProfiles)
    if (p.slices == slices) return p.id;
  return 0;
}
}  // namespace

nvmlReturn_t FakeDriver::GiProfileInfo(nvmlDevice_t d, unsigned int profile,
                                       nvmlGpuInstanceProfileInfo_t* info) {
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (profile >= kGiProfileIndexCount) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g.mig_enabled || profile >= std::size(kGiProfiles)) return NVML_ERROR_NOT_SUPPORTED;
  const bool full = profile + 1 == std::size(kGiProfiles);
  const unsigned int slices = full ? g.mig_total_slices : kGiProfiles[profile].slices;
  *info = {};
  info->id = kGiProfiles[profile].id;
  info->sliceCount = slices;
  info->instanceCount = g.mig_total_slices / slices;
  info->memorySizeMB = g.memory_bytes / (1024 * 1024) * slices / g.mig_total_slices;
  for (const auto& m : g.mig_instances)  // the scenario's own size where it has one
    if (m.slices == slices) info->memorySizeMB = m.memory_bytes / (1024 * 1024);
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::GiById(nvmlDevice_t d, unsigned int id, nvmlGpuInstance_t* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!GpuOf(d).mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
  for (auto& gi : gpu_instances_) {
    if (gi.gpu == d->gpu && GpuOf(d).mig_instances[gi.mig].gi_id == id) {
      *out = &gi;
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t FakeDriver::GiInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t* info) {
  if (!info || !gi) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  bool valid = false;
  for (const auto& g : gpu_instances_) valid = valid || &g == gi;
  if (!valid) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& m = scenario_->gpus[gi->gpu].mig_instances[gi->mig];
  *info = {};
  for (auto& h : handles_)
    if (h.gpu == gi->gpu && h.mig < 0) info->device = &h;
  info->id = m.gi_id;
  info->profileId = ProfileIdForSlices(m.slices);
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::GpmSupport(nvmlDevice_t d, nvmlGpmSupport_t* s) {
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (s->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  std::lock_guard lock(mu_);
  s->isSupportedDevice = GpuOf(d).gpm_supported ? 1 : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::GpmAlloc(nvmlGpmSample_t* s) {
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  *s = new nvmlGpmSample_st{};
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::GpmFree(nvmlGpmSample_t s) {
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  delete s;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::GpmSampleGet(nvmlDevice_t d, int gi, nvmlGpmSample_t s) {
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (!g.gpm_supported) return NVML_ERROR_NOT_SUPPORTED;
  if (gi >= 0) {
    if (d->mig >= 0 || !g.mig_enabled) return NVML_ERROR_INVALID_ARGUMENT;
    const bool known = std::any_of(g.mig_instances.begin(), g.mig_instances.end(),
                                   [&](const auto& m) { return static_cast<int>(m.gi_id) == gi; });
    if (!known) return NVML_ERROR_NOT_FOUND;
  }
  *s = {d, gi, NowLocked()};
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::GpmMetrics(nvmlGpmMetricsGet_t* m) {
  if (!m || !m->sample1 || !m->sample2) return NVML_ERROR_INVALID_ARGUMENT;
  if (m->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (m->numMetrics > kGpmMetricSlots) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const nvmlGpmSample_st a = *m->sample1, b = *m->sample2;
  if (!a.device || a.device != b.device || a.gi != b.gi || !ValidHandle(a.device))
    return NVML_ERROR_INVALID_ARGUMENT;
  const auto& g = GpuOf(a.device);
  for (unsigned int i = 0; i < m->numMetrics; ++i) {
    auto& metric = m->metrics[i];  // only the first numMetrics entries are read
    const bool dram = metric.metricId == NVML_GPM_METRIC_DRAM_BW_UTIL;
    if (metric.metricId != NVML_GPM_METRIC_SM_UTIL && !dram) {
      metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    if (b.t_s - a.t_s < kGpmMinIntervalS) {
      metric.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
      continue;
    }
    // SM activity, or the memory's share of its peak bandwidth (DRAM_BW_UTIL), of the GPU, a GPU
    // instance (its compute instances together) or a MIG device.
    const auto unit_s = [&](const std::string& unit) {
      return dram ? scenario::UnitMemoryBusySeconds(*scenario_, unit, a.t_s, b.t_s)
                  : scenario::UnitBusySeconds(*scenario_, unit, a.t_s, b.t_s);
    };
    double busy_s = 0;
    if (a.gi >= 0) {
      for (const auto& mi : g.mig_instances)
        if (static_cast<int>(mi.gi_id) == a.gi) busy_s += unit_s(mi.uuid);
    } else if (a.device->mig >= 0) {
      busy_s = unit_s(UnitUuid(a.device));
    } else {
      busy_s = dram ? scenario::GpuMemoryBusySeconds(*scenario_, g, a.t_s, b.t_s)
                    : scenario::GpuBusySeconds(*scenario_, g, a.t_s, b.t_s);
    }
    metric.value = 100.0 * busy_s / (b.t_s - a.t_s);
    metric.nvmlReturn = NVML_SUCCESS;
  }
  return NVML_SUCCESS;
}

}  // namespace gpumeter::fake
