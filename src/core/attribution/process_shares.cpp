// Per-process shares of a whole GPU's sample window from the driver's per-process samples
// (observe.h: SmShares and its kin): one sample per busy process per driver period, so a share is
// Σ percent / 100 / (periods in the window).
#include <algorithm>
#include <map>
#include <tuple>

#include "core/attribution/observe.h"

namespace gpumeter::attribution {

bool SmSharesExtrapolated(const gpu::DeviceSample& d) {
  const uint64_t window = d.process_util_window_end_us - d.process_util_window_start_us;
  return d.process_util_uncovered_us > 0 && d.process_util_uncovered_us < window &&
         BusyFraction(d).has_value();
}

bool MemorySharesExtrapolated(const gpu::DeviceSample& d) {
  const uint64_t window = d.process_util_window_end_us - d.process_util_window_start_us;
  return d.process_util_uncovered_us > 0 && d.process_util_uncovered_us < window;
}

namespace {

// Which per-process figure a share is of: SM, or memory (memUtil).
enum class Engine { kSm, kMemory };

uint32_t PercentOf(const gpu::ProcessUtilSample& s, Engine e) {
  return e == Engine::kSm ? s.sm_percent : s.memory_percent;
}

// The driver periods in the device's covered window, or 0 when the period is unknown.
double PeriodsOf(const gpu::DeviceSample& d, Engine e) {
  // Samples lost from the driver's buffer: with the device's busy time known, the covered part's
  // SM shares stand for the whole window (an estimate); else the lost part stays uncovered, and
  // the busy time it held unattributed. Memory shares always stand for the whole window when
  // samples were lost: no windowed signal of their kind says how much ran then, so the estimate's
  // bound is the whole lost part (attribute.cpp).
  const bool extrapolate = e == Engine::kSm ? SmSharesExtrapolated(d) : MemorySharesExtrapolated(d);
  const uint64_t covered_us = d.process_util_window_end_us - d.process_util_window_start_us -
                              (extrapolate ? d.process_util_uncovered_us : 0);
  const double window_us = static_cast<double>(covered_us);
  const double period_us =
      d.process_util_period_us ? static_cast<double>(*d.process_util_period_us) : 0.0;
  return period_us > 0 && window_us > 0 ? window_us / period_us : 0.0;
}

// Σ smUtil / 100 over the periods of the window. Period unknown (fewer than two distinct stamps so
// far): the samples' mean. `all` is the PID's sample count over the window, so the parts of a
// split PID share one denominator and add up to its whole share.
double ShareOf(double pct, size_t all, double periods) {
  const double over = std::max(periods, static_cast<double>(all));
  return over > 0 ? std::clamp(pct / 100.0 / over, 0.0, 1.0) : 0.0;  // no sample, no period: 0
}

// Σ percent of each engine and the sample count per PID, sorted by PID: one sort of the samples
// serves both engines' shares.
struct PidSums {
  uint32_t pid = 0;
  double sm = 0, memory = 0;
  size_t count = 0;
};
std::vector<PidSums> SumByPid(const gpu::DeviceSample& d) {
  std::vector<const gpu::ProcessUtilSample*> by_pid;
  by_pid.reserve(d.process_util.size());
  for (const auto& s : d.process_util) by_pid.push_back(&s);
  std::sort(by_pid.begin(), by_pid.end(),
            [](const auto* a, const auto* b) { return a->pid < b->pid; });
  std::vector<PidSums> out;
  for (const auto* s : by_pid) {
    if (out.empty() || out.back().pid != s->pid) out.push_back({s->pid, 0, 0, 0});
    out.back().sm += PercentOf(*s, Engine::kSm);
    out.back().memory += PercentOf(*s, Engine::kMemory);
    ++out.back().count;
  }
  return out;
}

// One engine's shares from the sums, with every listed PID that had no sample at 0 (idle in the
// window), merged by PID.
SmShareTable SharesFrom(const gpu::DeviceSample& d, const std::vector<PidSums>& sums, Engine e) {
  const double periods = PeriodsOf(d, e);
  std::vector<uint32_t> listed;
  listed.reserve(d.processes.size());
  for (const auto& p : d.processes) listed.push_back(p.pid);
  std::sort(listed.begin(), listed.end());
  SmShareTable out;
  out.reserve(sums.size() + listed.size());
  size_t j = 0;
  for (const auto& p : sums) {
    for (; j < listed.size() && listed[j] <= p.pid; ++j)
      if (listed[j] < p.pid && (out.empty() || out.back().first != listed[j]))
        out.emplace_back(listed[j], 0.0);
    out.emplace_back(p.pid, ShareOf(e == Engine::kSm ? p.sm : p.memory, p.count, periods));
  }
  for (; j < listed.size(); ++j)
    if (out.empty() || out.back().first != listed[j]) out.emplace_back(listed[j], 0.0);
  return out;
}

SmShareTable Shares(const gpu::DeviceSample& d, Engine e) {
  if (!d.process_utilization_supported) return {};
  return SharesFrom(d, SumByPid(d), e);
}

std::pair<std::optional<double>, std::optional<double>> ShareSplit(const gpu::DeviceSample& d,
                                                                   uint32_t pid, uint64_t at_us,
                                                                   Engine e) {
  if (!d.process_utilization_supported) return {};
  double before = 0, after = 0;
  size_t count = 0;
  for (const auto& s : d.process_util) {
    if (s.pid != pid) continue;
    ++count;
    (s.timestamp_us < at_us ? before : after) += PercentOf(s, e);
  }
  const double periods = PeriodsOf(d, e);
  return {ShareOf(before, count, periods), ShareOf(after, count, periods)};
}

}  // namespace

SmShareTable SmShares(const gpu::DeviceSample& d) { return Shares(d, Engine::kSm); }

std::optional<double> SamplesBusyFraction(const gpu::DeviceSample& d, bool mps) {
  if (mps || !d.process_utilization_supported || !d.process_util_period_us ||
      *d.process_util_period_us == 0 || d.process_util_uncovered_us > 0 ||
      d.process_util_window_end_us <= d.process_util_window_start_us)
    return std::nullopt;
  std::map<uint64_t, double> per_period;
  for (const auto& s : d.process_util) per_period[s.timestamp_us] += s.sm_percent / 100.0;
  double busy = 0;
  for (const auto& [stamp, sum] : per_period) busy += std::min(1.0, sum);
  const double periods =
      static_cast<double>(d.process_util_window_end_us - d.process_util_window_start_us) /
      static_cast<double>(*d.process_util_period_us);
  return std::clamp(busy / std::max(1.0, periods), 0.0, 1.0);
}

SmShareTable MemoryBusyShares(const gpu::DeviceSample& d) { return Shares(d, Engine::kMemory); }

std::pair<SmShareTable, SmShareTable> SmAndMemoryBusyShares(const gpu::DeviceSample& d) {
  if (!d.process_utilization_supported) return {};
  const auto sums = SumByPid(d);
  return {SharesFrom(d, sums, Engine::kSm), SharesFrom(d, sums, Engine::kMemory)};
}

std::pair<std::optional<double>, std::optional<double>> SmShareSplit(const gpu::DeviceSample& d,
                                                                     uint32_t pid, uint64_t at_us) {
  return ShareSplit(d, pid, at_us, Engine::kSm);
}

std::pair<std::optional<double>, std::optional<double>> MemoryBusyShareSplit(
    const gpu::DeviceSample& d, uint32_t pid, uint64_t at_us) {
  return ShareSplit(d, pid, at_us, Engine::kMemory);
}

std::optional<double> SmShareOf(const SmShareTable& shares, uint32_t pid) {
  auto it = std::lower_bound(shares.begin(), shares.end(), pid,
                             [](const auto& e, uint32_t p) { return e.first < p; });
  if (it == shares.end() || it->first != pid) return std::nullopt;
  return it->second;
}

}  // namespace gpumeter::attribution
