// What the node looked like at one sampling pass, as one immutable value: the GPU sample (with the
// per-process and power samples drained since the last pass, and DCGM activity aligned in), each
// GPU process with its identity (PID and start time), owner and MPS share, and each unit with its
// sharing mode and holders. The pipeline assembles one per pass from its sources; the attribution
// core and the guard read it and nothing else of the sources, so a pass can be written, read back
// (node_snapshot_json.h), replayed and scored. Plain values, thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/gpu_types.h"
#include "domain/owner.h"
#include "domain/sharing_mode.h"

namespace gpumeter::domain {

// A process's start: with the PID, its identity (a PID is handed out again once it wraps).
struct ProcessStart {
  uint64_t ticks = 0;               // /proc/<pid>/stat field 22: clock ticks since boot
  std::optional<uint64_t> unix_us;  // the same on the wall clock, Unix µs; nullopt: boot unknown
  bool operator==(const ProcessStart&) const = default;
};

// A container's hold on a unit as the attribution core takes it: the share it was granted
// (exclusive 1, a time-slice or MPS replica 1/replicas, a MIG instance 1).
struct Holding {
  Owner owner;
  double share = 1;
  bool operator==(const Holding&) const = default;
};

// One process the GPU sample lists (on a whole GPU or a MIG instance), or that the driver's
// per-process samples named between two passes, as /proc told it.
struct ProcessFact {
  uint32_t pid = 0;
  std::optional<ProcessStart> start;  // nullopt: /proc did not say (exited, unreadable)
  ProcessOwner owner;                 // kUnattributed where it could not be placed
  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100, in (0, 1]; nullopt when unset or malformed.
  std::optional<double> mps_thread_fraction;
  std::string comm;  // /proc/<pid>/comm as read (raw bytes); "" when unread
  // The GPU-related environment keys the agent reads (NVIDIA_VISIBLE_DEVICES, CUDA_*); nullopt
  // where the environment could not be read. Never other keys.
  std::optional<std::map<std::string, std::string>> gpu_env;
  // false: the pass's sample does not list it; a drain of the driver's per-process samples met it
  // since the last pass and /proc identified it then (it may have exited since): its samples have
  // an owner, though no memory reading does.
  bool listed = true;
};

// A unit (GPU, MIG instance, or a MIG GPU's slices in no instance, under the GPU's UUID) with
// how it is shared and who holds it.
struct UnitFact {
  std::string uuid;
  SharingMode mode = SharingMode::kExclusive;
  std::vector<Holding> holders;
};

struct NodeSnapshot {
  uint64_t sequence = 0;  // the sampling pass's sequence number
  bool ok = false;        // the pass answered; a failed pass lists no GPU
  std::string error;      // when !ok
  // The GPU sample as accounted: every device, with DCGM activity aligned in where configured.
  gpu::GpuSnapshot gpus;
  // Sorted by PID, one each: those the sample lists, then (listed false) those only a drain met.
  std::vector<ProcessFact> processes;
  std::vector<UnitFact> units;  // sorted by UUID, one each
  // The kubelet answered this pass: a container it did not list holds nothing (else the list may
  // be stale, and guardrails that need it hold back).
  bool allocations_known = false;

  // Lookups by binary search; null or the default where the snapshot does not list it.
  const ProcessFact* Process(uint32_t pid) const;
  const UnitFact* Unit(std::string_view uuid) const;
  SharingMode ModeOf(std::string_view uuid) const;  // exclusive where not listed
};

// Every PID the GPU sample lists (whole GPUs and MIG instances), sorted and unique.
std::vector<uint32_t> SamplePids(const gpu::GpuSnapshot& gpus);

}  // namespace gpumeter::domain
