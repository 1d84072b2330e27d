#include "sources/proc/proc_reader.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace gpumeter::k8s {
namespace {

namespace fs = std::filesystem;

std::string Stat(uint32_t pid, const std::string& comm, uint64_t start) {
  // Fields 3..21 as a real line has them, then starttime (22), then the rest.
  return std::to_string(pid) + " (" + comm +
         ") S 1 100 100 0 -1 4194560 1000 0 0 0 10 5 0 0 20 0 12 0 " + std::to_string(start) +
         " 123456789 2000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
}

class ProcFixture : public ::testing::Test {
 protected:
  void Write(uint32_t pid, const std::string& stat, const std::string& cgroup) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "stat") << stat;
    std::ofstream(root_ / std::to_string(pid) / "cgroup") << cgroup;
  }
  testing::TempDir dir_{"gpumeter-proc"};
  const fs::path& root_ = dir_.path();
};

const std::string kPodA =
    "0::/kubepods.slice/kubepods-besteffort.slice/"
    "kubepods-besteffort-pod4c9f1974_5c46_44c2_b42f_3bbf0e98eef9.slice/"
    "cri-containerd-bacb920470900725e0aa7d914fee5eb0854315448b024b6b8420ad8429c607ba.scope\n";
const std::string kPodB =
    "0::/kubepods/burstable/pod05e102bf-8744-4942-a241-9b6f07983a53/"
    "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8\n";

TEST(ProcStat, StartTimeIsField22EvenWithAnAwkwardCommandName) {
  EXPECT_EQ(ParseStatStartTime(Stat(42, "python", 987654)), 987654u);
  EXPECT_EQ(ParseStatStartTime(Stat(42, "a) b (c", 5)), 5u) << "spaces and parentheses in comm";
  EXPECT_FALSE(ParseStatStartTime("42 python S 1"));
  EXPECT_FALSE(ParseStatStartTime("42 (python) S 1 2 3"));
  const auto bad =
      ParseStatStartTime("42 (p) S 1 100 100 0 -1 4 1 0 0 0 10 5 0 0 20 0 12 0 x7 1\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'x7' is not a number"), std::string::npos);
}

TEST(ProcStat, CommandNameIsBetweenTheFirstOpenAndTheLastCloseParenthesis) {
  EXPECT_EQ(ParseStatComm(Stat(42, "python", 1)), "python");
  EXPECT_EQ(ParseStatComm(Stat(42, "a) b (c", 5)), "a) b (c");
  EXPECT_EQ(ParseStatComm("42 python S 1"), "");
}

TEST_F(ProcFixture, IdentifiesThePodAndContainerOfAPid) {
  Write(1234, Stat(1234, "python", 500), kPodA);
  ProcReader reader(root_);
  const auto id = reader.Identify(1234);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->start_ticks, 500u);
  EXPECT_EQ(id->comm, "python");
  EXPECT_EQ(id->cgroup.pod_uid, "4c9f1974-5c46-44c2-b42f-3bbf0e98eef9");
  EXPECT_EQ(id->cgroup.container_id,
            "bacb920470900725e0aa7d914fee5eb0854315448b024b6b8420ad8429c607ba");
}

TEST_F(ProcFixture, AReusedPidIsReadAfreshNotTakenFromTheCache) {
  Write(1234, Stat(1234, "python", 500), kPodA);
  ProcReader reader(root_);
  ASSERT_TRUE(reader.Identify(1234));
  // Same cgroup file but the process is unchanged: served from the cache.
  std::ofstream(root_ / "1234" / "cgroup") << "garbage\n";
  ASSERT_TRUE(reader.Identify(1234)) << "same (pid, start time): cached";
  // The PID now names a new process (new start time) in another pod.
  Write(1234, Stat(1234, "worker", 900), kPodB);
  const auto id = reader.Identify(1234);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->start_ticks, 900u);
  EXPECT_EQ(id->cgroup.pod_uid, "05e102bf-8744-4942-a241-9b6f07983a53");
  EXPECT_EQ(reader.cached(), 1u) << "the old process's entry is gone";
}

TEST(ProcStat, BootTimeIsTheBtimeLineAndNothingElse) {
  EXPECT_EQ(ParseBootTime("cpu  1 2 3\nintr 5 6\nbtime 1733440000\nprocesses 9\n").value(),
            1733440000u);
  EXPECT_EQ(ParseBootTime("btime 1733440000").value(), 1733440000u) << "no final newline";
  for (const char* bad : {"cpu 1\n", "btime \n", "btime 17334x\n", "btime 12\n",
                          "btime -1733440000\n", "btime 99999999999\n"}) {
    const auto r = ParseBootTime(bad);
    EXPECT_FALSE(r) << bad;
  }
  EXPECT_NE(ParseBootTime("btime 12\n").error().message.find("'12'"), std::string::npos)
      << "the error quotes the value";
}

TEST_F(ProcFixture, StartOnTheWallClockIsBootTimePlusTicksOnceStatIsReadable) {
  ProcReader reader(root_);
  EXPECT_FALSE(reader.StartUnixUs(250).has_value()) << "no <root>/stat: unknown, not boot time 0";
  std::ofstream(root_ / "stat") << "cpu  1 2 3\nbtime 1733440000\n";
  EXPECT_FALSE(reader.StartUnixUs(250).has_value()) << "tried once per pass";
  reader.Retain({});
  const long hz = ::sysconf(_SC_CLK_TCK);
  ASSERT_GT(hz, 0);
  EXPECT_EQ(reader.StartUnixUs(250).value(),
            1733440000ull * 1000000 + 250ull * 1000000 / static_cast<uint64_t>(hz));
  fs::remove(root_ / "stat");
  EXPECT_TRUE(reader.StartUnixUs(1).has_value()) << "the boot time does not change: kept";
}

// With this kernel's own btime, the boot instant comes from its clocks, to the microsecond, not
// rounded down to the second as btime is.
TEST_F(ProcFixture, ThisKernelsBootTimeIsTakenToTheMicrosecond) {
  std::ifstream in("/proc/stat");
  std::stringstream text;
  text << in.rdbuf();
  const auto btime = ParseBootTime(text.str());
  ASSERT_TRUE(btime) << "this machine's /proc/stat has a btime";
  std::ofstream(root_ / "stat") << "btime " << *btime << "\n";
  ProcReader reader(root_);
  timespec real{}, boot{};
  ASSERT_EQ(::clock_gettime(CLOCK_REALTIME, &real), 0);
  ASSERT_EQ(::clock_gettime(CLOCK_BOOTTIME, &boot), 0);
  const double expected = static_cast<double>(real.tv_sec - boot.tv_sec) +
                          static_cast<double>(real.tv_nsec - boot.tv_nsec) / 1e9;
  const auto us = reader.StartUnixUs(0);
  ASSERT_TRUE(us);
  EXPECT_NEAR(static_cast<double>(*us) / 1e6, expected, 0.01);
  EXPECT_GE(*us, *btime * 1000000);
  EXPECT_LT(*us, (*btime + 1) * 1000000);
}

TEST_F(ProcFixture, AnExitedProcessIsNotFoundAndAMalformedFileNamesItself) {
  ProcReader reader(root_);
  const auto gone = reader.Identify(999);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_NE(gone.error().message.find("999/stat"), std::string::npos) << gone.error().message;
  Write(77, Stat(77, "x", 1), "not a cgroup line\n");
  const auto bad = reader.Identify(77);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(bad.error().message.find("77/cgroup: cgroup line 1"), std::string::npos)
      << bad.error().message;
}

// Files under a hostile --proc-root: a FIFO would block open() and read() forever, /dev/zero would
// feed the reader until memory runs out. Each is refused at once with the path named.
TEST_F(ProcFixture, AFifoOrADeviceInPlaceOfAProcFileIsRefusedWithoutBlocking) {
  Write(5, Stat(5, "x", 1), kPodA);
  std::filesystem::remove(root_ / "5" / "stat");
  ASSERT_EQ(::mkfifo((root_ / "5" / "stat").c_str(), 0600), 0);
  Write(6, Stat(6, "y", 2), kPodA);
  std::filesystem::remove(root_ / "6" / "cgroup");
  std::filesystem::create_symlink("/dev/zero", root_ / "6" / "cgroup");
  Write(7, Stat(7, "z", 3), std::string(100 << 10, '#'));
  ProcReader reader(root_);
  const auto fifo = reader.Identify(5);
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(fifo.error().message.find("5/stat: not a regular file"), std::string::npos)
      << fifo.error().message;
  const auto zero = reader.Identify(6);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("6/cgroup: not a regular file"), std::string::npos)
      << zero.error().message;
  const auto big = reader.Identify(7);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("7/cgroup: larger than 65536 bytes"), std::string::npos)
      << big.error().message;
}

TEST_F(ProcFixture, RetainKeepsOnlyLivePids) {
  Write(1, Stat(1, "a", 10), kPodA);
  Write(2, Stat(2, "b", 20), kPodB);
  ProcReader reader(root_);
  ASSERT_TRUE(reader.Identify(1));
  ASSERT_TRUE(reader.Identify(2));
  reader.Retain({2});
  EXPECT_EQ(reader.cached(), 1u);
}

}  // namespace
}  // namespace gpumeter::k8s

namespace gpumeter::k8s {
namespace {

TEST(ProcEnviron, KeepsOnlyNvidiaAndCudaVariables) {
  const std::string environ(
      "PATH=/usr/bin\0AWS_SECRET_ACCESS_KEY=hunter2\0NVIDIA_VISIBLE_DEVICES=all\0"
      "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25\0CUDA_\0NVIDIA_X=a=b\0MY_CUDA_VAR=1",
      140);
  const auto env = ParseGpuEnviron(environ);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25"},
                                                     {"NVIDIA_VISIBLE_DEVICES", "all"},
                                                     {"NVIDIA_X", "a=b"}}));
  EXPECT_TRUE(ParseGpuEnviron("").empty());
}

TEST_F(ProcFixture, EnvironIsReadWhenPresentAndUnknownWhenNot) {
  Write(7, Stat(7, "worker", 100), kPodA);
  ProcReader reader(root_);
  auto id = reader.Identify(7);
  ASSERT_TRUE(id.has_value());
  EXPECT_FALSE(id->gpu_env.has_value()) << "no environ file: unknown, not empty";
  Write(8, Stat(8, "worker", 100), kPodA);
  std::ofstream(root_ / "8" / "environ")
      << std::string("HOME=/root\0NVIDIA_VISIBLE_DEVICES=GPU-1\0", 40);
  id = reader.Identify(8);
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(id->gpu_env.has_value());
  EXPECT_EQ(id->gpu_env->size(), 1u);
  EXPECT_EQ(id->gpu_env->at("NVIDIA_VISIBLE_DEVICES"), "GPU-1");
}

}  // namespace
}  // namespace gpumeter::k8s
