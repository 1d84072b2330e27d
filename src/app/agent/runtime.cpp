#include "app/agent/runtime.h"

#include <malloc.h>
#include <pthread.h>

#include <csignal>

#include <future>
#include <thread>

namespace gpumeter::app {

namespace {

// glibc keeps memory freed by a thread in that thread's arena: the passes' short-lived
// allocations left the agent's resident memory creeping ~15 KB a minute (20 MB a day) with a flat
// heap (measured with massif and /proc/<pid>/smaps; bench/soak.sh). Returning free pages to the
// kernel once a minute keeps it flat; it takes well under a millisecond on the agent's few MB.
void ReturnFreeMemory(std::chrono::steady_clock::time_point& last) {
#ifdef __GLIBC__
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::minutes(1)) return;
  last = now;
  ReturnFreeHeap();
#else
  (void)last;
#endif
}

}  // namespace

void ReturnFreeHeap() {
#ifdef __GLIBC__
  (void)malloc_trim(0);  // 1 when memory was released, 0 when there was none: both fine
#endif
}

bool TuneAllocator() {
#ifdef __GLIBC__
  // Measured in bench/soak.sh: the ~16 arenas glibc made (one per thread, up to 8 per
  // core: 16 HTTP workers, the sampler, the rightsizer, gRPC's) each kept a free top of up to
  // trim_threshold + top_pad, which malloc_trim does not release in a thread's arena, and the
  // dynamic thresholds had raised trim_threshold to ~300 KB after the first large scrape buffer was
  // freed (malloc_info, mp_). Two arenas (the agent has two busy threads, the sampler and a
  // scrape), buffers of 64 KB and more (the ~100 KB exposition and its copies) in mmap, returned
  // when freed, and a fixed 128 KB trim threshold: RssAnon after a 15-minute warm-up 4.4 MB, was
  // 5.9 MB. The slope the soak showed then had other causes (docs/deploy.md, "What it needs, and
  // why": the memory row).
  constexpr int kArenas = 2, kMmapThreshold = 64 * 1024, kTrimThreshold = 128 * 1024,
                kTopPad = 64 * 1024;
  bool ok = mallopt(M_ARENA_MAX, kArenas) == 1;
  ok = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && ok;  // also ends the dynamic thresholds
  ok = mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1 && ok;
  ok = mallopt(M_TOP_PAD, kTopPad) == 1 && ok;
  return ok;
#else
  return true;
#endif
}

Expected<std::unique_ptr<NodeRuntime>> NodeRuntime::Start(RuntimeOptions o) {
  std::unique_ptr<NodeRuntime> rt(new NodeRuntime());
  o.nvml.observer = &rt->watch_;
  auto source = nvml::NvmlGpuSource::Create(o.nvml);
  if (!source) return tl::unexpected(source.error());
  rt->source_ = std::move(*source);
  rt->pipeline_ = std::make_unique<node::NodePipeline>(o.sources, o.pipeline);
  auto* pipeline = rt->pipeline_.get();
  sampler::SamplerOptions so;
  so.interval = ToMilliseconds(o.interval);
  so.call_deadline = ToMilliseconds(o.call_deadline);
  so.drain_interval = ToMilliseconds(o.drain_interval);
  so.before_pass = std::move(o.before_pass);
  so.on_drain = [pipeline, before = std::move(o.before_drain)](const std::vector<uint32_t>& pids) {
    if (pids.empty()) return;
    if (before) before();
    pipeline->OnDrain(pids);
  };
  so.on_pass = [pipeline, after = std::move(o.after_pass),
                last_trim = std::chrono::steady_clock::now()](
                   std::shared_ptr<const gpu::SampleResult> r) mutable {
    pipeline->OnPass(std::move(r));
    if (after) after(*pipeline->Latest());
    ReturnFreeMemory(last_trim);
  };
  rt->sampler_ = std::make_unique<sampler::Sampler>(*rt->source_, rt->watch_, std::move(so));
  rt->view_ = std::make_unique<SamplingView>(*rt->sampler_, *rt->pipeline_);
  // A pass that has not finished in two intervals plus one call's deadline is stuck somewhere.
  const auto stale_after = 2 * so.interval + so.call_deadline;
  if (o.exposition.stale_after.count() == 0) o.exposition.stale_after = stale_after;
  rt->http_ = std::make_unique<metrics::HttpServer>(*rt->view_, o.exposition);
  if (auto started = rt->http_->Start(o.http); !started) return tl::unexpected(started.error());
  if (!o.probe.listen.empty()) {
    if (o.probe.stale_after.count() == 0) o.probe.stale_after = o.exposition.stale_after;
    rt->probe_ = std::make_unique<metrics::ProbeServer>(*rt->view_);
    if (auto started = rt->probe_->Start(o.probe); !started) return tl::unexpected(started.error());
  }
  rt->sampler_->Start();
  return rt;
}

NodeRuntime::~NodeRuntime() {
  if (probe_) probe_->Stop();
  if (http_) http_->Stop();
  if (sampler_) sampler_->Stop();
}

bool StopSamplingWithin(NodeRuntime& rt, std::chrono::milliseconds limit) {
  auto done = std::make_shared<std::promise<void>>();
  auto stopped = done->get_future();
  std::thread([&rt, done] {
    rt.StopSampling();
    done->set_value();
  }).detach();
  return stopped.wait_for(limit) == std::future_status::ready;
}

sigset_t BlockStopSignals() {
  // A long-running server: a peer that hangs up (a scraper gone mid-reply over TLS, a socket shut
  // down at a request's deadline) is an EPIPE for the writer to handle, never the end of the agent.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int WaitForSignal(const sigset_t& signals, std::chrono::duration<double> timeout) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  if (ns <= 0) return 0;
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  const int received = sigtimedwait(&signals, nullptr, &ts);
  return received > 0 ? received : 0;
}

}  // namespace gpumeter::app
