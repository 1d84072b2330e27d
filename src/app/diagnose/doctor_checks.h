// The checks of `gpumeter doctor`: each source the agent needs on a node, tried the way the agent
// uses it, with what is wrong and how to fix it in the terms of docs/deploy.md's troubleshooting
// table. Each check is a function of its inputs (paths, configuration) and the results of the
// checks before it; no output here. Not thread-safe (NVML is loaded and unloaded per call).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sources/kube_api/kubeconfig.h"

namespace gpumeter::app {

enum class CheckStatus { kOk, kWarn, kFail, kSkip };
const char* ToString(CheckStatus status);  // "ok", "warn", "fail", "skip"

struct CheckResult {
  std::string name;  // nvml, pod-resources, proc, pods, dra, attribution
  CheckStatus status = CheckStatus::kSkip;
  std::string detail;  // what was found
  std::string fix;     // what to do about it (empty when nothing)
};

// What the NVML check learnt, for the checks after it.
struct NvmlFindings {
  bool loaded = false;
  std::vector<uint32_t> gpu_pids;  // host PIDs NVML lists on any GPU or MIG instance
  std::set<std::string> gpus;      // UUIDs
  // MIG GPU instances (GPU UUID, GPU instance ID), and those GPM gives activity for (Hopper+).
  std::set<std::pair<std::string, uint32_t>> mig_instances, mig_with_gpm;
};

// Loads NVML (`library`, or the driver's soname when empty) and samples once.
// Warns when `read_every_s` (how often the agent reads the driver's sample buffers: its
// --interval, or its --drain-interval where shorter) is longer than the span of per-process
// samples the driver keeps: every pass would lose samples
// (gpumeter_process_samples_uncovered_seconds_total).
CheckResult CheckNvml(const std::string& library, NvmlFindings& found, double read_every_s = 1.0);

// Lists the kubelet's PodResources over `socket` (empty: skipped).
CheckResult CheckPodResources(const std::string& socket);

// Reads `proc_root`: readable, host PIDs (the GPU PIDs NVML gave are there), environ readable.
CheckResult CheckProc(const std::string& proc_root, const NvmlFindings& nvml);

// The pods the agent would see for `node`: from `pods_file` when given, else listed from the API
// server (`api`; nullopt: none configured, for `why_no_api`). The PodList body is kept in
// `pod_list` for the attribution check.
CheckResult CheckPods(const std::string& node, const std::string& pods_file,
                      const std::optional<kube_api::ApiServerConfig>& api,
                      const std::string& why_no_api, std::string& pod_list);

// Whether ResourceSlices can be listed (DRA); skipped without an API server or when the agent is
// told not to list them (`enabled` false).
CheckResult CheckDra(const std::optional<kube_api::ApiServerConfig>& api, bool enabled);

// Reads dcgm-exporter's page at `url` as the agent's --dcgm-metrics does: reachable, the GR engine
// activity field present, and every MIG instance NVML lists (without GPM) on it. Empty `url`:
// skipped, with a warning where MIG instances have no other activity source.
CheckResult CheckDcgm(const std::string& url, const NvmlFindings& nvml);

// Resolves each GPU process to its pod and container from /proc and `pod_list`, as the pipeline
// does: fails when every process in a container stays unattributed.
CheckResult CheckAttribution(const std::string& proc_root, const NvmlFindings& nvml,
                             const std::string& pod_list);

}  // namespace gpumeter::app
