// The DCGM activity source (`--dcgm-metrics URL`): reads the node's dcgm-exporter page over HTTP
// and keeps, per GPU and MIG GPU instance, the exporter's latest GR engine activity with the
// time its collection was first seen. Optional: when the exporter is down, its series are missing
// or stale, the activity is unknown (absent), never 0, and the agent's readiness is unaffected.
//
// A read has an overall deadline (not only per socket read) and a size cap, so a slow or hostile
// server costs at most the deadline; the page is parsed as it arrives and only what the reading
// needs is kept (dcgm_page.h), so a large page costs no more memory than a small one. The agent
// reads on a thread of its own (Start); `simulate` calls Refresh itself with its simulated clock.
// Freshness: dcgm-exporter gives no timestamps, so a collection is told by its GPU's series
// changing (the energy counter in the default field set grows on every collection); a GPU whose
// series have not changed for `max_age_s` is stale.
//
// Thread-safety: Refresh, Ingest, Start and Stop from one thread; Latest and Status from any.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/stoppable_worker.h"
#include "domain/source_status.h"
#include "sources/dcgm/dcgm_page.h"
#include "sources/polled/polled_source.h"

namespace gpumeter::dcgm {

struct DcgmSourceOptions {
  std::string url;  // http://host:port[/path]; without a path, /metrics
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds deadline{3000};  // the whole read, connect to last byte
  size_t max_reply_bytes = 64u << 20;        // a 8-GPU node's page is well under 1 MiB
  // Three of dcgm-exporter's default 30 s collections: two missed in a row is an outage, not a
  // slow scrape. Raise it with the exporter's -c.
  double max_age_s = 90;
  double poll_interval_s = 2;  // Start()'s period: a collection is seen at most this late
  // Seconds on the clock the passes use (the snapshot's wall clock); unset: the system clock.
  std::function<double()> clock_s;
};

struct DcgmSeries {
  double value = 0;    // GR engine activity, [0, 1]: the exporter's mean over its interval
  double seen_s = 0;   // when its GPU's series last changed: this collection was first seen
  bool stale = false;  // the GPU's series have not changed for max_age_s
};

struct DcgmReading {
  std::map<DcgmKey, DcgmSeries> series;  // what the last good read had; empty when down
  std::set<std::string> hosts;
  std::set<std::string> gpus;  // UUIDs with any series on the page
  size_t skipped = 0;
  std::vector<std::string> skipped_why;
  bool gpu_fields = false;  // the page has series that change every collection (energy, power)
};

class DcgmSource final : public sources::PolledSource<DcgmReading> {
 public:
  explicit DcgmSource(DcgmSourceOptions options);
  ~DcgmSource();  // stops the thread
  DcgmSource(const DcgmSource&) = delete;
  DcgmSource& operator=(const DcgmSource&) = delete;

  // One read at `now_s`: fetch, then Ingest. On failure the published reading is emptied
  // (unknown, not the last values) and the error returned.
  Expected<void> Refresh(double now_s);
  // A page's text read at `now_s`: parse, update freshness, publish. `simulate` hands its
  // simulated node's page here directly (no server in the gpumeter binary).
  Expected<void> Ingest(std::string_view text, double now_s);
  // Reads every poll_interval_s on a thread of its own until Stop (or destruction).
  void Start();
  void Stop();

  // Poll does nothing: the source reads on its own thread (Start), or `simulate` calls Refresh.
  // The latest reading; never null (empty before the first good read).
  std::shared_ptr<const DcgmReading> Current() const override;
  domain::SourceStatus Status() const override;
  const DcgmSourceOptions& options() const { return options_; }

 private:
  struct GpuFreshness {
    uint64_t fingerprint = 0;
    double changed_s = 0;
  };
  Expected<void> Fail(const std::string& why);       // with mu_ held
  void Publish(const DcgmPage& read, double now_s);  // a page read at `now_s`: freshness, publish

  DcgmSourceOptions options_;
  std::map<std::string, GpuFreshness> fresh_;  // by GPU UUID; Refresh's thread only
  mutable std::mutex mu_;                      // guards latest_ and tracker_
  std::shared_ptr<const DcgmReading> latest_;
  domain::SourceTracker tracker_;
  StoppableWorker worker_;  // last: it stops before the rest is destroyed
};

// GET the page with the source's limits, read as it arrives; errors name the URL and what went
// wrong. An error of the page itself (a malformed line, another source's page) comes only once
// the reply is complete, as it did when a page was read whole: a cap, the deadline or the
// connection come first. `page_error`, if given, says which it was. Exposed for doctor.
Expected<DcgmPage> FetchDcgmPage(const DcgmSourceOptions& options, bool* page_error = nullptr);

}  // namespace gpumeter::dcgm
