#include "sources/proc/cgroup.h"

#include <vector>

#include "common/enum_names.h"

namespace gpumeter::k8s {
namespace {

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool AllHex(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!IsLowerHex(c)) return false;
  return true;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// A container leaf: <runtime>-<64hex>.scope, crio-<64hex> or <64hex> (cgroupfs), or
// …:cri-containerd:<64hex> (containerd with a slice-style parent and the cgroupfs driver).
std::optional<std::pair<std::string, ContainerRuntime>> ContainerLeaf(std::string_view c) {
  if (const auto pos = c.rfind(":cri-containerd:"); pos != std::string_view::npos) {
    const auto id = c.substr(pos + 16);
    if (AllHex(id, 64)) return std::pair{std::string(id), ContainerRuntime::kContainerd};
    return std::nullopt;
  }
  if (StartsWith(c, "crio-conmon-")) return std::nullopt;  // CRI-O's monitor, not the container
  struct Form {
    std::string_view prefix, suffix;
    ContainerRuntime runtime;
  };
  static constexpr Form kForms[] = {
      {"cri-containerd-", ".scope", ContainerRuntime::kContainerd},
      {"crio-", ".scope", ContainerRuntime::kCrio},
      {"docker-", ".scope", ContainerRuntime::kDocker},
      {"crio-", "", ContainerRuntime::kCrio},
      {"", "", ContainerRuntime::kUnknown},  // cgroupfs: containerd or docker, not told apart
  };
  for (const auto& f : kForms) {
    if (!StartsWith(c, f.prefix) || !EndsWith(c, f.suffix)) continue;
    const auto id = c.substr(f.prefix.size(), c.size() - f.prefix.size() - f.suffix.size());
    if (AllHex(id, 64)) return std::pair{std::string(id), f.runtime};
  }
  return std::nullopt;
}

// A pod component: [<prefix>-]pod<uid>[.slice], uid 8-4-4-4-12 hex with '-' or '_', or 32 hex.
std::optional<std::pair<std::string, bool>> PodComponent(std::string_view c) {
  if (EndsWith(c, ".slice")) c.remove_suffix(6);
  const auto pos = c.rfind("pod");
  if (pos == std::string_view::npos || (pos > 0 && c[pos - 1] != '-')) return std::nullopt;
  const auto uid = c.substr(pos + 3);
  if (AllHex(uid, 32)) return std::pair{std::string(uid), true};
  if (uid.size() != 36) return std::nullopt;
  std::string out(uid);
  for (size_t i = 0; i < out.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash) {
      if (out[i] != '-' && out[i] != '_') return std::nullopt;
      out[i] = '-';
    } else if (!IsLowerHex(out[i])) {
      return std::nullopt;
    }
  }
  return std::pair{out, false};
}

QosClass QosOf(std::string_view c) {
  if (c == "burstable" || c.find("-burstable") != std::string_view::npos)
    return QosClass::kBurstable;
  if (c == "besteffort" || c.find("-besteffort") != std::string_view::npos)
    return QosClass::kBestEffort;
  return QosClass::kUnknown;
}

constexpr EnumName<QosClass> kQosNames[] = {{QosClass::kGuaranteed, "Guaranteed"},
                                            {QosClass::kBurstable, "Burstable"},
                                            {QosClass::kBestEffort, "BestEffort"},
                                            {QosClass::kUnknown, "unknown"}};
static_assert(DistinctEnumNames(kQosNames));

constexpr EnumName<ContainerRuntime> kRuntimeNames[] = {
    {ContainerRuntime::kContainerd, "containerd"},
    {ContainerRuntime::kCrio, "cri-o"},
    {ContainerRuntime::kDocker, "docker"},
    {ContainerRuntime::kUnknown, "unknown"}};
static_assert(DistinctEnumNames(kRuntimeNames));

}  // namespace

const char* ToString(QosClass q) { return EnumToString(kQosNames, q, "unknown"); }

const char* ToString(ContainerRuntime r) { return EnumToString(kRuntimeNames, r, "unknown"); }

CgroupIdentity ParseCgroupPath(std::string_view path) {
  CgroupIdentity out;
  out.path = std::string(path);
  const auto parts = Split(path, '/');
  // From the end: the container leaf first (trailing parts such as "init" are tolerated), then
  // the pod as its nearest ancestor; without a leaf, a pod-level process.
  size_t i = parts.size();
  for (size_t k = parts.size(); k-- > 0;) {
    if (auto leaf = ContainerLeaf(parts[k])) {
      out.container_id = std::move(leaf->first);
      out.runtime = leaf->second;
      i = k;
      break;
    }
  }
  // The component above index k, or nullopt when a private cgroup namespace hides it ("..").
  // The root above the first component is visible.
  auto parent_of = [&](size_t k) -> std::optional<std::string_view> {
    if (k == 0) return std::string_view{};
    if (parts[k - 1] == "..") return std::nullopt;
    return parts[k - 1];
  };
  // QoS from the pod's own component (systemd: kubepods-burstable-pod…) or its parent (cgroupfs:
  // burstable/pod…); a visible parent without a QoS level means Guaranteed.
  auto set_pod = [&](std::pair<std::string, bool> pod, std::string_view component,
                     std::optional<std::string_view> parent) {
    out.pod_uid = std::move(pod.first);
    out.static_pod = pod.second;
    out.qos = QosOf(component);
    if (out.qos == QosClass::kUnknown && parent) {
      out.qos = QosOf(*parent);
      if (out.qos == QosClass::kUnknown) out.qos = QosClass::kGuaranteed;
    }
  };
  // The slice-style form keeps the pod's slice in the same component: "<pod
  // slice>:cri-containerd:<id>".
  if (i < parts.size())
    if (const auto colon = parts[i].find(':'); colon != std::string_view::npos)
      if (auto pod = PodComponent(parts[i].substr(0, colon))) {
        set_pod(std::move(*pod), parts[i].substr(0, colon), std::string_view{});
        return out;
      }
  for (size_t j = i; j > 0; --j) {
    const auto c = parts[j - 1];
    if (c == "..") break;  // private cgroup namespace: nothing above is visible
    if (auto pod = PodComponent(c)) {
      set_pod(std::move(*pod), c, parent_of(j - 1));
      break;
    }
  }
  return out;
}

Expected<CgroupIdentity> ParseProcCgroup(std::string_view content) {
  std::optional<std::string_view> v2, v1;
  size_t line_no = 0;
  for (const auto line : Split(content, '\n')) {
    ++line_no;
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos)
      return MakeError(ErrorCode::kInvalidInput, "cgroup line " + std::to_string(line_no) + " '" +
                                                     std::string(line) +
                                                     "': expected hierarchy-ID:controllers:path");
    const auto id = line.substr(0, c1), controllers = line.substr(c1 + 1, c2 - c1 - 1),
               path = line.substr(c2 + 1);
    if (id.empty() || path.empty() || path[0] != '/')
      return MakeError(ErrorCode::kInvalidInput,
                       "cgroup line " + std::to_string(line_no) + " '" + std::string(line) +
                           "': empty hierarchy ID or a path not starting with '/'");
    if (id == "0" && controllers.empty()) {
      v2 = path;
      continue;
    }
    for (const auto ctl : Split(controllers, ','))
      if (!v1 && (ctl == "memory" || ctl == "cpu" || ctl == "pids" || ctl == "name=systemd" ||
                  ctl == "devices"))
        v1 = path;
  }
  // v2 unless it is the bare root of a hybrid system, where the v1 controllers say more.
  std::optional<std::string_view> chosen = v2 && (*v2 != "/" || !v1) ? v2 : v1;
  if (!chosen)
    return MakeError(ErrorCode::kInvalidInput,
                     "cgroup file has no usable line (no 0:: line and no memory, cpu, pids, "
                     "devices or name=systemd controller)");
  return ParseCgroupPath(*chosen);
}

}  // namespace gpumeter::k8s
