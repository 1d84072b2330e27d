// The running agent on one node, shared by `gpumeter agent` and `gpumeter demo`: the NVML source
// with its call watchdog, the sampler thread, the node pipeline it feeds after each pass, and the
// HTTP endpoints that read what the pipeline published. Only the inputs differ between the two
// (the demo's come from a fake NVML, a fake kubelet, a fixture /proc and a pods file).
// Destruction stops HTTP first, then sampling.
#pragma once

#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <string>

#include "common/duration.h"
#include "common/error.h"
#include "node/pipeline/pipeline.h"
#include "node/state/state_view.h"
#include "sinks/metrics/http_server.h"
#include "sinks/metrics/probe_server.h"
#include "sources/nvml/nvml_gpu_source.h"
#include "sources/sampler/sampler.h"

namespace gpumeter::app {

// The StateView of a sampler and of the pipeline it feeds (both borrowed, must outlive it).
class SamplingView final : public node::StateView {
 public:
  SamplingView(const sampler::Sampler& sampler, const node::NodePipeline& pipeline)
      : sampler_(sampler), pipeline_(pipeline) {}
  std::shared_ptr<const node::NodeState> State() const override { return pipeline_.Latest(); }
  gpu::SamplerHealth Health() const override { return sampler_.Health(); }

 private:
  const sampler::Sampler& sampler_;
  const node::NodePipeline& pipeline_;
};

struct RuntimeOptions {
  nvml::NvmlSourceOptions nvml;  // its observer is set by the runtime
  Seconds interval{1};
  Seconds call_deadline{2};
  // Between passes longer than this, the driver's sample buffers are read (they hold ~10 s), so a
  // long interval loses none of its per-process or power samples. 0: never.
  Seconds drain_interval{5};
  node::PipelineOptions pipeline;
  node::PipelineSources sources;  // borrowed; must outlive the runtime
  metrics::ExpositionOptions exposition;
  metrics::HttpOptions http;
  metrics::ProbeOptions probe;  // its listen empty: no probe listener
  std::function<void()>
      before_pass;  // on the sampling thread (the demo refreshes its /proc fixture)
  // Before the PIDs a drain met are identified in /proc, on the sampling thread (the demo: as
  // before_pass).
  std::function<void()> before_drain;
  // On the sampling thread, after each pass is published (the usage store records intervals).
  std::function<void(const node::NodeState&)> after_pass;
};

class NodeRuntime {
 public:
  // Loads NVML, binds the listen address and starts sampling. Errors name what failed.
  static Expected<std::unique_ptr<NodeRuntime>> Start(RuntimeOptions options);
  ~NodeRuntime();
  NodeRuntime(const NodeRuntime&) = delete;
  NodeRuntime& operator=(const NodeRuntime&) = delete;

  const gpu::Capabilities& capabilities() const { return source_->capabilities(); }
  const std::string& url() const { return http_->url(); }
  // The probe listener's URL; empty without one.
  std::string probe_url() const { return probe_ ? probe_->url() : std::string(); }
  gpu::SamplerHealth Health() const { return sampler_->Health(); }
  std::shared_ptr<const node::NodeState> State() const { return pipeline_->Latest(); }
  bool WaitForPass(uint64_t sequence, std::chrono::milliseconds timeout) const {
    return sampler_->WaitForPass(sequence, timeout);
  }
  // Stops sampling (and so recording) while /metrics keeps serving the final counters: a last
  // scrape then sees everything the store has. Idempotent.
  void StopSampling() { sampler_->Stop(); }
  // Once sampling has stopped (never while it runs): books what the pipeline still holds for
  // DCGM activity, unknown, and returns the final state (NodePipeline::Finish).
  std::shared_ptr<const node::NodeState> FinishAccounting() {
    pipeline_->Finish();
    return pipeline_->Latest();
  }
  // After FinishAccounting and the store's flush: the store's health published again for the
  // last scrapes (NodePipeline::RefreshStoreHealth).
  void PublishStoreHealth() { pipeline_->RefreshStoreHealth(); }

 private:
  NodeRuntime() = default;
  sampler::CallWatch watch_;
  std::unique_ptr<nvml::NvmlGpuSource> source_;
  std::unique_ptr<node::NodePipeline> pipeline_;
  std::unique_ptr<sampler::Sampler> sampler_;
  std::unique_ptr<SamplingView> view_;
  std::unique_ptr<metrics::HttpServer> http_;
  std::unique_ptr<metrics::ProbeServer> probe_;
};

// Stops `rt`'s sampling, waiting at most `limit`; false when the sampling thread did not stop in
// time (it is stuck in a call; it keeps running, detached from the caller).
bool StopSamplingWithin(NodeRuntime& rt, std::chrono::milliseconds limit);

// Sets glibc's allocator up for a process that runs for weeks (call before any thread starts):
// two arenas, and fixed mmap and trim thresholds, so freed memory goes back to the kernel instead
// of accumulating as free space at the top of each thread's arena (runtime.cpp says what was
// measured). False when the C library refused a setting; a no-op returning true elsewhere.
bool TuneAllocator();

// Hands the free pages of every arena back to the kernel now (malloc_trim): after a burst such as
// a rightsizing run (an hour of minutes read and freed), whose pages would otherwise stay resident
// until the sampler's next once-a-minute trim. Well under a millisecond; thread-safe.
void ReturnFreeHeap();

// Blocks SIGINT and SIGTERM in the calling thread (call before any thread starts), so that
// WaitForSignal can take them synchronously.
sigset_t BlockStopSignals();
// Waits up to `timeout` for one of `signals`; returns the signal number, or 0 on timeout.
int WaitForSignal(const sigset_t& signals, std::chrono::duration<double> timeout);

}  // namespace gpumeter::app
