#include "domain/node_snapshot.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "domain/node_snapshot_json.h"

namespace gpumeter::domain {
namespace {

// A pass with one of everything the format carries: a whole GPU with per-process and power
// samples, health and DCGM activity; a MIG GPU with an instance; failed calls; processes with and
// without starts and environment; units of each kind of holder.
NodeSnapshot Full() {
  NodeSnapshot s;
  s.sequence = 42;
  s.ok = true;
  s.allocations_known = true;
  s.gpus.timestamp_us = 1'796'600'000'123'456ULL;
  s.gpus.xid_watch_ok = false;
  s.gpus.xid_watch_error = "nvmlEventSetWait: Unknown Error";
  s.gpus.errors.push_back({"nvmlDeviceGetCount", 999, "Unknown Error"});
  gpu::DeviceSample d;
  d.index = 0, d.uuid = "GPU-aaaa", d.name = "NVIDIA H100 80GB HBM3";
  d.memory = gpu::MemoryInfo{85'899'345'920ULL, 1'000, 7'000'000'000ULL, 85'000'000'000ULL};
  d.utilization_gpu_percent = 73, d.utilization_memory_percent = 12;
  d.power_watts = 312.5, d.energy_joules = 123456789.25;
  d.compute_mode = gpu::ComputeMode::kExclusiveProcess;
  d.processes.push_back({4242, gpu::ProcessType::kCompute, 1ULL << 33, std::nullopt, std::nullopt});
  d.processes.push_back({77, gpu::ProcessType::kMps, std::nullopt, std::nullopt, std::nullopt});
  d.process_util.push_back({4242, 1'796'600'000'000'000ULL, 88, 31});
  d.process_util_window_start_us = 1'796'599'999'000'000ULL;
  d.process_util_window_end_us = 1'796'600'000'100'000ULL;
  d.process_util_period_us = 166'667;
  d.process_util_uncovered_us = 5;
  d.process_util_buffer_span_us = 1'000'000;
  d.power_samples.push_back({1'796'600'000'000'000ULL, 301.25});
  d.sm_active_ratio = 0.5, d.dram_bw_ratio = 0.25, d.dcgm_gr_active = 0.75, d.dcgm_dram_active = 0;
  d.dcgm_window = gpu::ActivityWindow{0.4, 250, 30};
  d.dcgm_held = true;
  d.errors.push_back({"nvmlDeviceGetSamples", 3, "Not Supported"});
  d.health.clock_event_reasons = 0x21, d.health.ecc_corrected = 3, d.health.ecc_uncorrected = 0;
  d.health.remapped_rows = gpu::GpuHealth::RemappedRows{1, 2, true, false};
  d.health.retired_pages = gpu::GpuHealth::RetiredPages{4, 5, std::nullopt};
  d.health.xid_events.push_back({79, 3u, 1'796'600'000'000'001ULL});
  s.gpus.devices.push_back(d);
  gpu::DeviceSample m;
  m.index = 1, m.uuid = "GPU-bbbb", m.name = "NVIDIA A100-SXM4-40GB", m.lost = false;
  m.mig_enabled = true, m.process_utilization_supported = false, m.mig_total_slices = 7;
  gpu::MigInstanceSample mi;
  mi.uuid = "MIG-cccc", mi.name = "NVIDIA A100-SXM4-40GB MIG 3g.20gb";
  mi.gpu_instance_id = 2, mi.compute_instance_id = 0, mi.slices = 3;
  mi.memory = gpu::MemoryInfo{20'000'000'000ULL, 5, std::nullopt, 6};
  mi.processes.push_back({9, gpu::ProcessType::kCompute, 1024, 2u, 0u});
  mi.dcgm_gr_active = 1;
  m.mig_instances.push_back(mi);
  s.gpus.devices.push_back(m);
  s.gpus.devices.push_back({});  // a device that never identified itself
  s.gpus.devices.back().lost = true;

  ProcessFact a;
  a.pid = 9;
  a.owner = {OwnerKind::kContainer, "ml", "train-0", "trainer", "cgroup pod UID"};
  a.start = ProcessStart{123456, 1'796'500'000'000'000ULL};
  a.mps_thread_fraction = 0.25;
  a.comm = "python3";
  a.gpu_env = std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "all"}};
  ProcessFact b;
  b.pid = 77;
  b.owner = {OwnerKind::kSystem, "", "", "", "host process"};
  b.start = ProcessStart{5, std::nullopt};
  b.comm = "nvidia-cuda-mps-server";
  ProcessFact c;
  c.pid = 4242;  // exited before /proc was read: nothing known
  c.owner.how = "exited";
  ProcessFact d2;  // lived between two passes: a drain met it, /proc identified it then
  d2.pid = 5000;
  d2.owner = {OwnerKind::kContainer, "ci", "job-7", "step", "cgroup pod UID"};
  d2.start = ProcessStart{200000, 1'796'599'999'500'000ULL};
  d2.comm = "pytest";
  d2.listed = false;
  s.processes = {a, b, c, d2};
  s.units.push_back(
      {"GPU-aaaa",
       SharingMode::kTimeSlicing,
       {{Owner::Container("ml", "a-0", "c"), 0.25}, {Owner::Container("ml", "b-0", "c"), 0.5}}});
  s.units.push_back({"GPU-bbbb", SharingMode::kMig, {}});
  s.units.push_back({"MIG-cccc", SharingMode::kMig, {{Owner::Container("ml", "train-0", "t"), 1}}});
  return s;
}

void ExpectSameDevice(const gpu::DeviceSample& a, const gpu::DeviceSample& b) {
  // Re-serializing is the field-by-field comparison: every field is written.
  NodeSnapshot x, y;
  x.gpus.devices = {a};
  y.gpus.devices = {b};
  EXPECT_EQ(WriteNodeSnapshot(x), WriteNodeSnapshot(y));
}

TEST(NodeSnapshot, WritesAndReadsBackEveryField) {
  const NodeSnapshot s = Full();
  const std::string text = WriteNodeSnapshot(s);
  const auto back = ReadNodeSnapshot(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(WriteNodeSnapshot(*back), text);
  // And by value, where the types compare, so a field both sides drop would still be seen.
  EXPECT_EQ(back->sequence, 42u);
  EXPECT_TRUE(back->ok);
  EXPECT_TRUE(back->allocations_known);
  ASSERT_EQ(back->gpus.devices.size(), 3u);
  const auto& d = back->gpus.devices[0];
  EXPECT_EQ(d.memory->reserved_bytes, 7'000'000'000u);
  EXPECT_EQ(d.power_watts, 312.5);
  EXPECT_EQ(d.energy_joules, 123456789.25);
  EXPECT_EQ(d.compute_mode, gpu::ComputeMode::kExclusiveProcess);
  EXPECT_EQ(d.processes[1].type, gpu::ProcessType::kMps);
  EXPECT_FALSE(d.processes[1].used_memory_bytes) << "unknown memory stays unknown, not 0";
  EXPECT_EQ(d.dcgm_dram_active, 0.0) << "a measured 0 stays a 0";
  EXPECT_EQ(d.health.remapped_rows->uncorrectable, 2u);
  EXPECT_FALSE(d.health.retired_pages->pending);
  EXPECT_EQ(d.health.xid_events[0].gpu_instance_id, 3u);
  const auto& m = back->gpus.devices[1];
  EXPECT_EQ(m.mig_instances[0].processes[0].gpu_instance_id, 2u);
  EXPECT_FALSE(m.mig_instances[0].memory->reserved_bytes);
  EXPECT_TRUE(back->gpus.devices[2].lost);
  ExpectSameDevice(s.gpus.devices[0], d);
  EXPECT_EQ(back->gpus.xid_watch_ok, false);
  ASSERT_EQ(back->processes.size(), 4u);
  EXPECT_TRUE(back->processes[0].listed);
  EXPECT_FALSE(back->processes[3].listed) << "met between passes only";
  EXPECT_EQ(back->processes[3].owner.AsOwner(), Owner::Container("ci", "job-7", "step"));
  EXPECT_EQ(back->processes[0].start, (ProcessStart{123456, 1'796'500'000'000'000ULL}));
  EXPECT_EQ(back->processes[0].owner.AsOwner(), Owner::Container("ml", "train-0", "trainer"));
  EXPECT_EQ(back->processes[0].owner.how, "cgroup pod UID");
  EXPECT_EQ(back->processes[0].gpu_env->at("NVIDIA_VISIBLE_DEVICES"), "all");
  EXPECT_EQ(back->processes[1].owner.kind, OwnerKind::kSystem);
  EXPECT_FALSE(back->processes[1].gpu_env) << "unread environment is not an empty one";
  EXPECT_FALSE(back->processes[2].start);
  EXPECT_EQ(back->processes[2].owner.kind, OwnerKind::kUnattributed);
  ASSERT_EQ(back->units.size(), 3u);
  EXPECT_EQ(back->units[0].holders, s.units[0].holders);
  EXPECT_EQ(back->ModeOf("GPU-aaaa"), SharingMode::kTimeSlicing);
  EXPECT_EQ(back->ModeOf("GPU-none"), SharingMode::kExclusive);
  EXPECT_EQ(back->Process(77)->comm, "nvidia-cuda-mps-server");
  EXPECT_EQ(back->Process(78), nullptr);
}

TEST(NodeSnapshot, AFailedPassRoundTrips) {
  NodeSnapshot s;
  s.sequence = 7;
  s.error = "nvmlDeviceGetCount: deadline exceeded";
  const auto back = ReadNodeSnapshot(WriteNodeSnapshot(s));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->ok);
  EXPECT_EQ(back->error, s.error);
  EXPECT_TRUE(back->gpus.devices.empty());
}

TEST(NodeSnapshot, InvalidUtf8InAProcessNameIsWrittenReplaced) {
  NodeSnapshot s;
  ProcessFact p;
  p.pid = 1;
  p.comm =
      "a\xff\xfe"
      "b";
  s.processes.push_back(p);
  const std::string text = WriteNodeSnapshot(s);  // must not throw
  const auto back = ReadNodeSnapshot(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->processes[0].comm,
            "a\xef\xbf\xbd\xef\xbf\xbd"
            "b");
}

// The error of reading `s` after `edit` changed its JSON.
template <typename F>
std::string ErrorAfter(F edit) {
  auto j = nlohmann::json::parse(WriteNodeSnapshot(Full()));
  edit(j);
  const auto r = ReadNodeSnapshot(j.dump());
  return r ? std::string("accepted") : r.error().message;
}

TEST(NodeSnapshot, RefusesWhatItDoesNotKnowNamingThePath) {
  EXPECT_EQ(ErrorAfter([](auto& j) { j["gpus"]["devices"][0]["memory"]["totalBytes"] = -1; }),
            "snapshot: gpus.devices[0].memory.totalBytes: not an unsigned integer");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["gpus"]["devices"][0]["smActiveRatio"] = 1.5; }),
            "snapshot: gpus.devices[0].smActiveRatio: 1.5 is outside [0.0, 1.0]");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["gpus"]["devices"][0]["utilizationGpuPercent"] = 101; }),
            "snapshot: gpus.devices[0].utilizationGpuPercent: 101 is over 100");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["gpus"]["devices"][0]["index"] = 1ULL << 32; }),
            "snapshot: gpus.devices[0].index: 4294967296 is over 4294967295");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["gpus"]["devices"][1]["fanSpeed"] = 3; }),
            "snapshot: gpus.devices[1].fanSpeed: unknown key");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["processes"][0].erase("comm"); }),
            "snapshot: processes[0].comm: missing");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["processes"][1]["pid"] = 9; }),
            "snapshot: processes[1].pid: PIDs must be sorted and unique");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["processes"][0]["owner"]["kind"] = "idle"; }),
            "snapshot: processes[0].owner.kind: a process is never idle");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["processes"][0]["mpsThreadFraction"] = 0; }),
            "snapshot: processes[0].mpsThreadFraction: must be above 0");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["units"][0]["mode"] = "Exclusive"; }),
            "snapshot: units[0].mode: not a sharing mode");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["units"][2]["uuid"] = "GPU-0"; }),
            "snapshot: units[2].uuid: units must be sorted by UUID and unique");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["units"][0]["holders"][0]["share"] = 2; }),
            "snapshot: units[0].holders[0].share: 2 is outside [0.0, 1.0]");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["version"] = 3; }),
            "snapshot: version: 3 (this build reads 1 to 2)");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["processes"][0]["listed"] = true; }),
            "snapshot: processes[0].listed: written only as false (absent means listed)");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["version"] = 1, j["processes"][2]["listed"] = false; }),
            "snapshot: processes[2].listed: not in a version 1 snapshot");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["format"] = "gpumeter.trace"; }),
            "snapshot: format: not gpumeter.node-snapshot");
  EXPECT_EQ(ErrorAfter([](auto& j) { j["gpus"]["devices"][0]["processes"][0]["type"] = "mig"; }),
            "snapshot: gpus.devices[0].processes[0].type: not compute or mps");
}

TEST(NodeSnapshot, RefusesDuplicateKeysDeepNestingAndNonJson) {
  std::string text = WriteNodeSnapshot(Full());
  const std::string dup = "{\"sequence\":1," + text.substr(1);
  EXPECT_EQ(ReadNodeSnapshot(dup).error().message, "snapshot: duplicate key 'sequence'");
  EXPECT_EQ(ReadNodeSnapshot(std::string(100, '[') + std::string(100, ']')).error().message,
            "snapshot: nested deeper than 12 levels");
  EXPECT_EQ(ReadNodeSnapshot(text.substr(0, text.size() / 2))
                .error()
                .message.rfind("snapshot: not valid JSON", 0),
            0u);
  EXPECT_EQ(ReadNodeSnapshot("[]").error().message, "snapshot: not an object");
}

}  // namespace
}  // namespace gpumeter::domain
