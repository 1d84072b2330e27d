// `gpumeter doctor` against the demo's fakes: the fake NVML loaded by path, a fake kubelet on a
// unix socket, the scenario's /proc tree and pods (a file, or an API server on loopback); all good,
// then each source broken in turn, each named with its fix.
#include "app/diagnose/doctor.h"
#include "app/diagnose/doctor_demo.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <regex>
#include <thread>

#include "sim/fake_kubelet/simulated_node.h"
#include "sim/node/scenario_fixture.h"
#include "sim/scenario/loader.h"
#include "support/paths.h"
#include "support/temp_dir.h"

namespace gpumeter::app {
namespace {

// The NVML and kubelet side of the time-slicing scenario at t = 200 s.
class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = scenario::LoadScenarioFile(testing::ScenarioPath("timeslice-h100"));
    ASSERT_TRUE(s) << s.error().message;
    scenario_ = std::make_unique<scenario::Scenario>(std::move(*s));
    ::setenv("GPUMETER_FAKE_NVML_SCENARIO", testing::ScenarioPath("timeslice-h100").c_str(), 1);
    ::setenv("GPUMETER_FAKE_NVML_START_S", "200", 1);
    ::unsetenv("GPUMETER_FAKE_NVML_EPOCH_US");
    ::unsetenv("KUBERNETES_SERVICE_HOST");
    auto node = sim::SimulatedNode::Create(*scenario_, dir_.path() / "node");
    ASSERT_TRUE(node) << node.error().message;
    node_ = std::move(*node);
    ASSERT_TRUE(node_->RefreshProc(200));
    options_.node_name = "node-a";
    options_.nvml_library = testing::FakeNvmlPath("r580");
    options_.pod_resources_socket = node_->kubelet_socket();
    options_.proc_root = node_->proc_root().string();
    options_.pods_file = node_->pods_file().string();
  }

  static const CheckResult& Named(const std::vector<CheckResult>& checks, const std::string& name) {
    for (const auto& c : checks)
      if (c.name == name) return c;
    ADD_FAILURE() << "no check named " << name;
    static const CheckResult none;
    return none;
  }
  // Every check's status, in order, as "name=status".
  static std::string Statuses(const std::vector<CheckResult>& checks) {
    std::string out;
    for (const auto& c : checks)
      out += (out.empty() ? "" : " ") + c.name + "=" + ToString(c.status);
    return out;
  }

  testing::TempDir dir_{"gpumeter-doctor"};
  std::unique_ptr<scenario::Scenario> scenario_;
  std::unique_ptr<sim::SimulatedNode> node_;
  DoctorOptions options_;
};

TEST_F(DoctorTest, AllGoodOnTheDemoNode) {
  const auto checks = RunChecks(options_);
  EXPECT_EQ(Statuses(checks),
            "nvml=ok pod-resources=ok proc=ok pods=ok dra=skip attribution=ok dcgm=skip");
  EXPECT_NE(Named(checks, "nvml").detail.find("1 GPU(s), 3 GPU process(es)"), std::string::npos)
      << Named(checks, "nvml").detail;
  EXPECT_NE(Named(checks, "pod-resources").detail.find("3 holding 3 device(s)"), std::string::npos);
  EXPECT_NE(Named(checks, "proc").detail.find("3 of 3 GPU process(es) found"), std::string::npos);
  EXPECT_NE(Named(checks, "attribution").detail.find("3 in containers, 0 host, 0 unattributed"),
            std::string::npos)
      << Named(checks, "attribution").detail;
  EXPECT_EQ(RunDoctor(options_), 0);
}

// The fake driver keeps 64 periods of 1/6 s (10.7 s) of per-process samples: a 15 s interval
// undrained would lose some every pass, and doctor says so with the figure; the default 1 s is
// fine, and so is 15 s drained every 5 s (the agent's default) — but not every 12 s.
TEST_F(DoctorTest, AnIntervalLongerThanTheDriversSampleBufferIsAWarning) {
  options_.interval = Seconds(15);
  options_.drain_interval = Seconds(0);
  const auto checks = RunChecks(options_);
  const auto& nvml = Named(checks, "nvml");
  EXPECT_EQ(nvml.status, CheckStatus::kWarn) << nvml.detail;
  EXPECT_NE(nvml.detail.find("read every 15 s (--interval, or --drain-interval where shorter) is "
                             "longer than the 10.7 s"),
            std::string::npos)
      << nvml.detail;
  EXPECT_NE(nvml.fix.find("below 10.7 s"), std::string::npos) << nvml.fix;
  options_.drain_interval = Seconds(5);
  EXPECT_EQ(Named(RunChecks(options_), "nvml").status, CheckStatus::kOk);
  options_.drain_interval = Seconds(12);
  EXPECT_EQ(Named(RunChecks(options_), "nvml").status, CheckStatus::kWarn);
  options_.interval = Seconds(1);
  options_.drain_interval = Seconds(0);
  EXPECT_EQ(Named(RunChecks(options_), "nvml").status, CheckStatus::kOk);
}

TEST_F(DoctorTest, NoNvml) {
  options_.nvml_library = (dir_.path() / "libnvidia-ml.so.1").string();
  const auto checks = RunChecks(options_);
  const auto& c = Named(checks, "nvml");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.detail.find(options_.nvml_library), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("runtimeClassName: nvidia"), std::string::npos);
  EXPECT_EQ(Named(checks, "attribution").status,
            CheckStatus::kSkip);  // nothing to attribute without NVML
  EXPECT_EQ(RunDoctor(options_), 1);
}

TEST_F(DoctorTest, SocketNotMounted) {
  options_.pod_resources_socket = (dir_.path() / "kubelet.sock").string();
  const auto checks = RunChecks(options_);
  EXPECT_EQ(Statuses(checks),
            "nvml=ok pod-resources=fail proc=ok pods=ok dra=skip attribution=ok dcgm=skip");
  EXPECT_NE(Named(checks, "pod-resources").detail.find("no such socket"), std::string::npos);
  EXPECT_NE(Named(checks, "pod-resources").fix.find("hostPath /var/lib/kubelet/pod-resources"),
            std::string::npos);
}

TEST_F(DoctorTest, SocketThatIsNotOne) {
  options_.pod_resources_socket = options_.pods_file;  // a regular file
  EXPECT_NE(Named(RunChecks(options_), "pod-resources").detail.find("not a socket"),
            std::string::npos);
}

TEST_F(DoctorTest, NoHostPid) {
  // The agent's own PID namespace: a /proc with processes, none of them NVML's.
  const auto proc = dir_.path() / "container-proc";
  std::filesystem::create_directories(proc / "1");
  std::ofstream(proc / "1" / "cgroup") << "0::/\n";
  options_.proc_root = proc.string();
  const auto checks = RunChecks(options_);
  const auto& c = Named(checks, "proc");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.detail.find("0 of 3 GPU process(es) found"), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("hostPID: true"), std::string::npos);
  EXPECT_EQ(Named(checks, "attribution").status,
            CheckStatus::kFail);  // every GPU process unattributed
}

// No GPU process to check against: the PID namespace is told by PID 2 (the kernel's kthreadd on
// the host; something of the container's, or nothing, in a container).
TEST_F(DoctorTest, HostPidsWithoutGpuProcesses) {
  NvmlFindings none;
  none.loaded = true;
  const auto proc = dir_.path() / "quiet-proc";
  std::filesystem::create_directories(proc / "1");
  std::filesystem::create_directories(proc / "2");
  std::ofstream(proc / "2" / "comm") << "kthreadd\n";
  EXPECT_EQ(CheckProc(proc.string(), none).status, CheckStatus::kOk)
      << CheckProc(proc.string(), none).detail;
  std::ofstream(proc / "2" / "comm") << "bash\n";
  const auto c = CheckProc(proc.string(), none);
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.detail.find("not the host's PID namespace"), std::string::npos) << c.detail;
  EXPECT_NE(c.fix.find("hostPID: true"), std::string::npos);
}

TEST_F(DoctorTest, NoProcAtAll) {
  options_.proc_root = (dir_.path() / "missing").string();
  EXPECT_EQ(Named(RunChecks(options_), "proc").status, CheckStatus::kFail);
}

TEST_F(DoctorTest, PodsMissingForThisNode) {
  std::ofstream(dir_.path() / "empty.json")
      << R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]})";
  options_.pods_file = (dir_.path() / "empty.json").string();
  const auto checks = RunChecks(options_);
  EXPECT_EQ(Named(checks, "pods").status, CheckStatus::kWarn);
  EXPECT_NE(Named(checks, "pods").fix.find("spec.nodeName"), std::string::npos);
  // With no pods every container process is unattributed: named, with the pods check as the cause.
  const auto& a = Named(checks, "attribution");
  EXPECT_EQ(a.status, CheckStatus::kFail);
  EXPECT_NE(a.detail.find("0 in containers, 0 host, 3 unattributed"), std::string::npos)
      << a.detail;
}

TEST_F(DoctorTest, MalformedPodsFile) {
  std::ofstream(dir_.path() / "bad.json") << "{not json";
  options_.pods_file = (dir_.path() / "bad.json").string();
  EXPECT_EQ(Named(RunChecks(options_), "pods").status, CheckStatus::kFail);
}

// An API server on loopback answering the pod list and ResourceSlices with fixed statuses.
class FakeApi {
 public:
  FakeApi(int pods_status, std::string pods_body, int slices_status) {
    server_.Get("/api/v1/pods", [=, this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      seen_selector_ = req.get_param_value("fieldSelector");
      seen_auth_ = req.get_header_value("Authorization");
      res.status = pods_status;
      res.set_content(pods_status == 200 ? pods_body : R"({"kind":"Status","reason":"Forbidden"})",
                      "application/json");
    });
    server_.Get("/apis/resource.k8s.io/v1/resourceslices",
                [=](const httplib::Request&, httplib::Response& res) {
                  res.status = slices_status;
                  res.set_content(R"({"kind":"ResourceSliceList","items":[]})", "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeApi() {
    server_.stop();
    thread_.join();
  }
  // A kubeconfig for this server with a literal token.
  std::string Kubeconfig(const std::filesystem::path& dir) const {
    const auto path = dir / "kubeconfig";
    std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                        << "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:" << port_
                        << "'}}]\n"
                        << "users: [{name: u, user: {token: doctor-token}}]\n"
                        << "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
    return path.string();
  }
  // What the last pod list request carried.
  std::string selector() {
    std::lock_guard lock(mu_);
    return seen_selector_;
  }
  std::string authorization() {
    std::lock_guard lock(mu_);
    return seen_auth_;
  }

 private:
  std::mutex mu_;
  std::string seen_selector_, seen_auth_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(DoctorTest, PodsFromTheApiServer) {
  FakeApi api(200, sim::ScenarioPodListJson(*scenario_), 404);
  options_.pods_file.clear();
  options_.kubeconfig = api.Kubeconfig(dir_.path());
  const auto checks = RunChecks(options_);
  EXPECT_EQ(Statuses(checks),
            "nvml=ok pod-resources=ok proc=ok pods=ok dra=ok attribution=ok dcgm=skip");
  EXPECT_EQ(api.selector(), "spec.nodeName=node-a");
  EXPECT_EQ(api.authorization(), "Bearer doctor-token");
  EXPECT_NE(Named(checks, "dra").detail.find("DRA not in use"), std::string::npos);
}

TEST_F(DoctorTest, ResourceSlicesNotListedAreNotChecked) {
  FakeApi api(200, sim::ScenarioPodListJson(*scenario_), 403);
  options_.pods_file.clear();
  options_.kubeconfig = api.Kubeconfig(dir_.path());
  options_.resource_slices =
      false;  // the base DaemonSet: no RBAC on resourceslices, and not asked for
  EXPECT_EQ(Named(RunChecks(options_), "dra").status, CheckStatus::kSkip);
}

TEST_F(DoctorTest, RbacDenied) {
  FakeApi api(403, "", 403);
  options_.pods_file.clear();
  options_.kubeconfig = api.Kubeconfig(dir_.path());
  const auto checks = RunChecks(options_);
  const auto& pods = Named(checks, "pods");
  EXPECT_EQ(pods.status, CheckStatus::kFail);
  EXPECT_NE(pods.detail.find("RBAC denied"), std::string::npos) << pods.detail;
  EXPECT_NE(pods.fix.find("get, list, watch on pods"), std::string::npos);
  EXPECT_EQ(Named(checks, "dra").status, CheckStatus::kWarn);
}

TEST_F(DoctorTest, CredentialsRejected) {
  FakeApi api(401, "", 404);
  options_.pods_file.clear();
  options_.kubeconfig = api.Kubeconfig(dir_.path());
  const auto checks = RunChecks(options_);
  const auto& pods = Named(checks, "pods");
  EXPECT_EQ(pods.status, CheckStatus::kFail);
  EXPECT_NE(pods.detail.find("credentials rejected"), std::string::npos) << pods.detail;
}

TEST_F(DoctorTest, ApiServerUnreachable) {
  std::string kubeconfig;
  {
    FakeApi gone(200, "", 200);
    kubeconfig = gone.Kubeconfig(dir_.path());
  }  // stopped: its port refuses connections now
  options_.pods_file.clear();
  options_.kubeconfig = kubeconfig;
  const auto checks = RunChecks(options_);
  const auto& pods = Named(checks, "pods");
  EXPECT_EQ(pods.status, CheckStatus::kFail);
  EXPECT_NE(pods.fix.find("reachable"), std::string::npos) << pods.detail;
}

TEST_F(DoctorTest, UnreadableKubeconfig) {
  options_.pods_file.clear();
  options_.kubeconfig = (dir_.path() / "no-such-kubeconfig").string();
  const auto checks = RunChecks(options_);
  const auto& pods = Named(checks, "pods");
  EXPECT_EQ(pods.status, CheckStatus::kFail);
  EXPECT_NE(pods.detail.find("no-such-kubeconfig"), std::string::npos);
}

}  // namespace
}  // namespace gpumeter::app

namespace gpumeter::app {
namespace {

// The demo's doctor.yaml: what the demo writes reads back; what a person could break in it is
// refused with the file, the key and the line, never guessed.
TEST(DoctorDemo, TheFileReadsBackAndBadOnesAreRefusedByKey) {
  testing::TempDir dir{"gpumeter-doctor-demo"};
  const auto file = dir.path() / "doctor.yaml";
  const DemoNode node{"node-a",
                      "/lib/libnvidia-ml.so.1",
                      "/run/k.sock",
                      "/p",
                      "/pods.json",
                      "http://127.0.0.1:9400/metrics",
                      "/s.yaml",
                      20,
                      1'700'000'000'000'000,
                      1'700'000'100'000'000};
  ASSERT_TRUE(WriteDemoNode(file, node));
  auto back = ReadDemoNode(file.string());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->node_name, "node-a");
  EXPECT_EQ(back->dcgm_metrics, node.dcgm_metrics);
  EXPECT_EQ(back->speedup, 20);
  EXPECT_EQ(back->started_us, node.started_us);

  std::ifstream in(file);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::pair<std::string, std::string> cases[] = {
      {good + "proc_root: \"/q\"\n", "proc_root"},  // twice
      {good + "colour: blue\n", "colour"},          // unknown
      {std::regex_replace(good, std::regex("\"/p\""), "\"p\""), "an absolute path"},
      {std::regex_replace(good, std::regex("speedup: 20"), "speedup: 0"), "speedup"},
      {std::regex_replace(good, std::regex("epoch_us: [0-9]+"), "epoch_us: -1"), "epoch_us"},
  };
  for (const auto& [text, want] : cases) {
    std::ofstream(file, std::ios::trunc) << text;
    auto r = ReadDemoNode(file.string());
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find(file.string()), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

// The fake library's clock is put at the demo's scenario time, its stamps on the demo's.
TEST(DoctorDemo, TheFakeClockIsTheDemosNow) {
  DemoNode node{"n", "/l", "/s", "/p", "/f", "", "/sc", 20, 1'000'000, 5'000'000};
  DoctorOptions o;
  UseDemoNode(node, 5'000'000 + 3'000'000, o);  // 3 s after the start, at 20x: t = 60 s
  EXPECT_STREQ(std::getenv("GPUMETER_FAKE_NVML_START_S"), "60");
  EXPECT_STREQ(std::getenv("GPUMETER_FAKE_NVML_EPOCH_US"), "61000000");
  EXPECT_EQ(o.proc_root, "/p");
  EXPECT_FALSE(o.resource_slices);
  for (const char* k : {"GPUMETER_FAKE_NVML_SCENARIO", "GPUMETER_FAKE_NVML_SPEEDUP",
                        "GPUMETER_FAKE_NVML_START_S", "GPUMETER_FAKE_NVML_EPOCH_US"})
    ::unsetenv(k);
}

}  // namespace
}  // namespace gpumeter::app
