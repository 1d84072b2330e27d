#include "sinks/sim/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpumeter::app {
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
  d.processes = {{7, gpu::ProcessType::kMps, 10ull << 30, {}, {}},
                 {8, gpu::ProcessType::kCompute, std::nullopt, {}, {}}};
  d.process_util = {{7, 5, 33, 0}};
  auto r = std::make_shared<gpu::SampleResult>();
  r->ok = true;
  r->snapshot.devices.push_back(d);
  gpu::SamplerHealth h;
  h.latest = h.last_good = r;
  node::NodeState state;
  state.latest = state.last_good = r;
  state.owners[7] = {domain::OwnerKind::kContainer, "llm", "chat-0", "vllm", "cgroup"};
  state.owners[8] = {domain::OwnerKind::kUnattributed, "", "", "",
                     "process exited before /proc was read"};
  node::UnitInfo u;
  u.uuid = u.gpu_uuid = d.uuid;
  u.gpu_index = 3;
  u.mode = domain::SharingMode::kMps;
  u.replicas = 4;
  u.evidence = "device-plugin config sharing.mps";
  state.units = {u};
  state.intervals = 2;
  state.unit_totals[d.uuid] = {10, 10 * 80.0 * (1ull << 30),   0, 10, 2, 0, 0, 0, std::nullopt,
                               {}, domain::MemorySignal::kNone};
  auto& t =
      state.totals[{d.uuid, domain::Owner{domain::OwnerKind::kContainer, "llm", "chat-0", "vllm"}}];
  t.compute_seconds = 2.5, t.memory_byte_seconds = 10 * 10.0 * (1ull << 30),
  t.requested_share_seconds = 2.5;
  state.totals[{d.uuid, domain::Owner{domain::OwnerKind::kIdle, "", "", ""}}].compute_seconds = 7.5;
  state.sources.push_back({"kubelet", true, false, std::nullopt, 1, 1, 0, "socket missing", ""});
  const auto text = RenderTable(h, state);
  EXPECT_THAT(text, HasSubstr("NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(text, HasSubstr("mps"));
  EXPECT_THAT(text, HasSubstr("42%"));
  EXPECT_THAT(text, HasSubstr("20.0 / 80.0"));
  EXPECT_THAT(text, HasSubstr("! nvmlDeviceGetPowerUsage: Unknown Error (code 999)"));
  EXPECT_THAT(text, HasSubstr("llm/chat-0/vllm"));
  EXPECT_THAT(text, HasSubstr("33%"));
  EXPECT_THAT(text, HasSubstr("unattributed: process exited before /proc was read"));
  EXPECT_THAT(text,
              HasSubstr("GPU 3 GPU-12345678-aaaa: mps x4 [device-plugin config sharing.mps]"));
  EXPECT_THAT(text, ::testing::ContainsRegex("llm/chat-0/vllm +25% +25.0% +10.00 +\\?"))
      << "held 25 %, used 25 %, 10 GiB; energy unknown for the whole run prints ?";
  EXPECT_THAT(text, ::testing::ContainsRegex("idle +- +75.0%"));
  EXPECT_THAT(text, HasSubstr("!! source kubelet is down: socket missing"));
  EXPECT_THAT(text, HasSubstr("? GiB")) << "unknown memory prints as ?, never 0";
  EXPECT_THAT(text, Not(HasSubstr(" 0 W")));
}

TEST(Table, StalledAndWaiting) {
  gpu::SamplerHealth h;
  h.stalled_call = "nvmlDeviceGetUUID";
  h.stalled_seconds = 3.5;
  const auto text = RenderTable(h, node::NodeState{});
  EXPECT_THAT(text, HasSubstr("nvmlDeviceGetUUID has not returned for 3.5 s"));
  EXPECT_THAT(text, HasSubstr("waiting for the first sample"));
}

}  // namespace
}  // namespace gpumeter::app
