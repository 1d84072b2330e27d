// Per-process utilization (nvmlDeviceGetProcessesUtilizationInfo, or
// nvmlDeviceGetProcessUtilization before 550): each read is a window from the GPU's last read to
// now, aligned on the driver's sample period, with what the driver's ring dropped of it told apart
// from idle time.
#include <algorithm>
#include <set>
#include <vector>

#include "sources/nvml/device_readers.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {
namespace {

constexpr int kMaxSizeRetries = 8;  // the list can grow between the two calls of the pattern

struct UtilRead {
  nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
  const char* call = "";  // the entry point read, "" when the driver has none
};

UtilRead ReadInfo(const DeviceRead& r, uint64_t since_us,
                  std::vector<gpu::ProcessUtilSample>& out) {
  constexpr Sym kCall = Sym::nvmlDeviceGetProcessesUtilizationInfo;
  nvmlProcessesUtilizationInfo_v1_t info{};
  info.version = nvmlProcessesUtilizationInfo_v1;
  info.lastSeenTimeStamp = since_us;
  nvmlReturn_t rc = r.Call<kCall>(r.h, &info);
  std::vector<nvmlProcessUtilizationInfo_v1_t> buf;
  for (int a = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && a < kMaxSizeRetries; ++a) {
    buf.assign(DriverListEntries(info.processSamplesCount, 0, 100), {});  // count may be 0
    info.processSamplesCount = static_cast<unsigned int>(buf.size());
    info.procUtilArray = buf.data();
    rc = r.Call<kCall>(r.h, &info);
  }
  if (rc == NVML_SUCCESS)
    for (unsigned int i = 0; i < info.processSamplesCount && i < buf.size(); ++i)
      out.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil});
  return {rc, kNameOf<kCall>};
}

UtilRead ReadSamples(const DeviceRead& r, uint64_t since_us,
                     std::vector<gpu::ProcessUtilSample>& out) {
  constexpr Sym kCall = Sym::nvmlDeviceGetProcessUtilization;
  const unsigned long long since = since_us;
  unsigned int count = 0;
  nvmlProcessUtilizationSample_t* none = nullptr;
  nvmlReturn_t rc = r.Call<kCall>(r.h, none, &count, since);
  std::vector<nvmlProcessUtilizationSample_t> buf;
  for (int a = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && a < kMaxSizeRetries; ++a) {
    buf.assign(DriverListEntries(count, 0, 100), {});
    count = static_cast<unsigned int>(buf.size());
    rc = r.Call<kCall>(r.h, buf.data(), &count, since);
  }
  if (rc == NVML_SUCCESS)
    for (unsigned int i = 0; i < count && i < buf.size(); ++i)
      out.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil});
  return {rc, kNameOf<kCall>};
}

// Per-process utilization samples newer than `since_us` (0: the driver's whole buffer) into
// `out`, through whichever entry point the driver has.
UtilRead ReadUtilSamples(const DeviceRead& r, uint64_t since_us,
                         std::vector<gpu::ProcessUtilSample>& out) {
  if (r.api().nvmlDeviceGetProcessesUtilizationInfo) return ReadInfo(r, since_us, out);
  if (r.api().nvmlDeviceGetProcessUtilization) return ReadSamples(r, since_us, out);
  return {};
}

// The driver keeps a ring of sample periods (NVML's buffer); a window longer than the ring loses
// its oldest part. When a read's first sample comes more than a period after the window's start,
// the gap is either idle time (no process was busy: NVML then writes no sample) or samples the
// ring dropped. One more read with lastSeenTimeStamp 0 (the whole ring) tells them apart: if the
// ring reaches back before the window, the gap was idle. If it does not, and the ring is full, the
// time before its oldest sample is uncovered. Full: its span did not grow since an earlier
// whole-ring read, or its oldest sample is newer than that read's (a ring still filling holds
// everything since the GPU's first sample, and keeps its oldest). The first read of a GPU is a
// whole-ring read too; while no read has shown a sample in the ring (an idle GPU since the agent
// started), whether it dropped any is not known, and the gap is uncovered: not taken for idle.
// A window with no sample at all is such a gap too once it is longer than the ring's span seen:
// an empty ring then says nothing was busy in its span, not before it (a burst early in a 15 s
// window, gone from a 10.7 s ring, was read as an idle window and its busy time lost).
// Sets r.dev.process_util_uncovered_us, and learns the buffer's span.
void AccountUncovered(const DeviceRead& r, const std::set<uint64_t>& stamps,
                      uint64_t window_start_us, uint64_t now_us, uint64_t period_us,
                      bool first_read) {
  const uint64_t seen_span = r.gpu.util_span_us;
  // Half a period of slack: stamps jitter, and a window that only just misses its first period
  // is not worth a whole-buffer read (nor an estimate).
  const uint64_t slack = period_us + period_us / 2;
  const bool empty_gap = stamps.empty() && seen_span > 0 && now_us > window_start_us + seen_span &&
                         now_us - seen_span > window_start_us + slack;
  const bool gap = period_us > 0 &&
                   (empty_gap || (!stamps.empty() && *stamps.begin() > window_start_us + slack));
  if (!gap && !first_read) return;
  std::vector<gpu::ProcessUtilSample> ring;
  const nvmlReturn_t rc = ReadUtilSamples(r, 0, ring).rc;
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND) return;
  std::set<uint64_t> ring_stamps;
  // The main read's filter (values above 100 % are not samples), and nothing stamped after this
  // pass's read: the driver may have taken a sample between the two reads.
  for (const auto& u : ring)
    if (u.sm_percent <= 100 && u.memory_percent <= 100 && u.timestamp_us <= now_us)
      ring_stamps.insert(u.timestamp_us);
  if (ring_stamps.empty()) {
    if (gap && empty_gap) r.dev.process_util_uncovered_us = now_us - seen_span - window_start_us;
    return;
  }
  // The period, for this estimate only (the windows' period is learnt from the windows' own
  // samples: a stale or off-grid stamp in the buffer must not shrink it).
  uint64_t period = period_us;
  for (auto a = ring_stamps.begin(); period_us == 0 && std::next(a) != ring_stamps.end(); ++a)
    if (period == 0 || *std::next(a) - *a < period) period = *std::next(a) - *a;
  if (period == 0) return;
  // The buffer may have dropped a sample between the two reads: the window's own first stamp
  // bounds what it held.
  const uint64_t oldest =
      std::min(*ring_stamps.begin(), stamps.empty() ? UINT64_MAX : *stamps.begin());
  const uint64_t ring_span = *ring_stamps.rbegin() - *ring_stamps.begin() + period;
  uint64_t& span = r.gpu.util_span_us;
  uint64_t& ring_oldest = r.gpu.util_oldest_us;
  const bool full = span == 0 || ring_span <= span + period / 2 ||
                    (ring_oldest > 0 && *ring_stamps.begin() > ring_oldest);
  span = std::max(span, ring_span);
  ring_oldest = *ring_stamps.begin();
  // A window no longer than a span the buffer has been seen to hold lost nothing: the buffer keeps
  // a span of periods, busy or not, so a late first sample there is idle time before it. (Without
  // this, a burst 3 s into a 5 s window, after an idle start, counted those 3 s as lost.)
  const bool within_seen = seen_span > 0 && now_us <= window_start_us + seen_span + slack;
  if (gap && full && !within_seen && oldest > window_start_us + period + period / 2)
    r.dev.process_util_uncovered_us = oldest - period - window_start_us;
}

// The driver stamps samples on a fixed period grid. Once the period is known, the window ends
// at the last period boundary before now and the next one starts there, so every driver
// period is counted in exactly one window (the share divides by whole periods).
void CloseWindow(const DeviceRead& r, const std::set<uint64_t>& stamps, uint64_t last_seen,
                 uint64_t newest, uint64_t now_us, bool first_read) {
  gpu::DeviceSample& dev = r.dev;
  uint64_t& period = r.gpu.util_period_us;
  for (auto a = stamps.begin(); a != stamps.end() && std::next(a) != stamps.end(); ++a) {
    const uint64_t gap = *std::next(a) - *a;
    if (period == 0 || gap < period) period = gap;
  }
  AccountUncovered(r, stamps, last_seen, now_us, period, first_read);
  if (period > 0) dev.process_util_period_us = period;
  if (r.gpu.util_span_us > 0) dev.process_util_buffer_span_us = r.gpu.util_span_us;
  const bool anchored = !stamps.empty() || !first_read;  // newest is a stamp or a boundary
  if (period > 0 && anchored && now_us >= newest) {
    dev.process_util_window_end_us = newest + (now_us - newest) / period * period;
    r.gpu.util_last_seen_us = dev.process_util_window_end_us;
  } else if (stamps.empty()) {
    // Nothing was busy, and no period grid to align to: the next window starts at this read
    // (the driver stamps a sample when it takes it, so none taken later is stamped before now).
    // Kept at the old start, an idle GPU's first busy window reached back to the agent's start
    // and its shares were divided over all that time: the busy time went unattributed.
    // Never backwards (a wall clock stepped back): samples already counted stay counted once.
    r.gpu.util_last_seen_us = std::max(now_us, last_seen);
  } else {
    r.gpu.util_last_seen_us = std::max(newest, last_seen);
  }
}

}  // namespace

bool ReadProcessUtilization(const DeviceRead& r, uint64_t now_us, uint64_t first_lookback_us) {
  gpu::DeviceSample& dev = r.dev;
  const bool first_read = !r.gpu.util_last_seen_us;
  const uint64_t last_seen = first_read ? now_us - first_lookback_us : *r.gpu.util_last_seen_us;
  dev.process_util_window_start_us = last_seen;
  dev.process_util_window_end_us = now_us;
  uint64_t newest = last_seen;
  std::vector<gpu::ProcessUtilSample> read;
  const UtilRead got = ReadUtilSamples(r, last_seen, read);
  for (const auto& u : read) {
    // Values above 100 % occur (nvtop#110) and stale samples can come back: drop both.
    if (u.sm_percent > 100 || u.memory_percent > 100 || u.timestamp_us <= last_seen) continue;
    dev.process_util.push_back(u);
    newest = std::max(newest, u.timestamp_us);
  }
  if (got.rc == NVML_ERROR_NOT_SUPPORTED) {
    dev.process_utilization_supported = false;
    return true;
  }
  // NOT_FOUND: no sample newer than last_seen, i.e. no process was busy. Not an error.
  if (got.rc != NVML_SUCCESS && got.rc != NVML_ERROR_NOT_FOUND) {
    r.Check(got.call, got.rc);
    // A failed read is no sample, not an idle window: this pass has no per-process utilization
    // (its split is not known), and the window stays open, so the next read takes the samples
    // the driver still holds from where this one failed.
    dev.process_util.clear();
    dev.process_utilization_supported = false;
    return false;
  }
  std::set<uint64_t> stamps;
  for (const auto& u : dev.process_util) stamps.insert(u.timestamp_us);
  CloseWindow(r, stamps, last_seen, newest, now_us, first_read);
  return true;
}

}  // namespace gpumeter::nvml
