#include "sources/k8s/sharing.h"

#include <algorithm>
#include <set>

#include "common/yaml/reader.h"
#include "sources/k8s/device_id.h"

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

}  // namespace

AllocationResult BuildAllocations(const std::vector<ContainerAllocation>& containers,
                                  const SharingEvidence& ev) {
  AllocationResult result;
  std::map<std::string, Seen> units;
  for (const auto& c : containers) {
    for (const auto& d : c.devices) {
      if (!IsGpuResource(d.resource_name, ev.extra_gpu_resources)) continue;
      for (const auto& raw : d.device_ids) {
        auto id = ParseDeviceId(raw);
        if (!id) {
          result.unplaced.insert({c.ns, c.pod, c.container});
          result.problems.push_back(c.ns + "/" + c.pod + "/" + c.container + ": " +
                                    id.error().message);
          continue;
        }
        std::string uuid;
        if (id->kind == DeviceIdKind::kGpuUuid || id->kind == DeviceIdKind::kMigUuid) {
          uuid = id->uuid;
        } else if (id->kind == DeviceIdKind::kMigLegacy) {
          const auto it = ev.legacy_mig.find(UnitKey(*id));
          if (it == ev.legacy_mig.end()) {
            result.unplaced.insert({c.ns, c.pod, c.container});
            result.problems.push_back(c.ns + "/" + c.pod + "/" + c.container + ": device ID '" +
                                      raw +
                                      "': no MIG instance with that GPU/instance ID on this node");
            continue;
          }
          uuid = it->second;
        } else {
          result.unplaced.insert({c.ns, c.pod, c.container});
          result.problems.push_back(c.ns + "/" + c.pod + "/" + c.container + ": device ID '" + raw +
                                    "': index-based IDs do not name a GPU stably; not placed");
          continue;
        }
        auto& u = units[uuid];
        u.resources.insert(d.resource_name);
        u.holders[{c.ns, c.pod, c.container}].insert(id->replica.value_or(0));
        if (id->replica) {
          u.replica_ids = true;
          u.max_replica = std::max(u.max_replica, *id->replica);
        }
      }
    }
    for (const auto& cd : c.claim_devices) {
      const std::string who = c.ns + "/" + c.pod + "/" + c.container + ": DRA device " + cd.driver +
                              "/" + cd.pool + "/" + cd.device;
      const auto it = ev.dra_devices.find({cd.driver, cd.pool, cd.device});
      if (it == ev.dra_devices.end()) {
        result.unplaced.insert({c.ns, c.pod, c.container});
        result.problems.push_back(who + " (claim " + cd.claim_namespace + "/" + cd.claim_name +
                                  "): no ResourceSlice of this node names it");
        continue;
      }
      if (!it->second.uuid) {
        result.unplaced.insert({c.ns, c.pod, c.container});
        result.problems.push_back(
            who +
            ": its ResourceSlice has no uuid attribute (a dynamic MIG device not yet created?)");
        continue;
      }
      auto& u = units[*it->second.uuid];
      u.dra = true;
      u.holders[{c.ns, c.pod, c.container}].insert(0);
    }
  }
  for (const auto& [uuid, seen] : units) {
    UnitAllocation a;
    a.unit_uuid = uuid;
    const bool is_mig = uuid.rfind("MIG-", 0) == 0 || ev.mig_parent.count(uuid);
    const auto conf = ev.configured.find(uuid);
    std::optional<uint32_t> plugin_replicas;
    if (ev.plugin_config)
      for (const auto& r : seen.resources) {
        std::string base = r;
        if (IsSharedResourceName(base))
          base.resize(base.size() - 7);  // renameByDefault adds ".shared"
        if (auto it = ev.plugin_config->replicas_by_resource.find(base);
            it != ev.plugin_config->replicas_by_resource.end())
          plugin_replicas = it->second;
      }
    const auto label_replicas = Positive(ev.node_labels, "nvidia.com/gpu.replicas");
    const auto strategy = ev.node_labels.count("nvidia.com/gpu.sharing-strategy")
                              ? ev.node_labels.at("nvidia.com/gpu.sharing-strategy")
                              : "";
    const bool shared_name =
        std::any_of(seen.resources.begin(), seen.resources.end(),
                    [](const std::string& r) { return IsSharedResourceName(r); });
    std::vector<std::string> why;
    if (is_mig) {
      a.mode = domain::SharingMode::kMig;
      why.push_back("MIG instance (NVML)");
    } else if (conf != ev.configured.end()) {
      a.mode = conf->second.mode;
      why.push_back("configured for this GPU");
    } else if (seen.dra) {
      a.mode = seen.holders.size() > 1 ? domain::SharingMode::kTimeSlicing
                                       : domain::SharingMode::kExclusive;
      why.push_back(seen.holders.size() > 1
                        ? "DRA claim device shared by " + std::to_string(seen.holders.size()) +
                              " containers"
                        : "DRA claim device (ResourceSlice uuid)");
    } else if (plugin_replicas) {
      a.mode = ev.plugin_config->mode;
      why.push_back(std::string("device plugin config (sharing.") +
                    (a.mode == domain::SharingMode::kMps ? "mps" : "timeSlicing") + ")");
    } else if (strategy == "mps" || strategy == "time-slicing") {
      a.mode = strategy == "mps" ? domain::SharingMode::kMps : domain::SharingMode::kTimeSlicing;
      why.push_back("node label nvidia.com/gpu.sharing-strategy=" + strategy);
    } else if (seen.replica_ids || shared_name || seen.holders.size() > 1) {
      a.mode = domain::SharingMode::kTimeSlicing;
      why.push_back(seen.replica_ids ? "replica IDs (::N)"
                    : shared_name    ? "a .shared resource name"
                                     : "several containers hold one GPU");
    } else {
      a.mode = domain::SharingMode::kExclusive;
      why.push_back("one holder, no replica IDs");
    }
    if (conf != ev.configured.end() && !is_mig) {
      a.replicas = conf->second.replicas;
    } else if (seen.dra) {
      a.replicas =
          static_cast<uint32_t>(seen.holders.size());  // a shared claim (GPU or MIG): equal shares
    } else if (plugin_replicas) {
      a.replicas = *plugin_replicas;
      if (is_mig) why.push_back("replicas from the device plugin config");
    } else if (label_replicas && (seen.replica_ids || a.mode == domain::SharingMode::kTimeSlicing ||
                                  a.mode == domain::SharingMode::kMps)) {
      a.replicas = *label_replicas;
      why.push_back("replicas from node label nvidia.com/gpu.replicas");
    } else if (seen.replica_ids) {
      a.replicas = seen.max_replica + 1;
      why.push_back("replicas at least " + std::to_string(a.replicas) +
                    " (highest replica ID seen)");
    }
    a.replicas = std::max<uint32_t>(1, a.replicas);
    for (const auto& [who, ids] : seen.holders) {
      const auto n = static_cast<uint32_t>(ids.size());
      a.holders.push_back({std::get<0>(who), std::get<1>(who), std::get<2>(who),
                           std::min(1.0, static_cast<double>(n) / a.replicas), n});
    }
    if (seen.dra && is_mig) why.push_back("via a DRA claim");
    std::string evidence;
    for (const auto& w : why) evidence += (evidence.empty() ? "" : "; ") + w;
    a.evidence = std::move(evidence);
    result.units.push_back(std::move(a));
  }
  return result;
}

}  // namespace gpumeter::k8s
