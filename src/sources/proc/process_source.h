// The /proc process source: what each GPU process is — its start time (with the PID, its
// identity), owner, MPS thread share, command and GPU variables. At each pass the assembler names
// the PIDs the sample lists (Watch) and Poll identifies them. Between passes, each drain of the
// driver's per-process samples hands over the PIDs it met (Met), and the ones not known yet are
// identified there and then, while they may still exist: a process that starts and exits between
// two passes still has an owner at the next pass. Reads are counted apart (pass, drain), so the
// drain's cost can be measured on its own. Not thread-safe: the sampling thread only, Current and
// Status included.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "domain/node_snapshot.h"
#include "sources/pods/pods.h"
#include "sources/polled/polled_source.h"
#include "sources/proc/owner_resolver.h"
#include "sources/proc/proc_reader.h"

namespace gpumeter::k8s {

// Sorted by PID, one each: the listed processes, then (listed false) those only a drain met.
using ProcessTable = std::vector<domain::ProcessFact>;

// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as a fraction; nullopt when absent or not a number in (0, 100].
std::optional<double> MpsThreadFraction(const std::map<std::string, std::string>& env);

class ProcessSource final : public sources::PolledSource<ProcessTable> {
 public:
  // `pods` names containers at each identification; borrowed, must outlive the source.
  ProcessSource(std::filesystem::path proc_root, const PodStore& pods);
  ProcessSource(const ProcessSource&) = delete;
  ProcessSource& operator=(const ProcessSource&) = delete;

  // The PIDs the pass's sample lists (any order, repeats allowed): the next Poll identifies each
  // (a reused PID is told by its start time).
  void Watch(std::vector<uint32_t> listed);
  // At a drain: the PIDs its per-process samples named. Each one neither listed at the last pass
  // nor met since is identified now.
  void Met(const std::vector<uint32_t>& pids);
  // Identifies the watched PIDs; Current() then holds them and the processes met since the last
  // Poll that the sample does not list. Forgets every other process.
  void Poll(std::chrono::steady_clock::time_point now) override;
  std::shared_ptr<const ProcessTable> Current() const override { return current_; }
  domain::SourceStatus Status() const override;  // name "proc"

  // Identifications since start: at passes, and at drains (new PIDs only).
  struct Reads {
    uint64_t at_pass = 0, at_drain = 0;
  };
  Reads reads() const { return reads_; }

 private:
  domain::ProcessFact Identify(uint32_t pid);

  std::filesystem::path root_;
  ProcReader proc_;
  OwnerResolver resolver_;
  std::vector<uint32_t> watched_;                // sorted, unique
  std::vector<uint32_t> known_;                  // listed at the last Poll, sorted
  std::map<uint32_t, domain::ProcessFact> met_;  // met since the last Poll, not known then
  std::shared_ptr<const ProcessTable> current_;
  Reads reads_;
  uint64_t failures_ = 0;
  std::string last_error_;
};

}  // namespace gpumeter::k8s
