// Builds the /metrics series from the latest NodeState and the sampler's health, and renders them
// as text 0.0.4 or OpenMetrics 1.0. Pure: no I/O and no driver calls; series of processes that
// are gone disappear by construction. Unknown values (NVML did not give them) produce no series
// rather than a 0. Every series goes through the catalogue (catalogue.h). Every label value is
// made valid UTF-8 of at most 1024 bytes (common/text_cell.h: ValidUtf8) before it is escaped,
// whatever its source, so no name from a pod, /proc or the driver can make a scraper refuse the
// page. Label sets are escaped once and shared by the families of an owner row, and the text is
// written straight into one string: 20,000 series render in a few milliseconds
// (bench/sampling_bench.cpp). Thread-safe (reads immutable values only).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/sample.h"
#include "node/state/node_state.h"
#include "sinks/metrics/catalogue.h"

namespace gpumeter::metrics {

struct ExpositionOptions {
  // Pod labels exported as label_<key> (non [a-zA-Z0-9_] characters become '_'), e.g. "team" ->
  // label_team, on gpumeter_pod_labels_info only: one info series per pod, joined at query time.
  // Never on the counters, whose identity must not change when a label does (a relabelled counter
  // would be a new series, and its whole total since the agent started would count again).
  std::vector<std::string> pod_label_keys;
  // Most container series per owner family in one scrape; the rest are left out and counted in
  // gpumeter_series_dropped (idle, system and unattributed rows are always kept).
  size_t max_series = 20000;
  // The per-process series (gpumeter_process_*: 2 per GPU process, the largest part of a busy
  // node's cardinality after the owner series). Reports and rightsizing never read them.
  bool process_series = true;
  // The per-owner families: the default set (at most 8 series per container and unit) or the full
  // set, which adds memory traffic, idle cost and the last interval's gauges (catalogue.h).
  ContainerSeries container_series = ContainerSeries::kDefault;
  // No sampling pass finished for this long: NVML's gpumeter_source_up is 0 and /readyz 503
  // (readiness.h). 0: never (tests that drive passes by hand).
  std::chrono::milliseconds stale_after{0};
};

// The series of one scrape, by family in catalogue order. Label sets are rendered, made valid UTF-8
// and escaped (`name="value",…`, without braces) and may be shared between families.
struct SeriesSet {
  struct Sample {
    uint32_t labels;  // index into label_sets
    double value;
  };
  std::vector<std::string> label_sets;
  std::array<std::vector<Sample>, static_cast<size_t>(Metric::kCount)> families;
  size_t series() const;
};

// What the server that serves the scrape knows about its own connections.
struct ServerStats {
  uint64_t connections_cut = 0;  // closed at the header deadline since start
};

SeriesSet BuildFamilies(const gpu::SamplerHealth& health, const node::NodeState& state,
                        const ExpositionOptions& options, std::chrono::steady_clock::time_point now,
                        const ServerStats& server = {});

// Text exposition format 0.0.4. Numbers in their shortest round-trip form, never in the locale's.
std::string RenderText(const SeriesSet& series);
// OpenMetrics 1.0 text (what Prometheus asks for first): counter families named without `_total`,
// `# UNIT` lines from the catalogue, `_info` gauges as the info type, `# EOF` at the end.
std::string RenderOpenMetrics(const SeriesSet& series);
// True when an Accept header asks for OpenMetrics (Prometheus 2.x sends it first by default).
bool WantsOpenMetrics(const std::string& accept);

}  // namespace gpumeter::metrics
