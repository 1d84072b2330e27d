#include "app/diagnose/doctor_checks.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "app/config_files.h"
#include "common/enum_names.h"
#include "sources/kube_api/api_client.h"
#include "sources/kubelet/pod_resources.h"
#include "sources/nvml/nvml_gpu_source.h"
#include "sources/pods/pods.h"
#include "sources/proc/owner_resolver.h"
#include "sources/proc/proc_reader.h"

namespace gpumeter::app {
namespace fs = std::filesystem;

namespace {

constexpr EnumName<CheckStatus> kStatusNames[] = {{CheckStatus::kOk, "ok"},
                                                  {CheckStatus::kWarn, "warn"},
                                                  {CheckStatus::kFail, "fail"},
                                                  {CheckStatus::kSkip, "skip"}};
static_assert(DistinctEnumNames(kStatusNames));

}  // namespace

const char* ToString(CheckStatus status) { return EnumToString(kStatusNames, status, "skip"); }

namespace {

CheckResult Result(const char* name, CheckStatus status, std::string detail, std::string fix = {}) {
  return {name, status, std::move(detail), std::move(fix)};
}

std::string PidList(const std::vector<uint32_t>& pids) {
  std::string out;
  for (size_t i = 0; i < pids.size() && i < 5; ++i)
    out += (i ? ", " : "") + std::to_string(pids[i]);
  if (pids.size() > 5) out += fmt::format(" and {} more", pids.size() - 5);
  return out;
}

}  // namespace

// Which MIG instances GPM gives activity for: GPM rates need two samples, so a second one.
void FindMigActivity(nvml::NvmlGpuSource& source, NvmlFindings& found) {
  if (found.mig_instances.empty()) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto again = source.Sample();
  if (!again) return;  // the first sample's failure is reported; this one only refines
  for (const auto& d : again->devices)
    for (const auto& m : d.mig_instances)
      if (m.sm_active_ratio) found.mig_with_gpm.insert({d.uuid, m.gpu_instance_id});
}

CheckResult CheckNvml(const std::string& library, NvmlFindings& found, double read_every_s) {
  nvml::NvmlSourceOptions o;
  if (!library.empty()) o.library_candidates = {library};
  auto source = nvml::NvmlGpuSource::Create(o);
  if (!source)
    return Result("nvml", CheckStatus::kFail, source.error().message,
                  "NVML comes from the host's driver: run the agent with runtimeClassName: nvidia "
                  "(the NVIDIA container "
                  "runtime injects libnvidia-ml.so.1), or mount the driver's library read-only and "
                  "pass --nvml-library "
                  "(docs/deploy.md, troubleshooting: no NVML)");
  found.loaded = true;
  const auto& caps = (*source)->capabilities();
  auto sample = (*source)->Sample();
  if (!sample)
    return Result("nvml", CheckStatus::kFail,
                  fmt::format("{} loaded, but sampling failed: {}", caps.library_path,
                              sample.error().message),
                  "check the driver with nvidia-smi on the node; a driver upgrade without a reboot "
                  "leaves NVML unusable");
  std::set<uint32_t> pids;
  size_t gpus = 0, lost = 0, mig = 0;
  for (const auto& d : sample->devices) {
    ++gpus;
    found.gpus.insert(d.uuid);
    for (const auto& m : d.mig_instances) found.mig_instances.insert({d.uuid, m.gpu_instance_id});
    lost += d.lost ? 1 : 0;
    mig += d.mig_instances.size();
    for (const auto& p : d.processes) pids.insert(p.pid);
    for (const auto& m : d.mig_instances)
      for (const auto& p : m.processes) pids.insert(p.pid);
  }
  found.gpu_pids.assign(pids.begin(), pids.end());
  FindMigActivity(**source, found);
  std::string detail =
      fmt::format("{} (driver {}, NVML {}): {} GPU(s){}, {} GPU process(es)", caps.library_path,
                  caps.driver_version.empty() ? "?" : caps.driver_version, caps.nvml_version, gpus,
                  mig ? fmt::format(" with {} MIG instance(s)", mig) : "", pids.size());
  if (gpus == 0)
    return Result("nvml", CheckStatus::kWarn, detail + ": NVML sees no GPU",
                  "the agent's container needs every GPU: NVIDIA_VISIBLE_DEVICES=all (not void or "
                  "none) with the nvidia "
                  "runtime class, and no nvidia.com/gpu request (which would give it one GPU and "
                  "take it from a workload)");
  if (lost)
    return Result("nvml", CheckStatus::kWarn,
                  detail + fmt::format(": {} GPU(s) lost (Xid 79 or fallen off the bus)", lost),
                  "see the kernel log (dmesg | grep -i xid); a lost GPU is accounted as "
                  "unattributed until it returns");
  // The driver's per-process sample buffer, as one whole-buffer read showed it (GPUs with busy
  // processes only): the shortest is the bound.
  std::optional<uint64_t> span_us;
  for (const auto& d : sample->devices)
    if (d.process_util_buffer_span_us)
      span_us = std::min(span_us.value_or(UINT64_MAX), *d.process_util_buffer_span_us);
  if (span_us && read_every_s * 1e6 > static_cast<double>(*span_us))
    return Result(
        "nvml", CheckStatus::kWarn,
        detail + fmt::format(": the driver's buffers read every {} s (--interval, or "
                             "--drain-interval where shorter) is longer than the {:.1f} s of "
                             "per-process samples the driver keeps, so every pass loses some "
                             "(gpumeter_process_samples_uncovered_seconds_total)",
                             read_every_s, static_cast<double>(*span_us) / 1e6),
        fmt::format("run the agent with --drain-interval below {:.1f} s (the default 5 s is)",
                    static_cast<double>(*span_us) / 1e6));
  return Result("nvml", CheckStatus::kOk, detail);
}

CheckResult CheckPodResources(const std::string& socket) {
  if (socket.empty())
    return Result("pod-resources", CheckStatus::kSkip,
                  "no --pod-resources-socket: no container will hold a GPU");
  const std::string mount_fix =
      "mount the kubelet's directory, not the socket: hostPath /var/lib/kubelet/pod-resources "
      "(type Directory, "
      "read-write: connecting to a unix socket needs write permission); a kubelet with another "
      "--root-dir keeps it "
      "under <root-dir>/pod-resources (docs/deploy.md, troubleshooting: socket not mounted)";
  std::error_code ec;
  const auto st = fs::status(socket, ec);
  if (ec || !fs::exists(st))
    return Result("pod-resources", CheckStatus::kFail, socket + ": no such socket", mount_fix);
  if (!fs::is_socket(st))
    return Result("pod-resources", CheckStatus::kFail, socket + ": exists but is not a socket",
                  mount_fix);
  if (::access(socket.c_str(), W_OK) != 0)
    return Result("pod-resources", CheckStatus::kFail,
                  fmt::format("{}: {}", socket, std::strerror(errno)),
                  "the socket belongs to root: run the agent as user 0 (runAsUser: 0)");
  kubelet::PodResourcesOptions o;
  o.socket_path = socket;
  o.deadline = std::chrono::seconds(5);
  kubelet::PodResourcesClient client(o);
  auto list = client.List();
  if (!list)
    return Result("pod-resources", CheckStatus::kFail, list.error().message,
                  "is the kubelet running (systemctl status kubelet)? PodResources is on by "
                  "default since 1.15 (GA 1.28)");
  size_t holding = 0, ids = 0;
  for (const auto& c : *list) {
    size_t n = c.claim_devices.size();
    for (const auto& d : c.devices) n += d.device_ids.size();
    holding += n ? 1 : 0;
    ids += n;
  }
  return Result("pod-resources", CheckStatus::kOk,
                fmt::format("{}: {} container(s) listed, {} holding {} device(s)", socket,
                            list->size(), holding, ids));
}

CheckResult CheckProc(const std::string& proc_root, const NvmlFindings& nvml) {
  const std::string host_pid_fix =
      "set hostPID: true in the DaemonSet: NVML reports host PIDs, which only the host's PID "
      "namespace can "
      "resolve (docs/deploy.md, troubleshooting: no hostPID)";
  std::error_code ec;
  size_t processes = 0;
  for (fs::directory_iterator it(proc_root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    processes += !name.empty() &&
                 std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  if (ec || processes == 0)
    return Result(
        "proc", CheckStatus::kFail,
        proc_root + (ec ? ": " + ec.message() : ": no process directories"),
        "--proc-root must name a proc filesystem (the default /proc, with hostPID: true)");
  if (nvml.gpu_pids.empty()) {
    // No GPU process to check against: in the host's PID namespace PID 2 is the kernel's
    // kthreadd; in a container's it is another process of the container, or none. (PID 1's
    // cgroup says nothing under a private cgroup namespace, where it reads "0::/".)
    std::string comm;
    std::getline(std::ifstream(fs::path(proc_root) / "2" / "comm"), comm);
    if (comm != "kthreadd")
      return Result(
          "proc", CheckStatus::kFail,
          fmt::format("{}: {} processes, but PID 2 is {}: not the host's PID namespace", proc_root,
                      processes, comm.empty() ? "absent" : "'" + comm + "', not kthreadd"),
          host_pid_fix);
    return Result(
        "proc", CheckStatus::kOk,
        fmt::format(
            "{}: {} processes in the host's PID namespace (PID 2 is kthreadd); no GPU process now",
            proc_root, processes));
  }
  std::vector<uint32_t> missing, no_environ;
  size_t found = 0;
  for (uint32_t pid : nvml.gpu_pids) {
    const auto dir = fs::path(proc_root) / std::to_string(pid);
    if (!std::ifstream(dir / "cgroup")) {
      missing.push_back(pid);
      continue;
    }
    ++found;
    if (!std::ifstream(dir / "environ")) no_environ.push_back(pid);
  }
  const std::string counts = fmt::format("{}: {} processes; {} of {} GPU process(es) found",
                                         proc_root, processes, found, nvml.gpu_pids.size());
  if (found == 0)
    return Result(
        "proc", CheckStatus::kFail,
        counts + fmt::format(" (missing: {}): the agent does not see host PIDs", PidList(missing)),
        host_pid_fix);
  if (!no_environ.empty())
    return Result(
        "proc", CheckStatus::kWarn,
        counts + fmt::format("; cannot read the environment of {}", PidList(no_environ)),
        "only needed for MPS (clients' active-thread percentages): add capabilities SYS_PTRACE and "
        "DAC_READ_SEARCH, as deploy/kubernetes/overlays/mps does (only NVIDIA_* and CUDA_* "
        "variables are read)");
  if (!missing.empty())
    return Result("proc", CheckStatus::kWarn,
                  counts + fmt::format(" (missing: {}; exited since?)", PidList(missing)));
  return Result("proc", CheckStatus::kOk, counts);
}

namespace {

const char* kRbacFix =
    "bind a ClusterRole with get, list, watch on pods (and resourceslices for DRA) to the agent's "
    "ServiceAccount "
    "(deploy/kubernetes/base/rbac.yaml; docs/deploy.md, troubleshooting: RBAC denied)";

// GET `path` from the API server: the body on 200, else a failed check named `name`.
struct ApiReply {
  int status = 0;
  std::string body, error;
};

ApiReply ApiGet(const kube_api::ApiServerConfig& api, const std::string& path) {
  kube_api::ApiServerConfig config = api;
  auto client = kube_api::MakeApiClient(config, "GET",
                                        {.connect_timeout = std::chrono::seconds(3),
                                         .read_timeout = {},
                                         .deadline = std::chrono::seconds(10),
                                         .max_bytes = 64u << 20});
  if (!client) return {0, {}, client.error().message};
  auto r = client->Get(path);
  if (!r) return {0, {}, r.error().message};
  return {r->status, r->body, r->status == 200 ? "" : kube_api::Describe(*r)};
}

}  // namespace

CheckResult CheckPods(const std::string& node, const std::string& pods_file,
                      const std::optional<kube_api::ApiServerConfig>& api,
                      const std::string& why_no_api, std::string& pod_list) {
  std::string from;
  if (!pods_file.empty()) {
    auto text = ReadWhole("--pods-file", pods_file);
    if (!text)
      return Result("pods", CheckStatus::kFail, text.error().message,
                    "--pods-file must name a readable PodList JSON file");
    pod_list = std::move(*text);
    from = pods_file;
  } else if (!api) {
    return Result(
        "pods", CheckStatus::kWarn, "no API server: " + why_no_api,
        "in a cluster the service account is mounted by default (automountServiceAccountToken); "
        "outside one "
        "give --kubeconfig or --pods-file, else processes in containers stay unattributed");
  } else {
    const auto reply = ApiGet(
        *api, "/api/v1/pods?fieldSelector=" + http::EncodeQueryValue("spec.nodeName=" + node));
    const std::string where = api->server + " (" + api->source + ")";
    if (reply.status == 401)
      return Result("pods", CheckStatus::kFail,
                    where + ": " + reply.error + " (credentials rejected)",
                    "the ServiceAccount token must be mounted and valid "
                    "(automountServiceAccountToken: true)");
    if (reply.status == 403)
      return Result("pods", CheckStatus::kFail,
                    where + ": " + reply.error + " (RBAC denied: list pods)", kRbacFix);
    if (reply.status != 200)
      return Result("pods", CheckStatus::kFail, where + ": " + reply.error,
                    "the API server must be reachable from the node (KUBERNETES_SERVICE_HOST, "
                    "network policies, the CA)");
    pod_list = reply.body;
    from = where;
  }
  k8s::PodStore store;
  if (auto applied = store.ApplyList(pod_list); !applied)
    return Result("pods", CheckStatus::kFail, from + ": " + applied.error().message, "");
  if (store.size() == 0)
    return Result(
        "pods", CheckStatus::kWarn, fmt::format("{}: no pods on node '{}'", from, node),
        "the node name must be the Kubernetes node's: set NODE_NAME from the downward API "
        "(fieldRef "
        "spec.nodeName) or pass --node-name (docs/deploy.md, troubleshooting: pods missing)");
  return Result("pods", CheckStatus::kOk,
                fmt::format("{}: {} pod(s) on node '{}'", from, store.size(), node));
}

CheckResult CheckDra(const std::optional<kube_api::ApiServerConfig>& api, bool enabled) {
  if (!api) return Result("dra", CheckStatus::kSkip, "no API server");
  if (!enabled)
    return Result("dra", CheckStatus::kSkip,
                  "ResourceSlices not listed (--resource-slices=false / GPUMETER_RESOURCE_SLICES)");
  const auto reply = ApiGet(*api, "/apis/resource.k8s.io/v1/resourceslices?limit=1");
  if (reply.status == 200)
    return Result("dra", CheckStatus::kOk, "ResourceSlices (resource.k8s.io/v1) can be listed");
  if (reply.status == 404)
    return Result("dra", CheckStatus::kOk,
                  "no resource.k8s.io/v1 API: DRA not in use (nothing needed)");
  if (reply.status == 403)
    return Result("dra", CheckStatus::kWarn, reply.error + " (RBAC denied: list resourceslices)",
                  std::string("only needed with DRA: devices of claims stay allocation problems "
                              "until it is allowed. ") +
                      kRbacFix);
  return Result("dra", CheckStatus::kWarn, reply.error);
}

CheckResult CheckAttribution(const std::string& proc_root, const NvmlFindings& nvml,
                             const std::string& pod_list) {
  if (nvml.gpu_pids.empty())
    return Result("attribution", CheckStatus::kSkip, "no GPU process to attribute now");
  k8s::PodStore pods;
  if (!pod_list.empty()) (void)pods.ApplyList(pod_list);  // a bad list was the pods check's failure
  k8s::ProcReader reader(proc_root);
  k8s::OwnerResolver resolver(reader, pods);
  size_t containers = 0, system = 0, unattributed = 0;
  std::string example;
  for (uint32_t pid : nvml.gpu_pids) {
    const auto owner = resolver.Resolve(pid);
    switch (owner.kind) {
      case domain::OwnerKind::kContainer:
        ++containers;
        break;
      case domain::OwnerKind::kSystem:
        ++system;
        break;
      case domain::OwnerKind::kIdle:  // never a process's owner
      case domain::OwnerKind::kUnattributed:
        ++unattributed;
        if (example.empty()) example = fmt::format("PID {}: {}", pid, owner.how);
        break;
    }
  }
  const std::string detail =
      fmt::format("{} GPU process(es): {} in containers, {} host, {} unattributed",
                  nvml.gpu_pids.size(), containers, system, unattributed);
  if (unattributed == 0) return Result("attribution", CheckStatus::kOk, detail);
  const std::string fix =
      "a process's cgroup names its pod and container; they must be among the node's pods: check "
      "the pods check "
      "above (node name, RBAC), and hostPID (docs/deploy.md, troubleshooting: all usage "
      "unattributed)";
  return Result("attribution", containers == 0 ? CheckStatus::kFail : CheckStatus::kWarn,
                detail + " (" + example + ")", fix);
}

}  // namespace gpumeter::app
