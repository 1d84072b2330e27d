// Detects guardrail findings after each sampling pass and keeps them open while they last
// (first and last seen), with a counter of findings opened per kind and severity. Reads only a
// PassView the node pipeline fills from what it already knows (NVML processes, allocations, pods,
// the GPU variables of /proc/<pid>/environ, the interval's ledgers): no I/O, no clock.
// Unknown is never taken for a violation: without the kubelet's allocations nothing is called
// unallocated, without the pod nothing is called unrequested, without the environment nothing is
// called unlimited, and an interval whose activity is unknown counts neither as idle nor as use.
// Not thread-safe: one per pipeline, called from the sampling thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/attribution/attribute.h"
#include "core/cost/pricing.h"
#include "core/guard/findings.h"
#include "domain/gpu_types.h"

namespace gpumeter::guard {

struct ProcessView {
  uint32_t pid = 0;
  std::string comm;     // command name; empty when unknown
  domain::Owner owner;  // container, system (outside any pod) or unattributed (unknown)
  std::optional<uint64_t> memory_bytes;
  // The NVIDIA_* and CUDA_* variables of its environment; nullopt when unreadable.
  std::optional<std::map<std::string, std::string>> env;
};

struct UnitView {
  std::string uuid, gpu_uuid, model, mig_profile;
  domain::SharingMode mode = domain::SharingMode::kExclusive;
  double gpu_fraction = 1;                    // what its cost is priced at (node::UnitInfo)
  std::vector<attribution::Holding> holders;  // from the kubelet (empty: nobody)
  std::vector<ProcessView> processes;
  const attribution::UnitLedger* ledger = nullptr;  // the last interval's; null when none
  bool gpu_lost = false;  // its physical GPU fell off the bus (NVML_ERROR_GPU_IS_LOST) this pass
  gpu::GpuHealth health;  // its physical GPU's, this pass (unknown parts: no finding)
  std::optional<uint32_t> gpu_instance_id;  // a MIG instance's GPU instance ID
  std::vector<gpu::XidEvent> xids;          // its physical GPU's XID events of this pass
};

struct PassView {
  std::string node;
  double now = 0;                  // Unix seconds
  bool allocations_known = false;  // the kubelet answered at least once
  bool pods_known = false;         // the pod source has a snapshot
  // MPS is run by the NVIDIA device plugin, whose control daemon gives every client a default
  // pinned-memory and active-thread limit (total / replicas) that no environment shows.
  bool mps_limits_by_device_plugin = false;
  std::vector<UnitView> units;
  // Containers of this node's known pods: whether the pod asks for a GPU (a GPU resource in its
  // requests, or DRA resource claims).
  std::map<domain::Owner, bool> requests_gpu;
  // Containers whose allocation is not fully known although the kubelet answered: a device it
  // listed could not be placed, a DRA pod whose claims it did not list, an init container (the
  // kubelet lists only sidecars). Nothing is called unallocated for them.
  std::set<domain::Owner> allocation_unknown;
  std::map<uint32_t, std::string> gpu_uuid_by_index;  // NVML index -> GPU UUID
};

namespace detail {
class DeviceChecks;
}

class Guard {
 public:
  // `pricing` prices idle allocations (null: waste in GPU-hours only). Borrowed; outlives this.
  Guard(GuardConfig config, const cost::Pricing* pricing);
  ~Guard();
  Guard(Guard&&) noexcept;
  Guard& operator=(Guard&&) noexcept;

  // One pass. Findings seen now stay open (last_seen = now); one not seen for kGracePasses
  // passes in a row is closed (a process between two samples, a source's hiccup: no flapping).
  void Update(const PassView& pass);
  static constexpr int kGracePasses = 3;

  // Open findings, ordered by severity (highest first), kind, namespace, pod, container, unit.
  std::vector<Finding> Open() const;
  // Findings opened since start, per (kind, severity) of every kind that is on: counters from 0.
  const std::map<std::pair<Kind, Severity>, uint64_t>& opened() const { return opened_; }
  const GuardConfig& config() const { return config_; }

 private:
  using Key = std::tuple<Kind, std::string, std::string, std::string, std::string,
                         std::string>;  // kind, unit, ns, pod, container, extra
  void Raise(std::map<Key, Finding>& seen, Kind kind, const std::string& extra, Finding f) const;
  void Idle(const PassView& pass, std::map<Key, Finding>& seen);

  GuardConfig config_;
  const cost::Pricing* pricing_;
  std::map<Key, Finding> open_;
  std::map<Key, int> missed_;                      // passes in a row an open finding was not seen
  std::unique_ptr<detail::DeviceChecks> devices_;  // the device rules' state (device_checks.h)
  std::map<std::pair<Kind, Severity>, uint64_t> opened_;
  // Known-idle accounted seconds in a row, per (unit, holder), and the share it holds.
  std::map<std::pair<std::string, domain::Owner>, double> idle_s_;
};

}  // namespace gpumeter::guard
