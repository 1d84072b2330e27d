// The fleet that the scale benchmark synthesizes (bench/fleet.sh, docs/fleet.md): nodes of 8
// GPUs, workloads (Deployments, StatefulSets, Jobs) whose pods come and go, and every minute's
// attributed usage per unit, all derived from a seed. Prometheus's series and the usage stores
// are written from the same minutes, so the two sources must give the same totals. Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/attribution/usage_record.h"

namespace gpumeter::fleet {

struct FleetOptions {
  uint64_t seed = 1;
  int nodes = 10;
  int workloads = 1000;
  int64_t start_minute = 0;  // Unix minutes: the first minute of data (the agents start here)
  int64_t end_minute = 0;    // the first minute past the data
};

struct Workload {
  std::string ns, name, kind, team;  // kind: Deployment, StatefulSet or Job
  bool exclusive = false;            // wants a whole GPU (else a time-sliced replica)
  double compute = 0;                // mean share of the unit's time it uses, 0-1
  double memory_gib = 0;             // mean memory held
  double swing = 0, phase = 0;       // daily swing of compute (services), as a fraction
};

struct Pod {
  int workload = 0;
  std::string name;
  std::map<std::string, std::string> labels;  // what the controller puts on it (workload.h)
  int node = 0, gpu = 0;
  double share = 1;
  int64_t start = 0, end = 0;  // Unix minutes, [start, end)
};

class Fleet {
 public:
  static constexpr int kGpusPerNode = 8;
  static constexpr int kExclusiveGpus = 5;  // GPUs 0-4 whole; 5-7 time-sliced
  static constexpr int kReplicas = 4;
  static constexpr double kMemoryBytes = 81559.0 * 1024 * 1024;  // an H100 80GB HBM3's
  static constexpr const char* kModel = "NVIDIA H100 80GB HBM3";

  explicit Fleet(const FleetOptions& options);

  const FleetOptions& options() const { return options_; }
  const std::vector<Workload>& workloads() const { return workloads_; }
  const std::vector<Pod>& pods() const { return pods_; }  // sorted by start
  static std::string NodeName(int node);
  static std::string GpuUuid(int node, int gpu);
  static std::string TeamOf(const std::string& ns);  // the pods' `team` label
  static bool Shared(int gpu) { return gpu >= kExclusiveGpus; }

  // Every unit of `node` over `minute`, given the pods alive on it then (indexes into pods()):
  // each unit's owners (the pods holding it, idle, system, unattributed) add up to the unit.
  std::vector<attribution::UnitRecord> Minute(int node, int64_t minute,
                                              const std::vector<int>& alive) const;

 private:
  void MakeWorkloads();
  void Schedule();

  FleetOptions options_;
  std::vector<Workload> workloads_;
  std::vector<Pod> pods_;
};

// Walks the minutes in order and says which pods are alive on each node: a pod is alive in
// [start, end).
class Timeline {
 public:
  explicit Timeline(const Fleet& fleet);
  // Moves to `minute` (never back); alive(node) then lists the pods alive in it.
  void Advance(int64_t minute);
  const std::vector<int>& alive(int node) const { return alive_[node]; }

 private:
  const Fleet& fleet_;
  size_t next_ = 0;
  std::vector<std::vector<int>> alive_;
};

}  // namespace gpumeter::fleet
