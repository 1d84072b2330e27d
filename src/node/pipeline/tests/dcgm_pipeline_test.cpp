// The pipeline with a DCGM source: an A100 MIG instance without GPM gets its busy fraction from
// dcgm-exporter's page once the collection covering an interval is seen (held until then), the
// idle row names DCGM, the source is listed with the others; with the source down, the
// instance's time is unattributed.
#include <gtest/gtest.h>

#include "node/pipeline/pipeline.h"
#include "sources/dcgm/dcgm_source.h"

namespace gpumeter::node {
namespace {

constexpr const char* kGpu = "GPU-5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d01";
constexpr const char* kMig = "MIG-1c2d3e4f-5a6b-5c7d-8e9f-a00000000001";

std::shared_ptr<const gpu::SampleResult> Pass(int k) {
  auto r = std::make_shared<gpu::SampleResult>();
  r->sequence = static_cast<uint64_t>(k + 1);
  r->taken = std::chrono::steady_clock::time_point(std::chrono::seconds(1000 + k));
  r->ok = true;
  r->snapshot.timestamp_us = static_cast<uint64_t>(100 + k) * 1'000'000;
  gpu::DeviceSample d;
  d.uuid = kGpu;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.mig_enabled = true;
  d.mig_total_slices = 7;
  d.process_utilization_supported = false;
  gpu::MigInstanceSample m;
  m.uuid = kMig;
  m.gpu_instance_id = 2;
  m.slices = 3;
  m.memory = gpu::MemoryInfo{40ull << 30, 1ull << 30, 0, 39ull << 30};
  m.processes = {{4242, gpu::ProcessType::kCompute, 1ull << 30, 2, 0}};
  d.mig_instances = {m};
  r->snapshot.devices = {d};
  return r;
}

const attribution::Row* IdleRow(const NodeState& s) {
  for (const auto& l : s.last_interval)
    if (l.uuid == kMig)
      for (const auto& r : l.rows)
        if (r.owner.kind == domain::OwnerKind::kIdle) return &r;
  return nullptr;
}

double Unattributed(const NodeState& s) {
  for (const auto& l : s.last_interval)
    if (l.uuid == kMig)
      for (const auto& r : l.rows)
        if (r.owner.kind == domain::OwnerKind::kUnattributed) return r.compute_seconds;
  return 0;
}

TEST(DcgmPipeline, DcgmActivityFeedsTheMigInstance) {
  dcgm::DcgmSourceOptions o;
  o.url = "http://127.0.0.1:9400/metrics";
  dcgm::DcgmSource source(o);
  PipelineSources sources;
  sources.dcgm = &source;
  NodePipeline pipeline(sources, PipelineOptions{});
  ASSERT_TRUE(source.Ingest(std::string("DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"") + kGpu +
                                "\",GPU_I_ID=\"2\"} 0.4\nDCGM_FI_DEV_POWER_USAGE{UUID=\"" + kGpu +
                                "\"} 150\n",
                            100));
  pipeline.OnPass(Pass(0));
  pipeline.OnPass(Pass(1));
  // The interval (100, 101] is held: the collection that covers it has not been seen yet.
  auto s = pipeline.Latest();
  EXPECT_EQ(IdleRow(*s), nullptr);
  EXPECT_EQ(s->intervals, 1u);
  // The exporter's next collection (its power field changed) is seen at 101.5: it covers
  // (100, 101.5] at 0.4, so the next pass books (100, 101.5], half a second late, the pass
  // (101, 102] split at the collection's end; (101.5, 102] waits for the next one.
  ASSERT_TRUE(source.Ingest(std::string("DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"") + kGpu +
                                "\",GPU_I_ID=\"2\"} 0.4\nDCGM_FI_DEV_POWER_USAGE{UUID=\"" + kGpu +
                                "\"} 151\n",
                            101.5));
  pipeline.OnPass(Pass(2));
  s = pipeline.Latest();
  const auto* idle = IdleRow(*s);
  ASSERT_TRUE(idle);
  for (const auto& l : s->last_interval)
    if (l.uuid == kMig) {
      EXPECT_DOUBLE_EQ(l.seconds, 1.5);
      EXPECT_DOUBLE_EQ(l.late_seconds, 0.5);
    }
  // Still current while held: its figures stand for now.
  EXPECT_EQ(s->unit_totals.at(kMig).last_interval, s->intervals);
  EXPECT_NEAR(idle->compute_seconds, 0.6 * 1.5, 1e-9);
  EXPECT_EQ(idle->compute_rule, domain::Rule::kUnitNotBusyDcgm);
  EXPECT_NEAR(Unattributed(*s), 0.4 * 1.5, 1e-9);  // its process has no known owner here
  bool listed = false;
  for (const auto& st : s->sources) listed = listed || (st.name == "dcgm" && st.up);
  EXPECT_TRUE(listed);
  // At a stop, (101.5, 102] is still held: booked with its activity unknown, not dropped, not 0.
  const auto before = s->intervals;
  pipeline.Finish();
  s = pipeline.Latest();
  EXPECT_EQ(s->intervals, before + 1);
  EXPECT_EQ(IdleRow(*s) ? IdleRow(*s)->compute_seconds : 0.0, 0.0);
  EXPECT_NEAR(Unattributed(*s), 0.5, 1e-9);
  pipeline.Finish();  // nothing left: no further interval
  EXPECT_EQ(pipeline.Latest()->intervals, before + 1);

  // The exporter goes away: unknown, never idle.
  o.url = "http://127.0.0.1:1/metrics";
  dcgm::DcgmSource down(o);
  sources.dcgm = &down;
  NodePipeline without(sources, PipelineOptions{});
  EXPECT_FALSE(down.Refresh(100));
  without.OnPass(Pass(0));
  without.OnPass(Pass(1));
  s = without.Latest();
  EXPECT_FALSE(IdleRow(*s) && IdleRow(*s)->compute_seconds > 0);
  EXPECT_NEAR(Unattributed(*s), 1.0, 1e-9);
  for (const auto& st : s->sources) {
    if (st.name == "dcgm") {
      EXPECT_FALSE(st.up);
    }
  }
}

}  // namespace
}  // namespace gpumeter::node
