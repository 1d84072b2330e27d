// Identifies a host process from /proc under a configurable root (the DaemonSet mounts the host's
// /proc, e.g. at /host/proc): its start time (field 22 of /proc/<pid>/stat, clock ticks since
// boot), its cgroup identity and its GPU-related environment variables. Results are cached by (PID,
// start time), so a reused PID is read afresh and never inherits the old process's owner. Not
// thread-safe: one per sampling loop.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"
#include "sources/proc/cgroup.h"

namespace gpumeter::k8s {

struct ProcessIdentity {
  uint32_t pid = 0;
  uint64_t start_ticks = 0;  // field 22 of /proc/<pid>/stat
  std::string comm;          // field 2 of /proc/<pid>/stat, without the parentheses
  CgroupIdentity cgroup;
  // NVIDIA_* and CUDA_* variables of /proc/<pid>/environ (nothing else is kept); nullopt when it
  // could not be read (another user's process without CAP_SYS_PTRACE, or a kernel thread).
  std::optional<std::map<std::string, std::string>> gpu_env;
};

// The NVIDIA_* and CUDA_* entries of an environ file (NUL-separated KEY=VALUE). Every other
// variable is dropped here, unread, so secrets in the environment never leave this function.
std::map<std::string, std::string> ParseGpuEnviron(std::string_view environ);

// Field 22 (starttime) of a /proc/<pid>/stat line. The command name (field 2) may hold spaces
// and parentheses, so fields are counted after the last ')'.
Expected<uint64_t> ParseStatStartTime(std::string_view stat);
// The boot time (`btime N`, Unix seconds) of a /proc/stat file.
Expected<uint64_t> ParseBootTime(std::string_view proc_stat);
// Field 2 (the command name) of a /proc/<pid>/stat line: what lies between the first '(' and the
// last ')'; empty when there is no such pair.
std::string ParseStatComm(std::string_view stat);

class ProcReader {
 public:
  explicit ProcReader(std::filesystem::path proc_root) : root_(std::move(proc_root)) {}

  // kNotFound when the process is gone (it exited between NVML and /proc); kInvalidInput when a
  // file is malformed (the message names the file).
  Expected<ProcessIdentity> Identify(uint32_t pid);

  // When a process started on the wall clock, Unix µs: the boot time (`btime` of <root>/stat,
  // refined to the microsecond by this machine's clocks where they agree with it,
  // read once; while unreadable, tried again once per Retain) + start ticks / CLK_TCK. nullopt
  // while the boot time is unknown.
  std::optional<uint64_t> StartUnixUs(uint64_t start_ticks);

  // Drops cached processes whose PID is not in `live`, so the cache stays bounded.
  void Retain(const std::set<uint32_t>& live);

  size_t cached() const { return cache_.size(); }

 private:
  std::filesystem::path root_;
  std::map<std::pair<uint32_t, uint64_t>, ProcessIdentity> cache_;  // (pid, start ticks)
  std::optional<uint64_t> boot_unix_s_;                             // btime, once read
  bool boot_tried_ = false;                                         // this pass tried /proc/stat
};

}  // namespace gpumeter::k8s
