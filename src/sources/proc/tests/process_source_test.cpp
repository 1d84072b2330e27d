// The /proc process source over a fixture /proc tree: what a pass identifies, what a drain
// identifies between passes (new PIDs only), and what each pass's table holds.
#include "sources/proc/process_source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace gpumeter::k8s {
namespace {

using Kind = domain::OwnerKind;
using Clock = std::chrono::steady_clock;

std::string Data(const std::string& name) {
  std::ifstream in(std::string(GPUMETER_TEST_SOURCE_DIR) + "/src/sources/pods/tests/data/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// chat-0/vllm of podlist.json, by its pod UID and container ID.
const std::string kChatCgroup =
    "/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-poddde1244b_5bb5_4297_b544_85f3bc0d80bf.slice/cri-containerd-"
    "40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9.scope";

class Source : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pods_.ApplyList(Data("podlist.json"))); }
  void Start(uint32_t pid, uint64_t start, const std::string& cgroup,
             const std::string& environ = "") {
    const auto d = dir_.path() / std::to_string(pid);
    std::filesystem::create_directories(d);
    std::ofstream(d / "stat") << pid << " (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                              << start << " 0 0\n";
    std::ofstream(d / "cgroup") << "0::" << cgroup << "\n";
    std::ofstream(d / "environ") << environ;
  }
  void Exit(uint32_t pid) { std::filesystem::remove_all(dir_.path() / std::to_string(pid)); }
  const ProcessTable& Pass(std::vector<uint32_t> listed) {
    source_.Watch(std::move(listed));
    source_.Poll(Clock::now());
    return *source_.Current();
  }

  testing::TempDir dir_{"gpumeter-procsrc"};
  PodStore pods_;
  ProcessSource source_{dir_.path(), pods_};
};

TEST_F(Source, APassIdentifiesEveryListedProcess) {
  EXPECT_EQ(source_.Current(), nullptr) << "nothing before the first pass";
  Start(100, 5, kChatCgroup, std::string("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25\0HOME=/x", 45));
  Start(1, 1, "/system.slice/nvidia-persistenced.service");
  const auto& t = Pass({100, 1, 100});
  ASSERT_EQ(t.size(), 2u) << "sorted by PID, one each";
  EXPECT_EQ(t[0].pid, 1u);
  EXPECT_EQ(t[0].owner.kind, Kind::kSystem);
  EXPECT_EQ(t[1].owner.AsOwner(), domain::Owner::Container("llm", "chat-0", "vllm"));
  EXPECT_EQ(t[1].start->ticks, 5u);
  ASSERT_TRUE(t[1].mps_thread_fraction);
  EXPECT_DOUBLE_EQ(*t[1].mps_thread_fraction, 0.25);
  EXPECT_EQ(t[1].gpu_env->count("HOME"), 0u) << "only GPU variables are kept";
  EXPECT_TRUE(t[0].listed && t[1].listed);
  EXPECT_EQ(source_.reads().at_pass, 2u);
  EXPECT_EQ(source_.Status().name, "proc");
  EXPECT_TRUE(source_.Status().up);
}

TEST_F(Source, AProcessThatLivedBetweenTwoPassesKeepsTheOwnerTheDrainRead) {
  Start(100, 5, kChatCgroup);
  Pass({100});
  Start(4000, 700, kChatCgroup);  // starts after the pass ...
  source_.Met({100, 4000});       // ... a drain meets it (and the listed 100, known already)
  EXPECT_EQ(source_.reads().at_drain, 1u) << "only the PID not known yet is read at a drain";
  source_.Met({4000});
  EXPECT_EQ(source_.reads().at_drain, 1u) << "met once, read once";
  Exit(4000);  // ... and exits before the next pass
  const auto& t = Pass({100});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].pid, 4000u);
  EXPECT_FALSE(t[1].listed);
  EXPECT_EQ(t[1].owner.AsOwner(), domain::Owner::Container("llm", "chat-0", "vllm"));
  EXPECT_EQ(t[1].start->ticks, 700u);
  // The next pass forgets it: it was booked with the interval it lived in.
  EXPECT_EQ(Pass({100}).size(), 1u);
}

TEST_F(Source, AProcessStillRunningAtThePassIsListedOnce) {
  Pass({});
  Start(4000, 700, kChatCgroup);
  source_.Met({4000});
  const auto& t = Pass({4000});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].listed) << "the pass's own reading wins";
  EXPECT_EQ(source_.reads().at_drain, 1u);
}

TEST_F(Source, AProcessGoneBeforeTheDrainReadIsNotInventedAndAMalformedFileIsAFailure) {
  Pass({});
  source_.Met({4001});  // exited before the drain could read it: not a failure of /proc
  EXPECT_EQ(source_.Status().failures, 0u);
  EXPECT_TRUE(Pass({}).empty()) << "nothing is known of it, so nothing is listed";
  const auto d = dir_.path() / "4002";
  std::filesystem::create_directories(d);
  std::ofstream(d / "stat") << "4002 (x) S";
  source_.Met({4002});
  EXPECT_EQ(source_.Status().failures, 1u);
  EXPECT_NE(source_.Status().last_error.find("4002/stat"), std::string::npos)
      << source_.Status().last_error;
}

TEST_F(Source, AReusedPidIsIdentifiedAfreshAtThePass) {
  Start(100, 5, kChatCgroup);
  EXPECT_EQ(Pass({100})[0].owner.kind, Kind::kContainer);
  Exit(100);
  Start(100, 900, "/system.slice/other.service");
  const auto& t = Pass({100});
  EXPECT_EQ(t[0].owner.kind, Kind::kSystem);
  EXPECT_EQ(t[0].start->ticks, 900u);
}

TEST(MpsThreadFraction, OnlyAPercentInZeroToAHundred) {
  EXPECT_DOUBLE_EQ(*MpsThreadFraction({{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"}}), 0.5);
  EXPECT_FALSE(MpsThreadFraction({{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "0"}}));
  EXPECT_FALSE(MpsThreadFraction({{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "101"}}));
  EXPECT_FALSE(MpsThreadFraction({{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50%"}}));
  EXPECT_FALSE(MpsThreadFraction({}));
}

}  // namespace
}  // namespace gpumeter::k8s
