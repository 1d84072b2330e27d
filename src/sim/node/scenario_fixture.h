// A scenario presented the way a real node presents itself to the agent's Kubernetes sources, so
// the production code for them runs in the demo and in tests: the API server's PodList for the
// scenario's pods, and a /proc tree (stat, cgroup and environ per live process) at a given scenario
// time. Paths follow the kubelet's systemd driver with containerd (kubernetes-node.md §4.2).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/error.h"
#include "sim/scenario/model.h"

namespace gpumeter::sim {

// The PodList JSON the API server would return for the scenario's node (all pods Running).
std::string ScenarioPodListJson(const scenario::Scenario& s);

// The cgroup path of a container of a pod (systemd driver, containerd).
std::string ScenarioCgroupPath(const scenario::Pod& pod, const scenario::Container& container);

// Makes `root` hold /proc/<pid>/{stat,cgroup,environ} for exactly the processes alive at `t_s`
// (entries of processes no longer alive are removed). A process's start time (stat field 22) is its
// start_s in clock ticks (100 Hz), so a reused PID has a new start time. Errors name the path.
// With `unix_s_at_zero` (the Unix time of scenario time 0, as the fake NVML stamps its samples),
// root/stat holds a `btime` and the start ticks count from it, so a start read through /proc falls
// at the process's start_s on the fake NVML's clock (to a clock tick); without it, no root/stat.
Expected<void> WriteProcFixture(const std::filesystem::path& root, const scenario::Scenario& s,
                                double t_s, std::optional<double> unix_s_at_zero = std::nullopt);

}  // namespace gpumeter::sim
