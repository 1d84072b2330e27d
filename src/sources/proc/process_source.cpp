#include "sources/proc/process_source.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace gpumeter::k8s {

std::optional<double> MpsThreadFraction(const std::map<std::string, std::string>& env) {
  const auto it = env.find("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  if (it == env.end()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !(v > 0) || v > 100) return std::nullopt;
  return v / 100;
}

ProcessSource::ProcessSource(std::filesystem::path proc_root, const PodStore& pods)
    : root_(std::move(proc_root)), proc_(root_), resolver_(proc_, pods) {}

void ProcessSource::Watch(std::vector<uint32_t> listed) {
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
  watched_ = std::move(listed);
}

domain::ProcessFact ProcessSource::Identify(uint32_t pid) {
  domain::ProcessFact f;
  f.pid = pid;
  const auto id = proc_.Identify(pid);
  if (!id) {
    // A malformed /proc file or an unreadable root is a failure of the source; a process that
    // exited between NVML and /proc is not.
    if (id.error().code != ErrorCode::kNotFound) {
      ++failures_;
      last_error_ = id.error().message;
    }
    f.owner = OwnerResolver::Unidentified(id.error());
    return f;
  }
  if (id->gpu_env) f.mps_thread_fraction = MpsThreadFraction(*id->gpu_env);
  f.comm = id->comm;
  f.gpu_env = id->gpu_env;
  f.start = domain::ProcessStart{id->start_ticks, proc_.StartUnixUs(id->start_ticks)};
  f.owner = resolver_.Resolve(*id);
  return f;
}

void ProcessSource::Met(const std::vector<uint32_t>& pids) {
  for (const uint32_t pid : pids) {
    if (std::binary_search(known_.begin(), known_.end(), pid) || met_.count(pid)) continue;
    ++reads_.at_drain;
    auto f = Identify(pid);
    // Gone already: nothing more is known than at the next pass, where it is unlisted anyway.
    if (!f.start) continue;
    f.listed = false;
    met_.emplace(pid, std::move(f));
  }
}

void ProcessSource::Poll(std::chrono::steady_clock::time_point /*now*/) {
  auto table = std::make_shared<ProcessTable>();
  table->reserve(watched_.size() + met_.size());
  for (const uint32_t pid : watched_) {
    ++reads_.at_pass;
    table->push_back(Identify(pid));
  }
  std::set<uint32_t> live(watched_.begin(), watched_.end());
  for (auto& [pid, f] : met_)
    if (live.insert(pid).second) table->push_back(std::move(f));
  std::sort(table->begin(), table->end(),
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  // The caches keep what a drain identified until this pass took it, then only the listed.
  resolver_.Retain(std::set<uint32_t>(watched_.begin(), watched_.end()));
  met_.clear();
  known_ = std::move(watched_);
  watched_.clear();
  current_ = std::move(table);
}

domain::SourceStatus ProcessSource::Status() const {
  domain::SourceStatus s;
  s.name = "proc";
  s.detail = root_.string();
  std::error_code ec;
  s.up = std::filesystem::is_directory(root_, ec);
  s.attempts = reads_.at_pass + reads_.at_drain;
  s.failures = failures_;
  s.last_error = s.up ? last_error_ : root_.string() + ": not a readable directory";
  return s;
}

}  // namespace gpumeter::k8s
