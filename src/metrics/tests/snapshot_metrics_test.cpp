#include "metrics/snapshot_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <locale>

#include "metrics/http_server.h"
#include "support/fake_nvml.h"

namespace gpumeter::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

sampler::SamplerHealth HealthWith(gpu::DeviceSample d) {
  auto r = std::make_shared<sampler::SampleResult>();
  r->sequence = 1;
  r->ok = true;
  r->taken = std::chrono::steady_clock::time_point{} + std::chrono::seconds(100);
  r->duration_seconds = 0.25;
  r->snapshot.devices.push_back(std::move(d));
  sampler::SamplerHealth h;
  h.latest = h.last_good = r;
  h.passes = 7;
  return h;
}

NodeContext Ctx() {
  NodeContext ctx;
  ctx.node = "n1";
  ctx.owner = [](uint32_t pid) -> std::optional<ProcessOwner> {
    if (pid == 1) return ProcessOwner{"ns", "pod \"quoted\"\\", "c"};
    if (pid == 2) return ProcessOwner{};
    return std::nullopt;
  };
  ctx.sharing_mode = [](const std::string&) { return std::string("time-slicing"); };
  return ctx;
}

gpu::DeviceSample Device() {
  gpu::DeviceSample d;
  d.index = 0;
  d.uuid = "GPU-x";
  d.name = "Test GPU";
  d.memory = gpu::MemoryInfo{1000, 300, 50, 650};
  d.utilization_gpu_percent = 50;
  d.energy_joules = 1234.5;
  // power_watts left unknown on purpose
  d.processes = {{1, gpu::ProcessType::kCompute, 100, {}, {}}, {2, gpu::ProcessType::kCompute, std::nullopt, {}, {}},
                 {3, gpu::ProcessType::kCompute, 200, {}, {}}};
  d.process_util = {{1, 10, 40, 0}, {1, 20, 45, 0}};
  return d;
}

std::string Render() {
  return RenderText(BuildFamilies(HealthWith(Device()), Ctx(), std::chrono::steady_clock::time_point{} + std::chrono::seconds(103)));
}

TEST(SnapshotMetrics, DeviceSeriesAndUnknownsAreAbsent) {
  const auto text = Render();
  EXPECT_THAT(text, HasSubstr("gpumeter_gpu_memory_used_bytes{node=\"n1\",gpu=\"0\",uuid=\"GPU-x\"} 300\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_gpu_memory_reserved_bytes{node=\"n1\",gpu=\"0\",uuid=\"GPU-x\"} 50\n"));
  EXPECT_THAT(text, HasSubstr("gpumeter_gpu_busy_ratio{node=\"n1\",gpu=\"0\",uuid=\"GPU-x\"} 0.5\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpumeter_gpu_energy_joules_total counter"));
  EXPECT_THAT(text, HasSubstr("sharing_mode=\"time-slicing\""));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_gpu_power_watts"))) << "unknown power must not appear as 0";
  EXPECT_THAT(text, HasSubstr("gpumeter_source_last_success_age_seconds{node=\"n1\",source=\"nvml\"} 3\n"));
}

TEST(SnapshotMetrics, ProcessSeriesByOwner) {
  const auto text = Render();
  // Label values are escaped: quote and backslash.
  EXPECT_THAT(text, HasSubstr("pod=\"pod \\\"quoted\\\"\\\\\",container=\"c\",owner=\"container\"} 100\n"));
  EXPECT_THAT(text, HasSubstr("pid=\"3\",namespace=\"\",pod=\"\",container=\"\",owner=\"unattributed\"} 200\n"));
  // Newest sample wins; a listed process without samples was idle (0), per NVML's semantics.
  EXPECT_THAT(text, HasSubstr("gpumeter_process_sm_ratio{node=\"n1\",uuid=\"GPU-x\",pid=\"1\""));
  EXPECT_THAT(text, HasSubstr("owner=\"container\"} 0.45\n"));
  EXPECT_THAT(text, HasSubstr("pid=\"2\",namespace=\"\",pod=\"\",container=\"\",owner=\"system\"} 0\n"));
  // pid 2 has unknown memory: no memory series for it.
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_process_memory_used_bytes{node=\"n1\",uuid=\"GPU-x\",pid=\"2\"")));
}

TEST(SnapshotMetrics, NoSampleYetOnlyHealth) {
  sampler::SamplerHealth h;
  const auto text = RenderText(BuildFamilies(h, Ctx(), std::chrono::steady_clock::now()));
  EXPECT_THAT(text, HasSubstr("gpumeter_source_up{node=\"n1\",source=\"nvml\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpumeter_gpu_")));
}

struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(SnapshotMetrics, LocaleProof) {
  const auto saved = std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  const auto text = Render();
  std::locale::global(saved);
  EXPECT_THAT(text, HasSubstr("} 0.5\n"));
  EXPECT_THAT(text, HasSubstr("} 1234.5\n"));
  EXPECT_THAT(text, Not(HasSubstr("0,5")));
}

TEST(ParseListen, AcceptsAndRejects) {
  EXPECT_EQ(ParseListen("127.0.0.1:9400")->second, 9400);
  EXPECT_EQ(ParseListen("[::1]:0")->first, "::1");
  EXPECT_EQ(ParseListen(":8080")->first, "0.0.0.0");
  EXPECT_THAT(ParseListen("localhost").error().message, HasSubstr("expected HOST:PORT"));
  EXPECT_THAT(ParseListen("h:99999").error().message, HasSubstr("0-65535"));
  EXPECT_THAT(ParseListen("h:12ab").error().message, HasSubstr("'h:12ab'"));
}

TEST(HttpServer, ServesMetricsHealthAndReadiness) {
  sampler::CallWatch watch;
  testing::FakeNvml fake("r580", testing::ScenarioPath("timeslice-h100"), 5, &watch);
  ASSERT_TRUE(fake.ok());
  sampler::Sampler s(fake.source(), watch, {std::chrono::milliseconds(50), std::chrono::milliseconds(2000)});
  HttpServer server(s, Ctx());
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
  EXPECT_THAT(m->body, HasSubstr("gpumeter_gpu_memory_total_bytes{node=\"n1\",gpu=\"0\",uuid=\"GPU-8c5e0f6a-7d3b-4a9e-b1c2-3d4e5f6a7b01\"} 85520809984\n"));
  EXPECT_THAT(m->body, HasSubstr("gpumeter_source_up{node=\"n1\",source=\"nvml\"} 1\n"));
  server.Stop();
  s.Stop();
}

TEST(HttpServer, BusyPortIsAClearError) {
  sampler::CallWatch watch;
  testing::FakeNvml fake("r580", testing::ScenarioPath("exclusive"), 0, &watch);
  sampler::Sampler s(fake.source(), watch, {});
  HttpServer a(s, Ctx());
  ASSERT_TRUE(a.Start("127.0.0.1:0"));
  const auto port = a.url().substr(a.url().rfind(':') + 1);
  HttpServer b(s, Ctx());
  auto r = b.Start("127.0.0.1:" + port);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("cannot bind"));
}

}  // namespace
}  // namespace gpumeter::metrics
