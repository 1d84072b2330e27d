#include "sources/proc/proc_reader.h"

#include <time.h>
#include <unistd.h>

#include <charconv>
#include <optional>
#include <string>

#include "common/bounded_file.h"

namespace gpumeter::k8s {
namespace {

// Caps on what one process's files may hold: /proc/<pid>/stat is under 1 KiB, cgroup a few lines,
// environ up to the kernel's ARG_MAX (2 MiB by default). A file over its cap is refused.
constexpr size_t kMaxStat = 4096, kMaxCgroup = 64 << 10, kMaxEnviron = 4 << 20;
// /proc/stat has a line per CPU and per interrupt counter: 1 MiB holds thousands of CPUs.
constexpr size_t kMaxProcStat = 1 << 20;

}  // namespace

Expected<uint64_t> ParseStatStartTime(std::string_view stat) {
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos)
    return MakeError(ErrorCode::kInvalidInput, "no ')' closing the command name");
  // After ')': field 3 (state) onwards, space-separated; starttime is field 22.
  std::string_view rest = stat.substr(close + 1);
  int field = 2;
  while (!rest.empty()) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const auto end = rest.find_first_of(" \n");
    const auto token = rest.substr(0, end);
    if (token.empty()) break;
    if (++field == 22) {
      uint64_t v = 0;
      const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
      if (ec != std::errc() || p != token.data() + token.size())
        return MakeError(ErrorCode::kInvalidInput,
                         "field 22 (starttime) '" + std::string(token) + "' is not a number");
      return v;
    }
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  }
  return MakeError(ErrorCode::kInvalidInput, "fewer than 22 fields");
}

Expected<uint64_t> ParseBootTime(std::string_view proc_stat) {
  while (!proc_stat.empty()) {
    const auto end = proc_stat.find('\n');
    const auto line = proc_stat.substr(0, end);
    proc_stat = end == std::string_view::npos ? std::string_view{} : proc_stat.substr(end + 1);
    if (!line.starts_with("btime ")) continue;
    const auto value = line.substr(6);
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    // Before 2001 or past 2286: not a boot time.
    if (ec != std::errc() || p != value.data() + value.size() || v < 1000000000 || v > 9999999999)
      return MakeError(ErrorCode::kInvalidInput,
                       "btime '" + std::string(value) + "' is not a Unix time in seconds");
    return v;
  }
  return MakeError(ErrorCode::kInvalidInput, "no btime line");
}

std::optional<uint64_t> ProcReader::StartUnixUs(uint64_t start_ticks) {
  if (!boot_unix_s_ && !boot_tried_) {
    boot_tried_ = true;  // once per pass (Retain) while unreadable, not once per process
    if (const auto text = ReadBoundedFile(root_ / "stat", kMaxProcStat))
      if (const auto b = ParseBootTime(*text)) boot_unix_s_ = *b;
  }
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (!boot_unix_s_ || hz <= 0) return std::nullopt;
  // btime is the boot instant rounded down to a second. This machine's own clocks give it to the
  // microsecond (realtime − boottime): used when they agree with btime, i.e. when <root> is this
  // kernel's /proc (a fixture's or another kernel's btime is taken as it is).
  uint64_t boot_us = *boot_unix_s_ * 1000000;
  timespec real{}, boot{};
  if (::clock_gettime(CLOCK_REALTIME, &real) == 0 && ::clock_gettime(CLOCK_BOOTTIME, &boot) == 0) {
    const int64_t us = (static_cast<int64_t>(real.tv_sec) - boot.tv_sec) * 1000000 +
                       (real.tv_nsec - boot.tv_nsec) / 1000;
    const int64_t from_btime = us - static_cast<int64_t>(boot_us);
    if (from_btime >= 0 && from_btime < 1000000) boot_us = static_cast<uint64_t>(us);
  }
  return boot_us + start_ticks * 1000000 / static_cast<uint64_t>(hz);
}

std::string ParseStatComm(std::string_view stat) {
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return std::string(stat.substr(open + 1, close - open - 1));
}

std::map<std::string, std::string> ParseGpuEnviron(std::string_view environ) {
  std::map<std::string, std::string> out;
  while (!environ.empty()) {
    const auto end = environ.find('\0');
    const auto entry = environ.substr(0, end);
    environ = end == std::string_view::npos ? std::string_view{} : environ.substr(end + 1);
    if (!entry.starts_with("NVIDIA_") && !entry.starts_with("CUDA_")) continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    out.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return out;
}

Expected<ProcessIdentity> ProcReader::Identify(uint32_t pid) {
  const auto dir = root_ / std::to_string(pid);
  const auto stat = ReadBoundedFile(dir / "stat", kMaxStat);
  if (!stat)
    return MakeError(stat.error().code,
                     stat.error().code == ErrorCode::kNotFound
                         ? (dir / "stat").string() + ": no such process (exited?)"
                         : stat.error().message);
  const auto start = ParseStatStartTime(*stat);
  if (!start)
    return MakeError(ErrorCode::kInvalidInput,
                     (dir / "stat").string() + ": " + start.error().message);
  if (auto it = cache_.find({pid, *start}); it != cache_.end()) return it->second;
  const auto cgroup_text = ReadBoundedFile(dir / "cgroup", kMaxCgroup);
  if (!cgroup_text)
    return MakeError(cgroup_text.error().code,
                     cgroup_text.error().code == ErrorCode::kNotFound
                         ? (dir / "cgroup").string() + ": no such process (exited?)"
                         : cgroup_text.error().message);
  auto cgroup = ParseProcCgroup(*cgroup_text);
  if (!cgroup)
    return MakeError(ErrorCode::kInvalidInput,
                     (dir / "cgroup").string() + ": " + cgroup.error().message);
  ProcessIdentity id;
  id.pid = pid;
  id.start_ticks = *start;
  id.comm = ParseStatComm(*stat);
  id.cgroup = std::move(*cgroup);
  // Unreadable (another user's process without CAP_SYS_PTRACE) or refused: no env, as before.
  if (const auto env = ReadBoundedFile(dir / "environ", kMaxEnviron))
    id.gpu_env = ParseGpuEnviron(*env);
  // One entry per PID: a new start time replaces the old process.
  for (auto it = cache_.lower_bound({pid, 0}); it != cache_.end() && it->first.first == pid;)
    it = cache_.erase(it);
  cache_.emplace(std::pair{pid, *start}, id);
  return id;
}

void ProcReader::Retain(const std::set<uint32_t>& live) {
  for (auto it = cache_.begin(); it != cache_.end();)
    it = live.count(it->first.first) ? std::next(it) : cache_.erase(it);
  boot_tried_ = false;
}

}  // namespace gpumeter::k8s
