#include "core/allocation/sharing.h"

#include <algorithm>
#include <set>

#include "common/yaml/reader.h"
#include "core/allocation/device_id.h"

namespace gpumeter::k8s {

namespace {

// One resources[] entry of the section in use: its name and replicas, as the plugin reads them
// (yaml-cpp's integers, like the YAML 1.1 the plugin's own reader speaks).
void ReadResource(const yaml::Field& r, DevicePluginSharing& out) {
  const yaml::Field name = r.Get("name");
  if (!name.IsScalar()) name.Fail("missing");
  const yaml::Field replicas_field = r.Get("replicas");
  if (!replicas_field.Exists()) replicas_field.Fail("missing");
  const auto replicas = replicas_field.As<long>();
  if (!replicas) replicas_field.Fail("not a number");
  if (*replicas < 2 || *replicas > 1024)
    replicas_field.Fail("must be >= 2 (and at most 1024), got " + std::to_string(*replicas));
  out.replicas_by_resource[name.Str()] = static_cast<uint32_t>(*replicas);
}

DevicePluginSharing ReadPluginConfig(const yaml::Field& root) {
  const yaml::Field sharing = root.Get("sharing");
  if (!sharing.Exists()) root.Fail("no sharing section");
  if (!sharing.IsMap()) sharing.Fail("expected a mapping with mps or timeSlicing");
  DevicePluginSharing out;
  // MPS wins when it has resources (the plugin's own rule); time-slicing otherwise.
  const yaml::Field mps_resources = sharing.Get("mps").Get("resources");
  const bool use_mps = mps_resources.IsSequence() && mps_resources.Size() > 0;
  out.mode = use_mps ? domain::SharingMode::kMps : domain::SharingMode::kTimeSlicing;
  const yaml::Field section = sharing.Get(use_mps ? "mps" : "timeSlicing");
  if (!section.IsMap()) sharing.Fail("has neither mps nor timeSlicing");
  const yaml::Field resources = section.Get("resources");
  if (!resources.IsSequence() || resources.Size() == 0) resources.Fail("no resources specified");
  resources.ForEachItem([&](const yaml::Field& r) { ReadResource(r, out); });
  return out;
}

}  // namespace

Expected<DevicePluginSharing> ParseDevicePluginConfig(std::string_view text) {
  return yaml::Parse<DevicePluginSharing>(text, "device plugin config", ReadPluginConfig);
}

namespace {

struct Seen {
  std::set<std::string> resources;
  std::map<std::tuple<std::string, std::string, std::string>, std::set<uint32_t>>
      holders;  // -> replica IDs
  bool replica_ids = false;
  uint32_t max_replica = 0;
  bool dra = false;  // placed through a DRA claim
};

std::optional<uint32_t> Positive(const std::map<std::string, std::string>& labels,
                                 const char* key) {
  const auto it = labels.find(key);
  if (it == labels.end()) return std::nullopt;
  try {
    const long v = std::stol(it->second);
    if (v >= 1 && v <= 1024) return static_cast<uint32_t>(v);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

using Units = std::map<std::string, Seen>;  // by unit UUID

// Marks container `c` as holding something that could not be placed, and says why.
void Unplaced(AllocationResult& result, const ContainerAllocation& c, const std::string& problem) {
  result.unplaced.insert({c.ns, c.pod, c.container});
  result.problems.push_back(problem);
}

// The unit a device plugin's device ID names; nullopt (the container unplaced) when it names
// none on this node or none stably.
std::optional<std::string> UnitOfDeviceId(const DeviceId& id, const std::string& raw,
                                          const ContainerAllocation& c, const SharingEvidence& ev,
                                          AllocationResult& result) {
  if (id.kind == DeviceIdKind::kGpuUuid || id.kind == DeviceIdKind::kMigUuid) return id.uuid;
  if (id.kind == DeviceIdKind::kMigLegacy) {
    const auto it = ev.legacy_mig.find(UnitKey(id));
    if (it != ev.legacy_mig.end()) return it->second;
    Unplaced(result, c,
             c.ns + "/" + c.pod + "/" + c.container + ": device ID '" + raw +
                 "': no MIG instance with that GPU/instance ID on this node");
    return std::nullopt;
  }
  Unplaced(result, c,
           c.ns + "/" + c.pod + "/" + c.container + ": device ID '" + raw +
               "': index-based IDs do not name a GPU stably; not placed");
  return std::nullopt;
}

// The GPU devices the device plugin gave container `c`, by the unit they name.
void AddPluginDevices(const ContainerAllocation& c, const SharingEvidence& ev, Units& units,
                      AllocationResult& result) {
  for (const auto& d : c.devices) {
    if (!IsGpuResource(d.resource_name, ev.extra_gpu_resources)) continue;
    for (const auto& raw : d.device_ids) {
      auto id = ParseDeviceId(raw);
      if (!id) {
        Unplaced(result, c, c.ns + "/" + c.pod + "/" + c.container + ": " + id.error().message);
        continue;
      }
      const auto uuid = UnitOfDeviceId(*id, raw, c, ev, result);
      if (!uuid) continue;
      auto& u = units[*uuid];
      u.resources.insert(d.resource_name);
      u.holders[{c.ns, c.pod, c.container}].insert(id->replica.value_or(0));
      if (id->replica) {
        u.replica_ids = true;
        u.max_replica = std::max(u.max_replica, *id->replica);
      }
    }
  }
}

// The DRA claim devices of container `c`, placed through their ResourceSlice's uuid.
void AddClaimDevices(const ContainerAllocation& c, const SharingEvidence& ev, Units& units,
                     AllocationResult& result) {
  for (const auto& cd : c.claim_devices) {
    const std::string who = c.ns + "/" + c.pod + "/" + c.container + ": DRA device " + cd.driver +
                            "/" + cd.pool + "/" + cd.device;
    const auto it = ev.dra_devices.find({cd.driver, cd.pool, cd.device});
    if (it == ev.dra_devices.end()) {
      Unplaced(result, c,
               who + " (claim " + cd.claim_namespace + "/" + cd.claim_name +
                   "): no ResourceSlice of this node names it");
      continue;
    }
    if (!it->second.uuid) {
      Unplaced(
          result, c,
          who +
              ": its ResourceSlice has no uuid attribute (a dynamic MIG device not yet created?)");
      continue;
    }
    auto& u = units[*it->second.uuid];
    u.dra = true;
    u.holders[{c.ns, c.pod, c.container}].insert(0);
  }
}

// The evidence about one unit that its mode and replicas are decided from.
struct UnitEvidence {
  bool is_mig = false;
  const SharingEvidence::Configured* configured = nullptr;  // null: not configured
  std::optional<uint32_t> plugin_replicas, label_replicas;
  std::string strategy;  // node label nvidia.com/gpu.sharing-strategy, or ""
  bool shared_name = false;
};

UnitEvidence EvidenceOf(const std::string& uuid, const Seen& seen, const SharingEvidence& ev) {
  UnitEvidence e;
  e.is_mig = uuid.rfind("MIG-", 0) == 0 || ev.mig_parent.count(uuid);
  if (const auto conf = ev.configured.find(uuid); conf != ev.configured.end())
    e.configured = &conf->second;
  if (ev.plugin_config)
    for (const auto& r : seen.resources) {
      std::string base = r;
      if (IsSharedResourceName(base))
        base.resize(base.size() - 7);  // renameByDefault adds ".shared"
      if (auto it = ev.plugin_config->replicas_by_resource.find(base);
          it != ev.plugin_config->replicas_by_resource.end())
        e.plugin_replicas = it->second;
    }
  e.label_replicas = Positive(ev.node_labels, "nvidia.com/gpu.replicas");
  e.strategy = ev.node_labels.count("nvidia.com/gpu.sharing-strategy")
                   ? ev.node_labels.at("nvidia.com/gpu.sharing-strategy")
                   : "";
  e.shared_name = std::any_of(seen.resources.begin(), seen.resources.end(),
                              [](const std::string& r) { return IsSharedResourceName(r); });
  return e;
}

// Sets a.mode from the strongest evidence there is, and says which (sharing.h).
void DecideMode(const Seen& seen, const UnitEvidence& e, const SharingEvidence& ev,
                UnitAllocation& a, std::vector<std::string>& why) {
  if (e.is_mig) {
    a.mode = domain::SharingMode::kMig;
    why.push_back("MIG instance (NVML)");
  } else if (e.configured) {
    a.mode = e.configured->mode;
    why.push_back("configured for this GPU");
  } else if (seen.dra) {
    a.mode = seen.holders.size() > 1 ? domain::SharingMode::kTimeSlicing
                                     : domain::SharingMode::kExclusive;
    why.push_back(seen.holders.size() > 1 ? "DRA claim device shared by " +
                                                std::to_string(seen.holders.size()) + " containers"
                                          : "DRA claim device (ResourceSlice uuid)");
  } else if (e.plugin_replicas) {
    a.mode = ev.plugin_config->mode;
    why.push_back(std::string("device plugin config (sharing.") +
                  (a.mode == domain::SharingMode::kMps ? "mps" : "timeSlicing") + ")");
  } else if (const auto strategy = domain::ParseSharingMode(e.strategy);
             strategy == domain::SharingMode::kMps ||
             strategy == domain::SharingMode::kTimeSlicing) {
    a.mode = *strategy;
    why.push_back("node label nvidia.com/gpu.sharing-strategy=" + e.strategy);
  } else if (seen.replica_ids || e.shared_name || seen.holders.size() > 1) {
    a.mode = domain::SharingMode::kTimeSlicing;
    why.push_back(seen.replica_ids ? "replica IDs (::N)"
                  : e.shared_name  ? "a .shared resource name"
                                   : "several containers hold one GPU");
  } else {
    a.mode = domain::SharingMode::kExclusive;
    why.push_back("one holder, no replica IDs");
  }
}

// Sets a.replicas (at least 1) once a.mode is decided, and says from what when it is not plain.
void DecideReplicas(const Seen& seen, const UnitEvidence& e, UnitAllocation& a,
                    std::vector<std::string>& why) {
  if (e.configured && !e.is_mig) {
    a.replicas = e.configured->replicas;
  } else if (seen.dra) {
    a.replicas =
        static_cast<uint32_t>(seen.holders.size());  // a shared claim (GPU or MIG): equal shares
  } else if (e.plugin_replicas) {
    a.replicas = *e.plugin_replicas;
    if (e.is_mig) why.push_back("replicas from the device plugin config");
  } else if (e.label_replicas && (seen.replica_ids || a.mode == domain::SharingMode::kTimeSlicing ||
                                  a.mode == domain::SharingMode::kMps)) {
    a.replicas = *e.label_replicas;
    why.push_back("replicas from node label nvidia.com/gpu.replicas");
  } else if (seen.replica_ids) {
    a.replicas = seen.max_replica + 1;
    why.push_back("replicas at least " + std::to_string(a.replicas) + " (highest replica ID seen)");
  }
  a.replicas = std::max<uint32_t>(1, a.replicas);
}

// One unit's allocation: mode, replicas, each holder's share, and the evidence that decided.
UnitAllocation AllocationOf(const std::string& uuid, const Seen& seen, const SharingEvidence& ev) {
  UnitAllocation a;
  a.unit_uuid = uuid;
  const auto e = EvidenceOf(uuid, seen, ev);
  std::vector<std::string> why;
  DecideMode(seen, e, ev, a, why);
  DecideReplicas(seen, e, a, why);
  for (const auto& [who, ids] : seen.holders) {
    const auto n = static_cast<uint32_t>(ids.size());
    a.holders.push_back({std::get<0>(who), std::get<1>(who), std::get<2>(who),
                         std::min(1.0, static_cast<double>(n) / a.replicas), n});
  }
  if (seen.dra && e.is_mig) why.push_back("via a DRA claim");
  std::string evidence;
  for (const auto& w : why) evidence += (evidence.empty() ? "" : "; ") + w;
  a.evidence = std::move(evidence);
  return a;
}

}  // namespace

AllocationResult BuildAllocations(const std::vector<ContainerAllocation>& containers,
                                  const SharingEvidence& ev) {
  AllocationResult result;
  Units units;
  for (const auto& c : containers) {
    AddPluginDevices(c, ev, units, result);
    AddClaimDevices(c, ev, units, result);
  }
  for (const auto& [uuid, seen] : units) result.units.push_back(AllocationOf(uuid, seen, ev));
  return result;
}

}  // namespace gpumeter::k8s
