// `gpumeter doctor --demo FILE`: the demo's simulated node, checked as the agent there sees it.
// The demo writes FILE (doctor.yaml in its node's directory; its banner names it): the fake NVML
// library and the clock that library runs on, the fake kubelet's socket, the simulated /proc, the
// pods file, the node's name and its dcgm-exporter page. Doctor reads it instead of those flags,
// so no environment variable has to be known. The file is YAML; unknown or duplicate keys, and
// values out of range, are refused with the key and line.
// Thread-safety: plain functions; UseDemoNode sets the process's environment (call it from the
// command's thread before any other starts).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "app/diagnose/doctor.h"
#include "common/error.h"

namespace gpumeter::app {

struct DemoNode {
  std::string node_name, nvml_library, pod_resources_socket, proc_root, pods_file;
  std::string dcgm_metrics;  // "" without a fake dcgm-exporter
  std::string scenario;      // the scenario file the fake library replays
  double speedup = 1;        // scenario seconds per wall second (> 0)
  uint64_t epoch_us = 0;     // sample stamps are this + scenario time (µs since the Unix epoch)
  uint64_t started_us = 0;   // when the demo's scenario clock was at 0 (µs since the Unix epoch)
};

// Writes `node` to `file` (mode 0644, replaced whole).
Expected<void> WriteDemoNode(const std::filesystem::path& file, const DemoNode& node);
// Errors (kInvalidInput) name the file, the key and the line.
Expected<DemoNode> ReadDemoNode(const std::string& file);
// Points `o` at the demo's node, and sets GPUMETER_FAKE_NVML_{SCENARIO,SPEEDUP,START_S,EPOCH_US},
// which the fake library reads when it is initialised: its clock then reads the demo's scenario
// time of `now_us` (µs since the Unix epoch), and its stamps the demo's.
void UseDemoNode(const DemoNode& node, uint64_t now_us, DoctorOptions& o);

}  // namespace gpumeter::app
