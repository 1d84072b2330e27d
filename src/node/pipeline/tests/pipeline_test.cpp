// The node pipeline over its real sources: a fake kubelet on a unix socket, a PodList file and a
// /proc tree in a temp dir, fed hand-made sampling passes. Checks owners, holders and modes,
// totals that add up, and what each source's failure does.
#include "node/pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "sim/fake_kubelet/fake_kubelet.h"
#include "support/temp_dir.h"

namespace gpumeter::node {
namespace {

namespace fs = std::filesystem;
using domain::OwnerKind;
using domain::SharingMode;

constexpr const char* kGpu0 =
    "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763";  // time-sliced, 2 replicas
constexpr const char* kGpu1 =
    "GPU-6a8f3c2e-1111-2222-3333-444455556666";  // exclusive, nobody holds it
constexpr const char* kUidA = "4c9f1974-5c46-44c2-b42f-3bbf0e98eef9";
constexpr const char* kUidB = "05e102bf-8744-4942-a241-9b6f07983a53";
const std::string kCidA(64, 'a'), kCidB(64, 'b');
constexpr uint64_t kGiB = 1ull << 30;

std::string Underscored(std::string s) {
  for (auto& c : s)
    if (c == '-') c = '_';
  return s;
}

std::string PodJson(const std::string& ns, const std::string& name, const std::string& uid,
                    const std::string& container, const std::string& cid,
                    const std::string& phase = "Running") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns + R"(","uid":")" + uid +
         R"(","labels":{"team":"ml"}},"spec":{"nodeName":"node-a","containers":[{"name":")" +
         container + R"("}]},"status":{"phase":")" + phase +
         R"(","qosClass":"BestEffort","containerStatuses":[{"name":")" + container +
         R"(","containerID":"containerd://)" + cid + R"("}]}})";
}

class Pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    proc_ = dir_.path() / "proc";
    pods_file_ = dir_.path() / "pods.json";
    socket_ = (dir_.path() / "kubelet.sock").string();
    WritePods(true);
    WriteProc(101, 500, kUidA, kCidA, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30");
    WriteProc(102, 600, kUidB, kCidB, "");
    WriteHostProc(103, 700);
    kubelet_.SetPods(
        {{"llm",
          "chat-0",
          {{"", "", "vllm", {{"nvidia.com/gpu", {std::string(kGpu0) + "::0"}}}, {}}}},
         {"llm",
          "chat-1",
          {{"", "", "vllm", {{"nvidia.com/gpu", {std::string(kGpu0) + "::1"}}}, {}}}}});
    ASSERT_TRUE(kubelet_.Start(socket_));
    kubelet::PodResourcesOptions ko;
    ko.socket_path = socket_;
    ko.deadline = std::chrono::milliseconds(2000);
    kubelet_source_ = std::make_unique<kubelet::PodResourcesSource>(
        std::make_unique<kubelet::PodResourcesClient>(ko),
        kubelet::BackoffOptions{std::chrono::milliseconds(1), std::chrono::milliseconds(1)});
    pods_source_ = std::make_unique<kube_api::PodsFileSource>(pods_file_);
    PipelineOptions po;
    po.node = "node-a";
    po.proc_root = proc_;
    po.evidence.node_labels["nvidia.com/gpu.replicas"] = "2";
    pipeline_ = std::make_unique<NodePipeline>(
        PipelineSources{kubelet_source_.get(), pods_source_.get(), nullptr}, po);
  }

  void WritePods(bool with_b, const std::string& phase_b = "Running") {
    std::string items = PodJson("llm", "chat-0", kUidA, "vllm", kCidA);
    if (with_b) items += "," + PodJson("llm", "chat-1", kUidB, "vllm", kCidB, phase_b);
    std::ofstream(pods_file_)
        << R"({"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[)" + items + "]}";
  }
  void WriteProc(uint32_t pid, uint64_t start, const std::string& uid, const std::string& cid,
                 const std::string& env) {
    const auto d = proc_ / std::to_string(pid);
    fs::create_directories(d);
    std::ofstream(d / "stat") << pid << " (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                              << start << " 0 0\n";
    std::ofstream(d / "cgroup")
        << "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
        << Underscored(uid) << ".slice/cri-containerd-" << cid << ".scope\n";
    std::ofstream(d / "environ", std::ios::binary) << "HOME=/root" << '\0' << env << '\0';
  }
  void WriteHostProc(uint32_t pid, uint64_t start) {
    const auto d = proc_ / std::to_string(pid);
    fs::create_directories(d);
    std::ofstream(d / "stat") << pid << " (Xorg) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << start
                              << " 0 0\n";
    std::ofstream(d / "cgroup") << "0::/system.slice/display-manager.service\n";
  }

  // GPU 0: chat-0 (pid 101, 4 GiB) and chat-1 (pid 102, 2 GiB) time-slice it; GPU 1: a host
  // process. Energy counters advance by 200 J and 80 J per pass.
  std::shared_ptr<const gpu::SampleResult> Pass(int k,
                                                std::vector<uint32_t> pids_on_gpu0 = {101, 102}) {
    auto r = std::make_shared<gpu::SampleResult>();
    r->sequence = static_cast<uint64_t>(k);
    r->taken = t0_ + std::chrono::seconds(k);
    r->ok = true;
    gpu::DeviceSample g0;
    g0.index = 0, g0.uuid = kGpu0, g0.name = "NVIDIA H100 80GB HBM3";
    g0.memory = gpu::MemoryInfo{80 * kGiB, 6 * kGiB, std::nullopt, 74 * kGiB};
    g0.utilization_gpu_percent = 60;
    g0.energy_joules = 1000.0 + 200.0 * k;
    g0.power_watts = 200;
    for (const auto pid : pids_on_gpu0)
      g0.processes.push_back({pid, gpu::ProcessType::kCompute, (pid == 101 ? 4 : 2) * kGiB,
                              std::nullopt, std::nullopt});
    g0.process_utilization_supported = false;
    gpu::DeviceSample g1;
    g1.index = 1, g1.uuid = kGpu1, g1.name = "NVIDIA H100 80GB HBM3";
    g1.memory = gpu::MemoryInfo{80 * kGiB, kGiB, std::nullopt, 79 * kGiB};
    g1.utilization_gpu_percent = 0;
    g1.energy_joules = 500.0 + 80.0 * k;
    g1.processes.push_back({103, gpu::ProcessType::kCompute, kGiB, std::nullopt, std::nullopt});
    g1.process_utilization_supported = false;
    r->snapshot.devices = {g0, g1};
    return r;
  }

  testing::TempDir dir_{"gpumeter-pipeline"};
  fs::path proc_, pods_file_;
  std::string socket_;
  kubelet::FakeKubelet kubelet_;
  std::unique_ptr<kubelet::PodResourcesSource> kubelet_source_;
  std::unique_ptr<kube_api::PodsFileSource> pods_source_;
  std::unique_ptr<NodePipeline> pipeline_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

const OwnerTotals& TotalsOf(const NodeState& s, const std::string& unit, const std::string& pod) {
  for (const auto& [k, v] : s.totals)
    if (k.first == unit && k.second.pod == pod) return v;
  static const OwnerTotals none;
  ADD_FAILURE() << "no totals for " << pod << " on " << unit;
  return none;
}

TEST_F(Pipeline, OwnersHoldersModesAndTotalsFromTheRealSources) {
  for (int k = 0; k <= 3; ++k) pipeline_->OnPass(Pass(k));
  const auto s = pipeline_->Latest();
  EXPECT_EQ(s->passes, 4u);
  EXPECT_EQ(s->intervals, 3u);

  ASSERT_EQ(s->owners.size(), 3u);
  EXPECT_EQ(s->owners.at(101).kind, domain::OwnerKind::kContainer);
  EXPECT_EQ(s->owners.at(101).pod, "chat-0");
  EXPECT_EQ(s->owners.at(101).how, "cgroup pod UID + container ID");
  EXPECT_EQ(s->owners.at(102).pod, "chat-1");
  EXPECT_EQ(s->owners.at(103).kind, domain::OwnerKind::kSystem);

  const auto* u0 = s->FindUnit(kGpu0);
  ASSERT_NE(u0, nullptr);
  EXPECT_EQ(u0->mode, SharingMode::kTimeSlicing);
  EXPECT_EQ(u0->replicas, 2u);
  EXPECT_NE(u0->evidence.find("nvidia.com/gpu.replicas"), std::string::npos) << u0->evidence;
  ASSERT_EQ(u0->holders.size(), 2u);
  EXPECT_DOUBLE_EQ(u0->holders[0].share, 0.5);
  const auto* u1 = s->FindUnit(kGpu1);
  ASSERT_NE(u1, nullptr);
  EXPECT_EQ(u1->evidence, "no allocation");

  // 3 intervals of 1 s. Memory is exact; each holder held half the GPU for 3 s.
  const auto& a = TotalsOf(*s, kGpu0, "chat-0");
  const auto& b = TotalsOf(*s, kGpu0, "chat-1");
  EXPECT_DOUBLE_EQ(a.memory_byte_seconds, 3.0 * 4 * kGiB);
  EXPECT_DOUBLE_EQ(b.memory_byte_seconds, 3.0 * 2 * kGiB);
  EXPECT_DOUBLE_EQ(a.last_memory_bytes, 4.0 * kGiB);
  EXPECT_DOUBLE_EQ(a.requested_share_seconds, 1.5);
  EXPECT_DOUBLE_EQ(b.requested_share_seconds, 1.5);

  // Conservation: the owners of each unit add up to its capacity and its energy counter.
  for (const auto& [unit, ut] : s->unit_totals) {
    double mem = 0, compute = 0, energy = 0;
    for (const auto& [k, v] : s->totals)
      if (k.first == unit)
        mem += v.memory_byte_seconds, compute += v.compute_seconds, energy += v.energy_joules;
    EXPECT_DOUBLE_EQ(ut.seconds, 3.0) << unit;
    EXPECT_NEAR(mem / ut.memory_capacity_byte_seconds, 1.0, 1e-9) << unit;
    EXPECT_NEAR(compute / ut.seconds, 1.0, 1e-9) << unit;
    EXPECT_NEAR(energy, ut.energy_joules, 1e-9 * ut.energy_joules) << unit;
  }
  EXPECT_DOUBLE_EQ(s->unit_totals.at(kGpu0).energy_joules, 600.0);
  EXPECT_DOUBLE_EQ(s->unit_totals.at(kGpu1).energy_joules, 240.0);
  // The host process's memory on GPU 1 is system's.
  for (const auto& [k, v] : s->totals) {
    if (k.first == kGpu1 && k.second.kind == OwnerKind::kSystem) {
      EXPECT_DOUBLE_EQ(v.memory_byte_seconds, 3.0 * kGiB);
    }
  }

  ASSERT_EQ(s->sources.size(), 3u);
  for (const auto& src : s->sources) EXPECT_TRUE(src.up) << src.name << ": " << src.last_error;
}

TEST_F(Pipeline, MpsThreadPercentageComesFromTheEnvironment) {
  // Only a number in (0, 100] counts; the reader never keeps other variables.
  pipeline_->OnPass(Pass(0));
  auto id = k8s::ProcReader(proc_).Identify(101);
  ASSERT_TRUE(id && id->gpu_env);
  EXPECT_EQ(id->gpu_env->size(), 1u);
  EXPECT_EQ(id->gpu_env->at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "30");
}

TEST_F(Pipeline, KubeletDownKeepsTheLastAllocationsAndSaysSo) {
  pipeline_->OnPass(Pass(0));
  pipeline_->OnPass(Pass(1));
  kubelet_.Stop();
  pipeline_->OnPass(Pass(2));
  auto s = pipeline_->Latest();
  EXPECT_FALSE(s->sources[0].up);
  EXPECT_FALSE(s->sources[0].last_error.empty());
  ASSERT_NE(s->FindUnit(kGpu0), nullptr);
  EXPECT_EQ(s->FindUnit(kGpu0)->holders.size(), 2u) << "last good allocations kept";
  EXPECT_DOUBLE_EQ(TotalsOf(*s, kGpu0, "chat-0").requested_share_seconds, 1.0);
  // The kubelet comes back (a restart): the source recovers once gRPC reconnects (0.2-5 s backoff).
  ASSERT_TRUE(kubelet_.Start(socket_));
  for (int k = 3; k < 200 && !pipeline_->Latest()->sources[0].up; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pipeline_->OnPass(Pass(k));
  }
  EXPECT_TRUE(pipeline_->Latest()->sources[0].up);
}

TEST_F(Pipeline, WithoutAKubeletEverythingIsStillAccountedAndNothingIsHeld) {
  PipelineOptions po;
  po.proc_root = proc_;
  NodePipeline bare({nullptr, pods_source_.get(), nullptr}, po);
  bare.OnPass(Pass(0));
  bare.OnPass(Pass(1));
  const auto s = bare.Latest();
  EXPECT_FALSE(s->sources[0].configured);
  EXPECT_TRUE(s->FindUnit(kGpu0)->holders.empty());
  EXPECT_DOUBLE_EQ(TotalsOf(*s, kGpu0, "chat-0").memory_byte_seconds, 4.0 * kGiB)
      << "owners still come from /proc";
}

TEST_F(Pipeline, ABadPodsFileKeepsTheLastGoodPods) {
  pipeline_->OnPass(Pass(0));
  std::ofstream(pods_file_) << R"({"kind":"PodList","items":[{"metadata":)";  // truncated write
  pipeline_->OnPass(Pass(1));
  const auto s = pipeline_->Latest();
  EXPECT_FALSE(s->sources[1].up);
  EXPECT_NE(s->sources[1].last_error.find("JSON"), std::string::npos) << s->sources[1].last_error;
  EXPECT_EQ(s->owners.at(102).pod, "chat-1");
}

TEST_F(Pipeline, AFinishedPodTheKubeletStillListsHoldsNothing) {
  pipeline_->OnPass(Pass(0));
  ASSERT_EQ(pipeline_->Latest()->FindUnit(kGpu0)->holders.size(), 2u);
  WritePods(true, "Succeeded");
  fs::last_write_time(pods_file_, fs::last_write_time(pods_file_) + std::chrono::seconds(5));
  pipeline_->OnPass(Pass(1, {101}));
  const auto* u = pipeline_->Latest()->FindUnit(kGpu0);
  ASSERT_EQ(u->holders.size(), 1u);
  EXPECT_EQ(u->holders[0].pod, "chat-0");
  EXPECT_DOUBLE_EQ(TotalsOf(*pipeline_->Latest(), kGpu0, "chat-1").requested_share_seconds, 0.0);
}

TEST_F(Pipeline, ExitsDeletedPodsAndReusedPids) {
  pipeline_->OnPass(Pass(0));
  // chat-1's pod is deleted from the API server while its process still runs: it keeps its owner.
  WritePods(false);
  fs::last_write_time(pods_file_, fs::last_write_time(pods_file_) + std::chrono::seconds(5));
  pipeline_->OnPass(Pass(1));
  EXPECT_EQ(pipeline_->Latest()->owners.at(102).pod, "chat-1");
  // PID 102 exits and is reused by a host process: resolved afresh, not chat-1's.
  fs::remove_all(proc_ / "102");
  WriteHostProc(102, 900);
  pipeline_->OnPass(Pass(2));
  EXPECT_EQ(pipeline_->Latest()->owners.at(102).kind, domain::OwnerKind::kSystem);
  // A process NVML lists that is gone from /proc by the time it is read: unattributed, with why.
  fs::remove_all(proc_ / "101");
  pipeline_->OnPass(Pass(3));
  const auto s = pipeline_->Latest();
  EXPECT_EQ(s->owners.at(101).kind, domain::OwnerKind::kUnattributed);
  EXPECT_NE(s->owners.at(101).how.find("exited"), std::string::npos) << s->owners.at(101).how;
  EXPECT_TRUE(s->sources[2].up) << "an exit is not a /proc failure";
}

TEST_F(Pipeline, AFailedPassIsAnIntervalOfUnattributedCapacity) {
  pipeline_->OnPass(Pass(0));
  auto failed = std::make_shared<gpu::SampleResult>();
  failed->sequence = 1;
  failed->taken = t0_ + std::chrono::seconds(1);
  failed->error = "nvmlDeviceGetCount: Unknown Error";
  pipeline_->OnPass(failed);
  const auto s = pipeline_->Latest();
  EXPECT_EQ(s->intervals, 1u);
  ASSERT_NE(s->last_good, nullptr);
  EXPECT_EQ(s->units.size(), 2u) << "units from the last good sample";
  double unattributed = 0;
  for (const auto& [k, v] : s->totals)
    if (k.first == kGpu0 && k.second.kind == OwnerKind::kUnattributed)
      unattributed += v.compute_seconds;
  EXPECT_DOUBLE_EQ(unattributed, 1.0);
  EXPECT_FALSE(s->unit_totals.at(kGpu0).energy_unknown_seconds == 0);
}

TEST_F(Pipeline, AFailedPassKeepsWhatIsKnownAboutRunningProcesses) {
  pipeline_->OnPass(Pass(0));
  // chat-1's pod is deleted while its process runs; then NVML fails a whole pass.
  WritePods(false);
  fs::last_write_time(pods_file_, fs::last_write_time(pods_file_) + std::chrono::seconds(5));
  auto failed = std::make_shared<gpu::SampleResult>();
  failed->sequence = 2;
  failed->taken = t0_ + std::chrono::seconds(1);
  failed->error = "nvmlDeviceGetCount: Unknown Error";
  pipeline_->OnPass(failed);
  pipeline_->OnPass(Pass(2));
  EXPECT_EQ(pipeline_->Latest()->owners.at(102).pod, "chat-1")
      << "the owner cache outlives a failed pass";
}

TEST_F(Pipeline, TimeScaleStretchesIntervals) {
  PipelineOptions po;
  po.proc_root = proc_;
  po.time_scale = 10;
  NodePipeline fast({nullptr, nullptr, nullptr}, po);
  fast.OnPass(Pass(0));
  fast.OnPass(Pass(1));
  EXPECT_DOUBLE_EQ(fast.Latest()->unit_totals.at(kGpu0).seconds, 10.0);
  EXPECT_EQ(fast.Latest()->owners.at(101).kind, domain::OwnerKind::kUnattributed)
      << "no pods: no names";
}

}  // namespace
}  // namespace gpumeter::node

namespace gpumeter::node {
namespace {

// Slices given by the test (the API-server source is tested on its own).
class FixedSlices final : public kube_api::SliceSource {
 public:
  explicit FixedSlices(const std::string& list) {
    auto store = std::make_shared<k8s::ResourceSliceStore>();
    ok_ = store->ApplyList(list).has_value();
    store_ = std::move(store);
  }
  std::shared_ptr<const k8s::ResourceSliceStore> Current() const override { return store_; }
  domain::SourceStatus Status() const override {
    return {"resourceslices", true, ok_, std::nullopt, 1, 0, std::nullopt, "", "test"};
  }

 private:
  bool ok_ = false;
  std::shared_ptr<const k8s::ResourceSliceStore> store_;
};

TEST_F(Pipeline, DraClaimDevicesArePlacedThroughResourceSlices) {
  // chat-0 and chat-1 share one DRA claim whose device is GPU 0.
  kubelet_.SetPods(
      {{"llm",
        "chat-0",
        {{"",
          "",
          "vllm",
          {},
          {{"shared-gpu", "llm", "gpu.nvidia.com", "node-a", "gpu-0", std::nullopt}}}}},
       {"llm",
        "chat-1",
        {{"",
          "",
          "vllm",
          {},
          {{"shared-gpu", "llm", "gpu.nvidia.com", "node-a", "gpu-0", std::nullopt}}}}}});
  FixedSlices slices(
      std::string(
          R"({"items":[{"spec":{"driver":"gpu.nvidia.com","pool":{"name":"node-a","generation":1},)") +
      R"("devices":[{"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":")" +
      kGpu0 + R"("}}}]}}]})");
  PipelineOptions po;
  po.proc_root = proc_;
  NodePipeline dra({kubelet_source_.get(), pods_source_.get(), &slices}, po);
  dra.OnPass(Pass(0));
  dra.OnPass(Pass(1));
  const auto s = dra.Latest();
  const auto* u = s->FindUnit(kGpu0);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->mode, SharingMode::kTimeSlicing);
  EXPECT_EQ(u->evidence, "DRA claim device shared by 2 containers");
  ASSERT_EQ(u->holders.size(), 2u);
  EXPECT_DOUBLE_EQ(TotalsOf(*s, kGpu0, "chat-1").requested_share_seconds, 0.5);
  EXPECT_EQ(s->sources.size(), 4u) << "kubelet, pods, resourceslices, proc";
  EXPECT_EQ(s->sources[2].name, "resourceslices");
}

// Cost per interval (gpumeter_cost_total): the unit's price × its GPU share × time, split by the
// policy over each interval; the owners add up to the unit; a model without a price has no cost.
class PipelineCost : public Pipeline {
 protected:
  std::shared_ptr<const NodeState> Run(const std::string& pricing_yaml, cost::Policy policy) {
    pricing_ = *cost::Pricing::Parse(pricing_yaml, "p.yaml");
    PipelineOptions po;
    po.node = "node-a";
    po.proc_root = proc_;
    po.evidence.node_labels["nvidia.com/gpu.replicas"] = "2";
    po.pricing = &pricing_;
    po.cost_policy = policy;
    NodePipeline p(PipelineSources{kubelet_source_.get(), pods_source_.get(), nullptr}, po);
    for (int k = 0; k <= 3; ++k) p.OnPass(Pass(k));
    return p.Latest();
  }
  double CostOf(const NodeState& s, const std::string& unit, OwnerKind kind,
                const std::string& pod = {}) {
    for (const auto& [k, v] : s.totals)
      if (k.first == unit && k.second.kind == kind && k.second.pod == pod) {
        EXPECT_TRUE(v.priced) << pod;
        return v.cost;
      }
    ADD_FAILURE() << "no totals for " << pod << " on " << unit;
    return -1;
  }
  cost::Pricing pricing_ = cost::Pricing::Defaults();
};

TEST_F(PipelineCost, EachIntervalIsPricedAndSplitByThePolicy) {
  cost::Policy separate{cost::Basis::kMemory, 0.5, cost::IdleRule::kSeparate};
  const auto s = Run("currency: EUR\ngpu_models: {H100: 3.6}\ndefaults: false\n", separate);
  EXPECT_EQ(s->currency, "EUR");
  EXPECT_EQ(s->cost_policy, "memory/idle=separate");
  // 3 s of a whole GPU at 3.6 an hour: 0.003 each.
  for (const auto* gpu : {kGpu0, kGpu1}) {
    const auto& ut = s->unit_totals.at(gpu);
    ASSERT_TRUE(ut.price.has_value());
    EXPECT_DOUBLE_EQ(ut.price->per_gpu_hour, 3.6);
    EXPECT_NEAR(ut.cost, 0.003, 1e-15);
    EXPECT_EQ(ut.unpriced_seconds, 0);
    double sum = 0;
    for (const auto& [k, v] : s->totals)
      if (k.first == gpu) sum += v.cost;
    EXPECT_NEAR(sum, ut.cost, 1e-12 * ut.cost) << gpu;
  }
  // Memory basis, idle kept apart: chat-0 held 4 of 80 GiB, chat-1 2; the rest is idle's,
  // and the host process on GPU 1 (system) pays nothing of its own: its share is idle's too.
  EXPECT_NEAR(CostOf(*s, kGpu0, OwnerKind::kContainer, "chat-0"), 0.003 * 4 / 80, 1e-15);
  EXPECT_NEAR(CostOf(*s, kGpu0, OwnerKind::kContainer, "chat-1"), 0.003 * 2 / 80, 1e-15);
  EXPECT_NEAR(CostOf(*s, kGpu0, OwnerKind::kIdle), 0.003 * 74 / 80, 1e-15);
  EXPECT_NEAR(CostOf(*s, kGpu1, OwnerKind::kIdle), 0.003, 1e-15);
  EXPECT_DOUBLE_EQ(CostOf(*s, kGpu1, OwnerKind::kSystem), 0);
}

TEST_F(PipelineCost, IdleIsSharedByUseOrHoldingUnderTheOtherRules) {
  const auto share = Run("gpu_models: {H100: 3.6}\ndefaults: false\n",
                         {cost::Basis::kMemory, 0.5, cost::IdleRule::kShare});
  EXPECT_NEAR(CostOf(*share, kGpu0, OwnerKind::kContainer, "chat-0"), 0.003 * 4 / 6, 1e-15);
  EXPECT_NEAR(CostOf(*share, kGpu0, OwnerKind::kContainer, "chat-1"), 0.003 * 2 / 6, 1e-15);
  const auto owner = Run("gpu_models: {H100: 3.6}\ndefaults: false\n",
                         {cost::Basis::kMemory, 0.5, cost::IdleRule::kOwner});
  // Each holds half: the idle 74/80 splits evenly on top of what each used.
  EXPECT_NEAR(CostOf(*owner, kGpu0, OwnerKind::kContainer, "chat-0"),
              0.003 * (4.0 / 80 + 37.0 / 80), 1e-15);
  const auto& t = TotalsOf(*owner, kGpu0, "chat-0");
  EXPECT_NEAR(t.idle_cost, 0.003 * 37 / 80, 1e-15);
}

TEST_F(PipelineCost, AModelWithoutAPriceHasNoCostNotAZeroOne) {
  const auto s = Run("gpu_models: {A100: 2.0}\ndefaults: false\n", {});
  for (const auto* gpu : {kGpu0, kGpu1}) {
    const auto& ut = s->unit_totals.at(gpu);
    EXPECT_FALSE(ut.price.has_value());
    EXPECT_DOUBLE_EQ(ut.unpriced_seconds, 3.0);
    EXPECT_EQ(ut.cost, 0);
  }
  for (const auto& [k, v] : s->totals) EXPECT_FALSE(v.priced) << k.second.pod;
}

// The Node object: GFD labels give the sharing mode without --node-label, the instance type
// prices the GPUs from the bundled table, and a node that cannot be read is a source that says
// why while the rest goes on.
class PipelineNode : public Pipeline {
 protected:
  std::shared_ptr<const NodeState> Run(const std::string& node_json, bool replicas_flag,
                                       std::vector<uint32_t> pids_on_gpu0 = {101, 102}) {
    const auto path = dir_.path() / "node.json";
    if (!node_json.empty()) std::ofstream(path) << node_json;
    node_source_ = std::make_unique<kube_api::NodeFileSource>(path, "node-a");
    PipelineOptions po;
    po.node = "node-a";
    po.proc_root = proc_;
    if (replicas_flag) po.evidence.node_labels["nvidia.com/gpu.replicas"] = "4";
    po.evidence.configured = extra_.configured;
    po.pricing = &pricing_;
    NodePipeline p(PipelineSources{kubelet_source_.get(), pods_source_.get(), nullptr, nullptr,
                                   node_source_.get()},
                   po);
    for (int k = 0; k <= 2; ++k) p.OnPass(Pass(k, pids_on_gpu0));
    return p.Latest();
  }
  // An MPS control server on GPU 0 (a host process) whose environment sets no default limits.
  void WriteMpsServer(uint32_t pid) {
    const auto d = proc_ / std::to_string(pid);
    fs::create_directories(d);
    std::ofstream(d / "stat") << pid
                              << " (nvidia-cuda-mps) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << 50
                              << " 0 0\n";
    std::ofstream(d / "cgroup") << "0::/system.slice/nvidia-mps.service\n";
    std::ofstream(d / "environ", std::ios::binary) << "HOME=/root" << '\0';
  }
  static std::string Node(const std::string& labels) {
    return R"({"kind":"Node","metadata":{"name":"node-a","labels":{)" + labels +
           R"(}},"spec":{"providerID":"aws:///us-east-1a/i-0abc"}})";
  }
  cost::Pricing pricing_ = cost::Pricing::Defaults();
  std::unique_ptr<kube_api::NodeFileSource> node_source_;
  k8s::SharingEvidence extra_;  // per-GPU --sharing for the next Run
};

TEST_F(PipelineNode, GfdLabelsGiveTheSharingModeAndTheInstanceTypeThePrice) {
  const auto s = Run(Node(R"("nvidia.com/gpu.replicas":"2","nvidia.com/gpu.sharing-strategy":)"
                          R"("time-slicing","node.kubernetes.io/instance-type":"p5.48xlarge",)"
                          R"("topology.kubernetes.io/region":"us-east-1")"),
                     false);
  ASSERT_NE(s->node_facts, nullptr);
  EXPECT_EQ(s->node_facts->instance_type, "p5.48xlarge");
  const auto* u0 = s->FindUnit(kGpu0);
  ASSERT_NE(u0, nullptr);
  EXPECT_EQ(u0->mode, SharingMode::kTimeSlicing);
  EXPECT_EQ(u0->replicas, 2u);
  EXPECT_NE(u0->evidence.find("nvidia.com/gpu.replicas"), std::string::npos) << u0->evidence;
  const auto& price = s->unit_totals.at(kGpu0).price;
  ASSERT_TRUE(price.has_value());
  EXPECT_DOUBLE_EQ(price->per_gpu_hour, 55.04 / 8);
  EXPECT_NE(price->source.find("p5.48xlarge"), std::string::npos) << price->source;
  bool listed = false;
  for (const auto& src : s->sources) listed = listed || (src.name == "node" && src.up);
  EXPECT_TRUE(listed) << "the node source is listed, up";
}

// The guard reads the same merged evidence: MPS from the Node's GFD labels means the device
// plugin sets the clients' limits, so no mps-no-limits finding; the same clients on a GPU
// configured MPS by flag, without that label, do raise it (the finding can fire here).
TEST_F(PipelineNode, TheGuardSeesTheNodesMpsStrategy) {
  auto mps_findings = [](const NodeState& s) {
    size_t n = 0;
    for (const auto& f : s.findings) n += f.kind == guard::Kind::kMpsNoLimits;
    return n;
  };
  WriteMpsServer(104);
  const auto by_node =
      Run(Node(R"("nvidia.com/gpu.replicas":"2","nvidia.com/gpu.sharing-strategy":"mps")"), false,
          {101, 102, 104});
  ASSERT_EQ(by_node->FindUnit(kGpu0)->mode, SharingMode::kMps);
  EXPECT_EQ(mps_findings(*by_node), 0u);
  extra_.configured[kGpu0] = {SharingMode::kMps, 2};
  const auto by_flag = Run(Node(R"("nvidia.com/gpu.replicas":"2")"), false, {101, 102, 104});
  ASSERT_EQ(by_flag->FindUnit(kGpu0)->mode, SharingMode::kMps);
  EXPECT_GT(mps_findings(*by_flag), 0u);
}

TEST_F(PipelineNode, AFlagWinsOverTheNodesLabel) {
  const auto s = Run(Node(R"("nvidia.com/gpu.replicas":"2")"), true);
  EXPECT_EQ(s->FindUnit(kGpu0)->replicas, 4u);
}

TEST_F(PipelineNode, AnUnreadableNodeIsSaidAndTheRestGoesOn) {
  const auto s = Run("", true);
  EXPECT_EQ(s->node_facts, nullptr);
  const domain::SourceStatus* node = nullptr;
  for (const auto& src : s->sources)
    if (src.name == "node") node = &src;
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(node->up);
  EXPECT_FALSE(node->last_error.empty());
  EXPECT_EQ(s->FindUnit(kGpu0)->replicas, 4u) << "the flag still applies";
  // Priced by model from the default table, as without a Node.
  EXPECT_DOUBLE_EQ(s->unit_totals.at(kGpu0).price->per_gpu_hour, 6.88);
}

}  // namespace
}  // namespace gpumeter::node
