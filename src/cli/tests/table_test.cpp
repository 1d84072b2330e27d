#include "cli/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpumeter::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Table, ShowsOwnersAndUnknowns) {
  gpu::DeviceSample d;
  d.index = 3;
  d.uuid = "GPU-12345678-aaaa";
  d.name = "NVIDIA H100 80GB HBM3";
  d.memory = gpu::MemoryInfo{80ull << 30, 20ull << 30, 1ull << 29, 0};
  d.utilization_gpu_percent = 42;
  d.errors.push_back({"nvmlDeviceGetPowerUsage", 999, "Unknown Error"});
  d.processes = {{7, gpu::ProcessType::kMps, 10ull << 30, {}, {}}, {8, gpu::ProcessType::kCompute, std::nullopt, {}, {}}};
  d.process_util = {{7, 5, 33, 0}};
  auto r = std::make_shared<sampler::SampleResult>();
  r->ok = true;
  r->snapshot.devices.push_back(d);
  sampler::SamplerHealth h;
  h.latest = h.last_good = r;
  metrics::NodeContext ctx;
  ctx.owner = [](uint32_t pid) -> std::optional<metrics::ProcessOwner> {
    if (pid == 7) return metrics::ProcessOwner{"llm", "chat-0", "vllm"};
    return std::nullopt;
  };
  ctx.sharing_mode = [](const std::string&) { return std::string("mps"); };
  const auto text = RenderTable(h, ctx);
  EXPECT_THAT(text, HasSubstr("NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(text, HasSubstr("mps"));
  EXPECT_THAT(text, HasSubstr("42%"));
  EXPECT_THAT(text, HasSubstr("20.0 / 80.0"));
  EXPECT_THAT(text, HasSubstr("! nvmlDeviceGetPowerUsage: Unknown Error (code 999)"));
  EXPECT_THAT(text, HasSubstr("llm/chat-0/vllm"));
  EXPECT_THAT(text, HasSubstr("33%"));
  EXPECT_THAT(text, HasSubstr("unattributed"));
  EXPECT_THAT(text, HasSubstr("? GiB")) << "unknown memory prints as ?, never 0";
  EXPECT_THAT(text, Not(HasSubstr(" 0 W")));
}

TEST(Table, StalledAndWaiting) {
  sampler::SamplerHealth h;
  h.stalled_call = "nvmlDeviceGetUUID";
  h.stalled_seconds = 3.5;
  const auto text = RenderTable(h, {});
  EXPECT_THAT(text, HasSubstr("nvmlDeviceGetUUID has not returned for 3.5 s"));
  EXPECT_THAT(text, HasSubstr("waiting for the first sample"));
}

}  // namespace
}  // namespace gpumeter::cli
