#include "core/allocation/device_id.h"

#include <charconv>

namespace gpumeter::k8s {
namespace {

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// 8-4-4-4-12 hex digits.
bool IsUuidBody(std::string_view s) {
  static constexpr size_t kGroups[] = {8, 4, 4, 4, 12};
  size_t pos = 0;
  for (size_t g = 0; g < 5; ++g) {
    for (size_t i = 0; i < kGroups[g]; ++i, ++pos)
      if (pos >= s.size() || !IsHex(s[pos])) return false;
    if (g < 4) {
      if (pos >= s.size() || s[pos] != '-') return false;
      ++pos;
    }
  }
  return pos == s.size();
}

std::optional<uint32_t> Number(std::string_view s) {
  uint32_t v = 0;
  if (s.empty() || s.size() > 9) return std::nullopt;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

tl::unexpected<Error> Bad(std::string_view id, const std::string& why) {
  return MakeError(ErrorCode::kInvalidInput, "device ID '" + std::string(id) + "': " + why);
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

Expected<DeviceId> ParseDeviceId(std::string_view raw) {
  if (raw.empty()) return Bad(raw, "empty");
  DeviceId out;
  std::string_view id = raw;
  // Replicas: split on the first "::" (the device plugin's NewAnnotatedID).
  if (const auto sep = id.find("::"); sep != std::string_view::npos) {
    out.replica = Number(id.substr(sep + 2));
    if (!out.replica) return Bad(raw, "replica suffix after '::' is not a number");
    id = id.substr(0, sep);
  }
  if (StartsWith(id, "MIG-GPU-")) {
    // MIG-GPU-<uuid>/<gi>/<ci>
    const auto body = id.substr(4);
    const auto s1 = body.find('/');
    const auto s2 = s1 == std::string_view::npos ? s1 : body.find('/', s1 + 1);
    if (s2 == std::string_view::npos)
      return Bad(raw, "legacy MIG ID needs MIG-GPU-<uuid>/<gi>/<ci>");
    if (!IsUuidBody(body.substr(4, s1 - 4))) return Bad(raw, "parent GPU UUID is malformed");
    out.kind = DeviceIdKind::kMigLegacy;
    out.uuid = std::string(body.substr(0, s1));
    out.gpu_instance = Number(body.substr(s1 + 1, s2 - s1 - 1));
    out.compute_instance = Number(body.substr(s2 + 1));
    if (!out.gpu_instance || !out.compute_instance)
      return Bad(raw, "GPU/compute instance IDs must be numbers");
    return out;
  }
  if (StartsWith(id, "GPU-") || StartsWith(id, "MIG-")) {
    if (!IsUuidBody(id.substr(4))) return Bad(raw, "UUID is not 8-4-4-4-12 hex digits");
    out.kind = StartsWith(id, "GPU-") ? DeviceIdKind::kGpuUuid : DeviceIdKind::kMigUuid;
    out.uuid = std::string(id);
    return out;
  }
  if (StartsWith(id, "nvidia")) {
    // nvidia<N>[/gi<G>][/vgpu<V>]
    std::string_view rest = id.substr(6);
    const auto slash = rest.find('/');
    out.kind = DeviceIdKind::kGke;
    out.gpu_index = Number(rest.substr(0, slash));
    if (!out.gpu_index) return Bad(raw, "expected nvidia<N>");
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    while (!rest.empty()) {
      const auto next = rest.find('/');
      const auto part = rest.substr(0, next);
      if (StartsWith(part, "gi") && !out.gpu_instance && !out.replica)
        out.gpu_instance = Number(part.substr(2));
      else if (StartsWith(part, "vgpu") && !out.replica)
        out.replica = Number(part.substr(4));
      else
        return Bad(raw, "unexpected part '" + std::string(part) + "'");
      if ((StartsWith(part, "gi") && !out.gpu_instance) ||
          (StartsWith(part, "vgpu") && !out.replica))
        return Bad(raw, "'" + std::string(part) + "' needs a number");
      rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
    }
    return out;
  }
  // Index strategy: "<i>" or "<gpu>:<mig>".
  const auto colon = id.find(':');
  out.kind = DeviceIdKind::kIndex;
  out.gpu_index = Number(id.substr(0, colon));
  if (colon != std::string_view::npos) out.gpu_instance = Number(id.substr(colon + 1));
  if (!out.gpu_index || (colon != std::string_view::npos && !out.gpu_instance))
    return Bad(raw, "not a GPU-/MIG- UUID, an index, or a GKE nvidia<N> ID");
  return out;
}

std::string UnitKey(const DeviceId& id) {
  switch (id.kind) {
    case DeviceIdKind::kGpuUuid:
    case DeviceIdKind::kMigUuid:
      return id.uuid;
    case DeviceIdKind::kMigLegacy:
      return id.uuid + "/" + std::to_string(id.gpu_instance.value_or(0)) + "/" +
             std::to_string(id.compute_instance.value_or(0));
    case DeviceIdKind::kIndex:
      return "index:" + std::to_string(id.gpu_index.value_or(0)) +
             (id.gpu_instance ? ":" + std::to_string(*id.gpu_instance) : "");
    case DeviceIdKind::kGke:
      return "gke:" + std::to_string(id.gpu_index.value_or(0)) +
             (id.gpu_instance ? "/gi" + std::to_string(*id.gpu_instance) : "");
  }
  return id.uuid;
}

bool IsSharedResourceName(std::string_view name) {
  constexpr std::string_view kSuffix = ".shared";
  return name.size() > kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix;
}

std::optional<std::string> MigProfileOfResource(std::string_view name) {
  constexpr std::string_view kPrefix = "nvidia.com/mig-";
  if (!StartsWith(name, kPrefix) || name.size() == kPrefix.size()) return std::nullopt;
  auto profile = name.substr(kPrefix.size());
  if (IsSharedResourceName(profile)) profile = profile.substr(0, profile.size() - 7);
  if (profile.empty()) return std::nullopt;
  return std::string(profile);
}

bool IsGpuResource(std::string_view name, const std::vector<std::string>& extra) {
  for (const auto& e : extra)
    if (name == e) return true;
  return name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
         MigProfileOfResource(name).has_value();
}

}  // namespace gpumeter::k8s
