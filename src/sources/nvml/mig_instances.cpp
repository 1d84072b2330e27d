// The MIG instances of a MIG-enabled GPU: identity, memory, processes, compute slices (from the
// GPU instance's profile) and GPM activity per GPU instance; the GPU's total slices.
#include <map>
#include <string>

#include "sources/nvml/device_readers.h"

namespace gpumeter::nvml {
namespace {

// The names a MIG handle's identity failures are recorded under: not the GPU's own.
constexpr const char* kMigUuidCall = "nvmlDeviceGetUUID(mig)";
constexpr const char* kMigNameCall = "nvmlDeviceGetName(mig)";

// Profiles are fixed per GPU model: read once. Indices run until INVALID_ARGUMENT; NOT_SUPPORTED
// marks a profile this GPU lacks (nvml-abi §6.1). False when a read failed (tried again next
// pass).
bool ReadProfiles(const DeviceRead& r) {
  constexpr Sym kCall = Sym::nvmlDeviceGetGpuInstanceProfileInfo;
  std::map<unsigned int, unsigned int> slices;
  for (unsigned int index = 0; index < 64; ++index) {
    nvmlGpuInstanceProfileInfo_t info{};
    const nvmlReturn_t rc = r.Call<kCall>(r.h, index, &info);
    if (rc == NVML_ERROR_INVALID_ARGUMENT) break;
    if (rc == NVML_ERROR_NOT_SUPPORTED) continue;
    if (!r.Check<kCall>(rc)) return false;
    if (info.sliceCount > 0) slices[info.id] = info.sliceCount;
  }
  r.gpu.gi_profile_slices = std::move(slices);
  return true;
}

// Compute slices of the GPU instance `gi_id`, from its profile; unknown if NVML cannot say.
std::optional<uint32_t> InstanceSlices(const DeviceRead& r, unsigned int gi_id) {
  const NvmlApi& api = r.api();
  if (!api.nvmlDeviceGetGpuInstanceProfileInfo || !api.nvmlDeviceGetGpuInstanceById ||
      !api.nvmlGpuInstanceGetInfo)
    return std::nullopt;
  if (!r.gpu.gi_profile_slices && !ReadProfiles(r)) return std::nullopt;
  nvmlGpuInstance_t gi = nullptr;
  if (!r.Ok<Sym::nvmlDeviceGetGpuInstanceById>(r.h, gi_id, &gi)) return std::nullopt;
  nvmlGpuInstanceInfo_t info{};
  if (!r.Ok<Sym::nvmlGpuInstanceGetInfo>(gi, &info)) return std::nullopt;
  const auto it = r.gpu.gi_profile_slices->find(info.profileId);
  if (it == r.gpu.gi_profile_slices->end()) return std::nullopt;
  return it->second;
}

// One instance behind its MIG handle `mh`, failures recorded on the GPU; false when it cannot be
// named (its UUID failed).
bool ReadInstance(const DeviceRead& r, nvmlDevice_t mh, ProcessLists& procs,
                  gpu::MigInstanceSample& mig) {
  const NvmlApi& api = r.api();
  char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  constexpr unsigned int kBufSize = sizeof buf;
  if (!r.Check(kMigUuidCall, r.Call<Sym::nvmlDeviceGetUUID>(mh, buf, kBufSize))) return false;
  mig.uuid = buf;
  if (r.Check(kMigNameCall, r.Call<Sym::nvmlDeviceGetName>(mh, buf, kBufSize))) mig.name = buf;
  unsigned int id = 0;
  if (api.nvmlDeviceGetGpuInstanceId && r.Ok<Sym::nvmlDeviceGetGpuInstanceId>(mh, &id))
    mig.gpu_instance_id = id;
  if (api.nvmlDeviceGetComputeInstanceId && r.Ok<Sym::nvmlDeviceGetComputeInstanceId>(mh, &id))
    mig.compute_instance_id = id;
  mig.memory = ReadMemory(r.nvml, mh, r.dev);
  mig.processes = procs.Read(r.nvml, mh, r.dev, mig.memory ? mig.memory->total_bytes : 0);
  // An instance's profile is fixed for its life (reconfiguring MIG gives new UUIDs): ask once.
  if (auto known = r.gpu.mig_slices.find(mig.uuid); known != r.gpu.mig_slices.end())
    mig.slices = known->second;
  else if ((mig.slices = InstanceSlices(r, mig.gpu_instance_id)))
    r.gpu.mig_slices.emplace(mig.uuid, *mig.slices);
  return true;
}

}  // namespace

void ReadMigInstances(const DeviceRead& r, ProcessLists& procs, const gpu::Capabilities& caps) {
  gpu::DeviceSample& dev = r.dev;
  unsigned int max = 0;
  if (!r.Ok<Sym::nvmlDeviceGetMaxMigDeviceCount>(r.h, &max)) return;
  for (unsigned int i = 0; i < max && !dev.lost; ++i) {
    constexpr Sym kHandle = Sym::nvmlDeviceGetMigDeviceHandleByIndex;
    nvmlDevice_t mh = nullptr;
    const nvmlReturn_t rc = r.Call<kHandle>(r.h, i, &mh);
    if (rc == NVML_ERROR_NOT_FOUND) continue;  // indices may be sparse: keep going
    if (!r.Check<kHandle>(rc)) continue;
    gpu::MigInstanceSample mig;
    if (!ReadInstance(r, mh, procs, mig)) continue;
    if (caps.gpm && r.api().nvmlGpmMigSampleGet) {
      const auto gpm = GpmActivity(r, mig.gpu_instance_id);
      mig.sm_active_ratio = gpm.sm;
      mig.dram_bw_ratio = gpm.dram_bw;
    }
    dev.mig_instances.push_back(std::move(mig));
  }
  if (r.gpu.gi_profile_slices)
    for (const auto& [id, slices] : *r.gpu.gi_profile_slices)
      if (!dev.mig_total_slices || slices > *dev.mig_total_slices) dev.mig_total_slices = slices;
}

}  // namespace gpumeter::nvml
