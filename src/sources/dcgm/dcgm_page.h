// What the DCGM activity source reads from a dcgm-exporter page (docs/attribution.md, "DCGM"):
// the graphics-engine activity of each GPU and MIG GPU instance, and a fingerprint of each GPU's
// series that changes when the exporter collects again. Pure; plain values.
//
// And each one's memory busy time, DCGM_FI_PROF_DRAM_ACTIVE (DCGM_FI_PROF_DRAM_UTIL_RATIO in 4.x).
// The field is DCGM_FI_PROF_GR_ENGINE_ACTIVE, renamed DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO in DCGM
// 4.6 (both are read; the new name wins where a page has both). A series is keyed by its `UUID`
// label (`uuid` with the exporter's -o flag), the parent GPU on MIG, and `GPU_I_ID`: absent means
// the whole GPU. The host is `Hostname` before dcgm-exporter PR #655 (2026-05), `hostname` after.
//
// A page is read as it arrives (DcgmPageReader, over prom::PromStream): what a read keeps is the
// activity series, a hash per GPU and a few host names, never the page, whatever its size. Past
// what one node's exporter writes (kMaxPageGpus GPUs, kMaxActivitySeries activity series) a page
// is another source (a federation, a wrong URL) and an error, which bounds that too.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

#include "common/prom/prom_text.h"

namespace gpumeter::dcgm {

// A GPU (gpu_instance_id empty) or one of its MIG GPU instances; `dram`: its DRAM_ACTIVE series
// rather than its GR engine activity.
struct DcgmKey {
  std::string gpu_uuid;  // "GPU-…": the parent on MIG
  std::optional<uint32_t> gpu_instance_id;
  bool dram = false;
  auto operator<=>(const DcgmKey&) const = default;
};

struct DcgmPage {
  // GR engine activity, [0, 1] (clamped: DCGM's profiling ratios can overshoot on MIG).
  std::map<DcgmKey, double> gr_active;
  // DRAM_ACTIVE (ratio of cycles the memory interface moved data), [0, 1]; keys without `dram`.
  std::map<DcgmKey, double> dram_active;
  // Per GPU UUID, a hash of every series of that GPU on the page (any field): equal hashes on
  // two reads mean the exporter did not collect in between.
  std::map<std::string, uint64_t> gpu_fingerprint;
  std::set<std::string> hosts;  // the `hostname`/`Hostname` labels seen, the first kMaxHosts
  bool more_hosts = false;      // and more than those
  // The page has series that change every collection (energy, power): DcgmSource tells a new
  // collection by them.
  bool gpu_fields = false;
  size_t samples = 0;
  // Series of the activity field skipped: no UUID, a GPU_I_ID that is not a number, or a value
  // that is NaN, ±Inf or negative. The first few as "line N: why", for doctor and logs.
  size_t skipped = 0;
  std::vector<std::string> skipped_why;
  bool operator==(const DcgmPage&) const = default;
};

// One node's exporter writes a few GPUs (16 at most today), each with up to 7 MIG instances,
// their activity series under 4 names, some copied per pod: the caps leave room for all of it.
inline constexpr size_t kMaxPageGpus = 256;
inline constexpr size_t kMaxActivitySeries = 16384;
inline constexpr size_t kMaxHosts = 16;

// The activity field under its two names: the DCGM ≥ 4.6 name first.
inline constexpr const char* kGrEngineUtilRatio = "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO";
inline constexpr const char* kGrEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
// Memory busy time under its two names (nvml-health.md §7): DCGM 4.x's first.
inline constexpr const char* kDramUtilRatio = "DCGM_FI_PROF_DRAM_UTIL_RATIO";
inline constexpr const char* kDramActive = "DCGM_FI_PROF_DRAM_ACTIVE";

// A page read as it arrives. Not thread-safe; not movable (its stream calls back into it).
class DcgmPageReader {
 public:
  explicit DcgmPageReader(size_t max_line_bytes = prom::kMaxLineBytes);
  DcgmPageReader(const DcgmPageReader&) = delete;
  DcgmPageReader& operator=(const DcgmPageReader&) = delete;

  // The next piece of the page's text, split anywhere. Errors ("line N: …") are the parser's, a
  // line over the cap, and a page past one node's GPUs or activity series; after one, every call
  // returns it again.
  Expected<void> Feed(std::string_view chunk);
  // The page's end; the reading. Once.
  Expected<DcgmPage> Finish();
  // One sample of a page already parsed (ReadDcgmPage); Feed hands each sample here.
  Expected<void> Add(const prom::PromSample& s);

 private:
  DcgmPage out_;
  // Kept apart: the new name wins for a key that has both.
  std::map<DcgmKey, double> old_name_, old_dram_name_;
  size_t activity_series_ = 0;
  prom::PromStream stream_;  // last: it calls Add, which uses the members above
};

// The activity fields under either name: those whose series a read keeps.
bool IsActivityField(const std::string& name);

// A page's text read whole, as the reader reads it streamed (`simulate` hands its page over).
Expected<DcgmPage> ReadDcgmText(std::string_view text);
// A page already parsed, every series checked for repeats (tests compare the two).
Expected<DcgmPage> ReadDcgmPage(const prom::PromPage& page);

}  // namespace gpumeter::dcgm
