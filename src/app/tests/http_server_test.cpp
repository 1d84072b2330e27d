// The HTTP endpoints over a real sampler (fake NVML) and pipeline, as the runtime wires them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "app/agent/runtime.h"
#include "domain/node_snapshot_json.h"
#include "sinks/metrics/http_server.h"
#include "support/fake_nvml.h"

namespace gpumeter::metrics {
namespace {

using ::testing::HasSubstr;

// The timeslice-h100 scenario sampled every 50 ms into a pipeline, as the runtime wires them.
struct SampledNode {
  SampledNode() : pipeline({nullptr, nullptr, nullptr}, Options()) {}
  static node::PipelineOptions Options() {
    node::PipelineOptions po;
    po.node = "n1";
    return po;
  }
  sampler::CallWatch watch;
  testing::FakeNvml fake{"r580", testing::ScenarioPath("timeslice-h100"), 5, &watch};
  node::NodePipeline pipeline;
  sampler::Sampler sampler{
      fake.source(),
      watch,
      {std::chrono::milliseconds(50),
       std::chrono::milliseconds(2000),
       {},
       [this](std::shared_ptr<const gpu::SampleResult> r) { pipeline.OnPass(std::move(r)); }}};
  app::SamplingView view{sampler, pipeline};
};

TEST(HttpServer, ServesMetricsHealthAndReadiness) {
  SampledNode n;
  ASSERT_TRUE(n.fake.ok());
  auto& s = n.sampler;
  HttpServer server(n.view, {});
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  ASSERT_THAT(server.url(), HasSubstr("http://127.0.0.1:"));
  httplib::Client client(server.url());
  auto ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503) << "not ready before the first sample";
  s.Start();
  ASSERT_TRUE(s.WaitForPass(1, std::chrono::seconds(10)));
  ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto m = client.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(m->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(m->body,
              HasSubstr("gpumeter_gpu_memory_total_bytes{node=\"n1\",gpu=\"0\",gpu_uuid=\"GPU-"
                        "8c5e0f6a-7d3b-4a9e-b1c2-3d4e5f6a7b01\"} 85520809984\n"));
  EXPECT_THAT(m->body, HasSubstr("gpumeter_source_up{node=\"n1\",source=\"nvml\"} 1\n"));
  server.Stop();
  s.Stop();
}

// The latest pass as the core saw it, written by the agent and read back by the snapshot's reader.
TEST(HttpServer, ServesTheLatestPassAsASnapshotThatReadsBack) {
  SampledNode n;
  ASSERT_TRUE(n.fake.ok());
  HttpServer server(n.view, {});
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  httplib::Client client(server.url());
  auto none = client.Get("/api/v2/snapshot");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 503) << "no pass yet: nothing to show, not an empty node";
  n.sampler.Start();
  ASSERT_TRUE(n.sampler.WaitForPass(2, std::chrono::seconds(10)));
  n.sampler.Stop();
  auto got = client.Get("/api/v2/snapshot");
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200);
  EXPECT_EQ(got->get_header_value("Content-Type"), "application/json");
  const auto snap = domain::ReadNodeSnapshot(got->body);
  ASSERT_TRUE(snap) << snap.error().message;
  const auto published = n.pipeline.Latest()->snapshot;
  ASSERT_NE(published, nullptr);
  EXPECT_EQ(snap->sequence, published->sequence);
  EXPECT_TRUE(snap->ok);
  ASSERT_EQ(snap->gpus.devices.size(), 1u);
  EXPECT_EQ(snap->gpus.devices[0].uuid, "GPU-8c5e0f6a-7d3b-4a9e-b1c2-3d4e5f6a7b01");
  EXPECT_EQ(snap->processes.size(), published->processes.size());
  EXPECT_FALSE(snap->processes.empty()) << "the scenario runs processes on its GPU";
  EXPECT_EQ(domain::WriteNodeSnapshot(*snap), domain::WriteNodeSnapshot(*published));
  EXPECT_EQ(client.Get("/api/v1/snapshot")->status, 404) << "the snapshot is new: v2 only";
  server.Stop();
}

TEST(HttpServer, FiftyConcurrentScrapersDoNotHoldUpSampling) {
  sampler::CallWatch watch;
  testing::FakeNvml fake("r580", testing::ScenarioPath("node-8gpu"), 5, &watch);
  ASSERT_TRUE(fake.ok());
  node::NodePipeline pipeline({nullptr, nullptr, nullptr}, {});
  std::mutex mu;
  std::vector<std::chrono::steady_clock::time_point> passes;
  sampler::Sampler s(fake.source(), watch,
                     {std::chrono::milliseconds(100),
                      std::chrono::milliseconds(2000),
                      {},
                      [&](std::shared_ptr<const gpu::SampleResult> r) {
                        pipeline.OnPass(r);
                        std::lock_guard lock(mu);
                        passes.push_back(std::chrono::steady_clock::now());
                      }});
  app::SamplingView view(s, pipeline);
  HttpServer server(view, {});
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  s.Start();
  ASSERT_TRUE(s.WaitForPass(2, std::chrono::seconds(10)));
  std::atomic<bool> stop{false};
  std::atomic<int> scrapes{0}, failures{0};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  std::vector<std::thread> scrapers;
  for (int i = 0; i < 50; ++i)
    scrapers.emplace_back([&] {
      httplib::Client c(server.url());
      // A scraper waits as long as Prometheus does by default (scrape_timeout 10 s): 50 clients in
      // a tight loop on a shared 2-core machine queue for the server's threads.
      c.set_read_timeout(std::chrono::seconds(10));
      while (!stop) {
        auto r = c.Get("/metrics");
        if (r && r->status == 200) {
          ++scrapes;
        } else {
          ++failures;
          std::lock_guard lock(errors_mu);
          errors.push_back(r ? "HTTP " + std::to_string(r->status) : httplib::to_string(r.error()));
        }
      }
    });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  size_t before = 0;
  {
    std::lock_guard lock(mu);
    before = passes.size();
    passes.clear();
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  stop = true;
  for (auto& t : scrapers) t.join();
  s.Stop();
  server.Stop();
  EXPECT_GT(before, 0u);
  EXPECT_GT(scrapes.load(), 50);
  EXPECT_EQ(failures.load(), 0) << "first error: " << (errors.empty() ? "" : errors.front());
  // The sampler keeps its 100 ms rhythm: a scrape never waits on it and it never waits on a
  // scrape. The bound is loose (10x) because this machine is shared; a scrape that took the
  // sampler's lock for its whole render, or called the driver, would blow through it.
  std::lock_guard lock(mu);
  ASSERT_GE(passes.size(), 10u) << "about 20 passes expected in 2 s";
  std::chrono::steady_clock::duration worst{};
  for (size_t i = 1; i < passes.size(); ++i) worst = std::max(worst, passes[i] - passes[i - 1]);
  EXPECT_LT(worst, std::chrono::seconds(1)) << "largest gap between passes under 50 scrapers";
}

TEST(HttpServer, BusyPortIsAClearError) {
  sampler::CallWatch watch;
  testing::FakeNvml fake("r580", testing::ScenarioPath("exclusive"), 0, &watch);
  sampler::Sampler s(fake.source(), watch, {});
  node::NodePipeline pipeline({nullptr, nullptr, nullptr}, {});
  app::SamplingView view(s, pipeline);
  HttpServer a(view, {});
  ASSERT_TRUE(a.Start("127.0.0.1:0"));
  const auto port = a.url().substr(a.url().rfind(':') + 1);
  HttpServer b(view, {});
  auto r = b.Start("127.0.0.1:" + port);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("cannot bind"));
}

}  // namespace
}  // namespace gpumeter::metrics
