#include "sim/scenario/loader.h"

#include "sim/scenario/health_faults.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/paths.h"
#include "support/temp_dir.h"
#include "support/yaml_bombs.h"

namespace gpumeter::scenario {
namespace {

using ::testing::HasSubstr;

// A minimal valid scenario; tests patch one thing at a time.
const char* kMinimal = R"(
name: t
gpus:
  - index: 0
    uuid: GPU-00000000-0000-0000-0000-000000000001
    model: Test GPU
    memory_mib: 1024
    power: {idle_watts: 10, max_watts: 110}
pods:
  - namespace: ns
    name: p
    uid: u1
    containers:
      - {name: c, id: "containerd://abc", devices: [GPU-00000000-0000-0000-0000-000000000001]}
processes:
  - pid: 100
    container: ns/p/c
    usage:
      - {unit: GPU-00000000-0000-0000-0000-000000000001, memory_mib: 100, sm_pct: 50}
)";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

std::string ErrorOf(const std::string& yaml) {
  auto r = ParseScenario(yaml, "test.yaml");
  EXPECT_FALSE(r.has_value()) << "expected an error for:\n" << yaml;
  return r ? "" : r.error().message;
}

TEST(Loader, MinimalScenarioParses) {
  auto s = ParseScenario(kMinimal, "test.yaml");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  ASSERT_EQ(s->gpus.size(), 1u);
  EXPECT_EQ(s->gpus[0].memory_bytes, 1024ull << 20);
  EXPECT_EQ(s->gpus[0].sharing.mode, domain::SharingMode::kExclusive);
  ASSERT_EQ(s->processes.size(), 1u);
  EXPECT_EQ(s->processes[0].container->Key(), "ns/p/c");
  ASSERT_EQ(s->processes[0].usage[0].duty.size(), 1u);
  EXPECT_DOUBLE_EQ(s->processes[0].usage[0].duty[0].duty, 0.5);
}

// node_object: the Node the simulated node serves; a wrong key or a label that is not a string
// is refused naming its path.
TEST(Loader, NodeObjectParsesAndIsChecked) {
  const std::string with =
      Replace(kMinimal, "gpus:\n",
              "node_object:\n  provider_id: aws:///us-east-1a/i-0\n"
              "  labels: {node.kubernetes.io/instance-type: g6.xlarge}\ngpus:\n");
  auto s = ParseScenario(with, "test.yaml");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  ASSERT_TRUE(s->node_object.has_value());
  EXPECT_EQ(s->node_object->provider_id, "aws:///us-east-1a/i-0");
  EXPECT_EQ(s->node_object->labels.at("node.kubernetes.io/instance-type"), "g6.xlarge");
  EXPECT_FALSE(ParseScenario(kMinimal, "test.yaml")->node_object.has_value());
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "gpus:\n", "node_object: {providerID: x}\ngpus:\n")),
              HasSubstr("node_object"));
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "gpus:\n", "node_object: {labels: {a: [1]}}\ngpus:\n")),
              HasSubstr("node_object.labels"));
}

TEST(Loader, EveryBundledScenarioLoads) {
  for (const char* name : testing::kBundledScenarios) {
    auto s = LoadScenarioFile(testing::ScenarioPath(name));
    ASSERT_TRUE(s.has_value()) << name << ": " << s.error().message;
    EXPECT_EQ(s->name, name);
    EXPECT_FALSE(s->gpus.empty());
  }
}

TEST(Loader, BundledScenariosCoverEverySharingMode) {
  auto node = LoadScenarioFile(testing::ScenarioPath("node-8gpu"));
  ASSERT_TRUE(node);
  bool ex = false, ts = false, mps = false, mig = false;
  for (const auto& g : node->gpus) {
    ex |= !g.mig_enabled && g.sharing.mode == domain::SharingMode::kExclusive;
    ts |= g.sharing.mode == domain::SharingMode::kTimeSlicing;
    mps |= g.sharing.mode == domain::SharingMode::kMps;
    mig |= g.mig_enabled;
  }
  EXPECT_EQ(node->gpus.size(), 8u);
  EXPECT_TRUE(ex && ts && mps && mig);
}

TEST(Loader, MissingFileNamesThePath) {
  auto r = LoadScenarioFile("/nonexistent/dir/x.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/dir/x.yaml"));
}

TEST(Loader, MalformedYamlGivesFileAndLine) {
  const auto msg = ErrorOf("name: t\ngpus: [\n  {index: 0,\n");
  EXPECT_THAT(msg, HasSubstr("test.yaml"));
  EXPECT_THAT(msg, HasSubstr("line"));
}

// `--scenario FILE` of simulate and demo: a small file that stands for a huge one is an error
// naming the file, not a hang.
TEST(Loader, AliasesAndDeepNestingAreRefusedNamingTheFile) {
  testing::TempDir dir("gpumeter-scenario-bomb");
  const std::string path = (dir.path() / "lol.yaml").string();
  std::ofstream(path) << testing::BillionLaughs();
  const auto laughs = LoadScenarioFile(path);
  ASSERT_FALSE(laughs);
  EXPECT_EQ(laughs.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(laughs.error().message,
            path + ": line 2, column 8: YAML aliases are not accepted (*a); write the value out");
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "processes:", "x: &x 1\ny: *x\nprocesses:")),
              HasSubstr("test.yaml: line 16, column 4: YAML aliases are not accepted (*x)"));
  EXPECT_THAT(ErrorOf("name: t\ngpus: " + testing::NestedLists(100)),
              HasSubstr("test.yaml: line 2, column 70: nested deeper than 64 levels"));
}

TEST(Loader, EmptyDocument) { EXPECT_THAT(ErrorOf(""), HasSubstr("empty")); }

TEST(Loader, UnknownFieldNamesPathAndAllowed) {
  const auto msg =
      ErrorOf(Replace(kMinimal, "    model: Test GPU", "    model: Test GPU\n    colour: green"));
  EXPECT_THAT(msg, HasSubstr("gpus[0].colour"));
  EXPECT_THAT(msg, HasSubstr("unknown field 'colour'"));
  EXPECT_THAT(msg, HasSubstr("allowed:"));
  EXPECT_THAT(msg, HasSubstr("line 7"));
}

TEST(Loader, NegativeMemoryIsRejected) {
  const auto msg = ErrorOf(Replace(kMinimal, "memory_mib: 1024", "memory_mib: -5"));
  EXPECT_THAT(msg, HasSubstr("gpus[0].memory_mib"));
  EXPECT_THAT(msg, HasSubstr("must not be negative"));
}

TEST(Loader, ZeroMemoryIsRejected) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "memory_mib: 1024", "memory_mib: 0")),
              HasSubstr("must be positive"));
}

TEST(Loader, NonNumericValue) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "memory_mib: 1024", "memory_mib: lots")),
              HasSubstr("expected a non-negative integer, got 'lots'"));
}

TEST(Loader, ProcessOnMissingGpu) {
  const auto msg =
      ErrorOf(Replace(kMinimal, "{unit: GPU-00000000-0000-0000-0000-000000000001, memory_mib: 100",
                      "{unit: GPU-99999999-0000-0000-0000-000000000009, memory_mib: 100"));
  EXPECT_THAT(msg, HasSubstr("processes[0].usage[0].unit"));
  EXPECT_THAT(msg, HasSubstr("GPU-99999999"));
  EXPECT_THAT(msg, HasSubstr("not a GPU or MIG instance of this node"));
}

TEST(Loader, ProcessInUnknownContainer) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "container: ns/p/c", "container: ns/p/nope")),
              HasSubstr("no container 'ns/p/nope'"));
}

// name_hex: a command name YAML cannot carry (not UTF-8), byte for byte; refused when it is not
// pairs of hex digits, holds a NUL, or comes with a name.
TEST(Loader, ANameInHexIsTakenByteForByte) {
  const std::string pid = "  - pid: 100\n";
  auto s = ParseScenario(Replace(kMinimal, pid, pid + "    name_hex: fffE41c3\n"), "test.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->processes[0].name, "\xff\xfe\x41\xc3");
  for (const std::string bad : {"fff", "zz", "0041", "41 42", "\"\""})
    EXPECT_THAT(ErrorOf(Replace(kMinimal, pid, pid + "    name_hex: " + bad + "\n")),
                HasSubstr("processes[0].name_hex: expected pairs of hex digits"))
        << bad;
  EXPECT_THAT(ErrorOf(Replace(kMinimal, pid, pid + "    name: x\n    name_hex: 41\n")),
              HasSubstr("give either name or name_hex"));
}

TEST(Loader, BadContainerReference) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "container: ns/p/c", "container: just-a-name")),
              HasSubstr("expected 'namespace/pod/container'"));
}

TEST(Loader, DeviceIdOfUnknownGpuInPod) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "devices: [GPU-00000000-0000-0000-0000-000000000001]",
                              "devices: [GPU-x::2]")),
              HasSubstr("device 'GPU-x::2' is not a GPU or MIG instance"));
}

// A DRA claim on the GPU of kMinimal (node "sim-node-0" by default: the NVIDIA driver's pool).
std::string WithClaim(const std::string& claim) {
  return Replace(kMinimal, "devices: [GPU-00000000-0000-0000-0000-000000000001]}",
                 "claims: [" + claim + "]}");
}

TEST(Loader, ClaimsParseWithTheDriversDefaults) {
  auto s = ParseScenario(WithClaim("{name: cl, device: gpu-0, share_id: s1}"), "test.yaml");
  ASSERT_TRUE(s) << s.error().message;
  const auto& cl = s->pods[0].containers[0].claims.at(0);
  EXPECT_EQ(cl.name, "cl");
  EXPECT_EQ(cl.driver, "gpu.nvidia.com");
  EXPECT_EQ(cl.pool, "sim-node-0");
  EXPECT_EQ(cl.device, "gpu-0");
  EXPECT_EQ(cl.share_id, "s1");
  EXPECT_EQ(s->DraUnit("gpu-0"), "GPU-00000000-0000-0000-0000-000000000001");
}

TEST(Loader, BadClaimsAreRefusedNamingTheKey) {
  EXPECT_THAT(ErrorOf(WithClaim("{name: cl, device: gpu-7}")),
              HasSubstr("pods[0].containers[0].claims[0].device: 'gpu-7' is not in the node's "
                        "ResourceSlices"));
  EXPECT_THAT(ErrorOf(WithClaim("{name: cl, device: gpu-0, driver: example.com}")),
              HasSubstr("pods[0].containers[0].claims[0].driver: 'example.com'"));
  EXPECT_THAT(ErrorOf(WithClaim("{name: cl, device: gpu-0, pool: other}")),
              HasSubstr("pods[0].containers[0].claims[0].pool: 'other' is not the node's pool"));
  EXPECT_THAT(ErrorOf(WithClaim("{device: gpu-0}")), HasSubstr("name"));
  EXPECT_THAT(ErrorOf(WithClaim("{name: cl, device: gpu-0, colour: red}")), HasSubstr("colour"));
}

TEST(Loader, MigDevicesAreNamedAsTheNvidiaDriverNamesThem) {
  auto s = LoadScenarioFile(testing::ScenarioPath("dra-h100"));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->DraUnit("gpu-1-mig-3g40gb-2-0"), "MIG-d7a00000-0000-4000-8000-000000000101");
  EXPECT_EQ(s->DraUnit("gpu-1"), "");  // a GPU in MIG mode is published as its instances
}

TEST(Loader, ReplicaSuffixIsAccepted) {
  auto s = ParseScenario(Replace(kMinimal, "devices: [GPU-00000000-0000-0000-0000-000000000001]",
                                 "devices: [GPU-00000000-0000-0000-0000-000000000001::3]"),
                         "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
}

TEST(Loader, DutyAbove100) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "sm_pct: 50", "sm_pct: 150")),
              HasSubstr("between 0 and 100"));
}

TEST(Loader, DuplicateGpuIndex) {
  const std::string second = R"(
  - index: 0
    uuid: GPU-00000000-0000-0000-0000-000000000002
    model: Test GPU
    memory_mib: 1024
    power: {idle_watts: 10, max_watts: 110}
pods:)";
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "\npods:", second)), HasSubstr("duplicate GPU index 0"));
}

TEST(Loader, PidAliveTwice) {
  const std::string twin = R"(
  - pid: 100
    usage:
      - {unit: GPU-00000000-0000-0000-0000-000000000001, memory_mib: 1})";
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + twin), HasSubstr("pid 100 is alive twice"));
}

TEST(Loader, PidReuseAfterExitIsFine) {
  const std::string reuse = R"(
  - pid: 100
    start_s: 20
    usage:
      - {unit: GPU-00000000-0000-0000-0000-000000000001, memory_mib: 1}
faults:
  - {kind: process-exit, pid: 100, at_s: 10})";
  auto s = ParseScenario(std::string(kMinimal) + reuse, "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE(s->processes[0].end_s);
  EXPECT_DOUBLE_EQ(*s->processes[0].end_s, 10);
}

TEST(Loader, MigInstancesMustFit) {
  const std::string mig = R"(    power: {idle_watts: 10, max_watts: 110}
    mig:
      instances:
        - {gi: 1, profile: 1g.1gb, uuid: MIG-1, memory_mib: 800, slices: 1}
        - {gi: 2, profile: 1g.1gb, uuid: MIG-2, memory_mib: 800, slices: 1})";
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "    power: {idle_watts: 10, max_watts: 110}", mig)),
              HasSubstr("more memory than the GPU has"));
}

TEST(Loader, DcgmExporterAndComputeSlices) {
  const std::string power = "    power: {idle_watts: 10, max_watts: 110}";
  auto plain = ParseScenario(kMinimal, "test.yaml");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->gpus[0].dcgm_exporter);
  EXPECT_DOUBLE_EQ(plain->gpus[0].dcgm_interval_s, 30);
  auto s = ParseScenario(
      Replace(kMinimal, power, power + "\n    dcgm_exporter: true\n    dcgm_interval_s: 10"),
      "test.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->gpus[0].dcgm_exporter);
  EXPECT_DOUBLE_EQ(s->gpus[0].dcgm_interval_s, 10);
  EXPECT_THAT(ErrorOf(Replace(kMinimal, power, power + "\n    dcgm_interval_s: 0")),
              HasSubstr("dcgm_interval_s"));
  const std::string mig = power + R"(
    mig:
      instances:
        - {gi: 1, profile: 2g.1gb, uuid: MIG-1, memory_mib: 512, slices: 2, compute_slices: 3})";
  EXPECT_THAT(ErrorOf(Replace(kMinimal, power, mig)), HasSubstr("compute_slices"));
}

TEST(Loader, ProcessOnMigParentIsRejected) {
  const std::string mig = R"(    power: {idle_watts: 10, max_watts: 110}
    mig:
      instances:
        - {gi: 1, profile: 1g.1gb, uuid: MIG-1, memory_mib: 512, slices: 1})";
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "    power: {idle_watts: 10, max_watts: 110}", mig)),
              HasSubstr("is in MIG mode; name a MIG instance UUID"));
}

TEST(Loader, FaultOnMissingGpu) {
  EXPECT_THAT(
      ErrorOf(std::string(kMinimal) + "\nfaults:\n  - {kind: gpu-lost, gpu: 3, from_s: 1}\n"),
      HasSubstr("no GPU with index 3"));
}

TEST(Loader, AFaultOnACallTheAgentNeverMakesIsRefused) {
  EXPECT_THAT(
      ErrorOf(std::string(kMinimal) +
              "\nfaults:\n  - {kind: call-error, call: nvmlDeviceGetPowerUsag, code: 999}\n"),
      HasSubstr("'nvmlDeviceGetPowerUsag' is no NVML call the agent makes"));
  for (const char* call : {"nvmlDeviceGetPowerUsage", "*"}) {
    auto s = ParseScenario(std::string(kMinimal) + "\nfaults:\n  - {kind: call-error, call: \"" +
                               call + "\", code: 999}\n",
                           "t.yaml");
    EXPECT_TRUE(s) << call << ": " << s.error().message;
  }
}

TEST(Loader, MigLayoutsNoDriverMakesAreRefused) {
  const std::string power = "    power: {idle_watts: 10, max_watts: 110}";
  auto mig = [&](const std::string& model, const std::string& body) {
    return Replace(Replace(kMinimal, power, power + "\n    mig:\n" + body), "    model: Test GPU",
                   "    model: " + model);
  };
  // A 2g profile of 5 slices, a 1c.3g compute instance said to compute on 3, a name that is no
  // profile, and an A30 with 7 slices (it has 4).
  EXPECT_THAT(ErrorOf(mig("Test GPU",
                          "      instances:\n        - {gi: 1, profile: 2g.12gb, "
                          "uuid: MIG-1, memory_mib: 100, slices: 5}")),
              HasSubstr("profile 2g.12gb holds 2 slices, not 5"));
  EXPECT_THAT(ErrorOf(mig("Test GPU",
                          "      instances:\n        - {gi: 1, profile: 1c.3g.40gb, "
                          "uuid: MIG-1, memory_mib: 100, slices: 3}")),
              HasSubstr("profile 1c.3g.40gb computes on 1 slices, not 3"));
  EXPECT_THAT(ErrorOf(mig("Test GPU",
                          "      instances:\n        - {gi: 1, profile: big, "
                          "uuid: MIG-1, memory_mib: 100, slices: 1}")),
              HasSubstr("'big' is not a MIG profile name"));
  EXPECT_THAT(ErrorOf(mig("NVIDIA A30",
                          "      total_slices: 7\n      instances:\n        - {gi: 1, "
                          "profile: 1g.6gb, uuid: MIG-1, memory_mib: 100, slices: 1}")),
              HasSubstr("NVIDIA A30 has 4 MIG slices"));
  // On a model with a profile table: a profile of another model's table, the right name with the
  // wrong slices, and more instances of a profile than fit on one GPU.
  EXPECT_THAT(
      ErrorOf(mig("NVIDIA A30",
                  "      instances:\n        - {gi: 1, profile: 3g.18gb, "
                  "uuid: MIG-1, memory_mib: 100, slices: 3}")),
      HasSubstr("'3g.18gb' is not a MIG profile of the A30 24GB (1g.6gb, 2g.12gb, 4g.24gb)"));
  EXPECT_THAT(ErrorOf(mig("NVIDIA H100 80GB HBM3",
                          "      instances:\n        - {gi: 1, profile: 4g.20gb, "
                          "uuid: MIG-1, memory_mib: 100, slices: 4}")),
              HasSubstr("'4g.20gb' is not a MIG profile of the H100 80GB"));
  EXPECT_THAT(
      ErrorOf(mig("NVIDIA H100 80GB HBM3",
                  "      instances:\n"
                  "        - {gi: 1, profile: 3g.40gb, uuid: MIG-1, memory_mib: 100, slices: 3}\n"
                  "        - {gi: 2, profile: 1g.10gb, uuid: MIG-2, memory_mib: 100, slices: 1}\n"
                  "        - {gi: 3, profile: 1g.20gb, uuid: MIG-3, memory_mib: 100, slices: 1}\n"
                  "        - {gi: 4, profile: 1g.20gb, uuid: MIG-4, memory_mib: 100, slices: 1}\n"
                  "        - {gi: 5, profile: 1g.20gb, uuid: MIG-5, memory_mib: 100, slices: 1}\n"
                  "        - {gi: 6, profile: 1g.20gb, uuid: MIG-6, memory_mib: 100, slices: 1}\n"
                  "        - {gi: 7, profile: 1g.20gb, uuid: MIG-7, memory_mib: 100, slices: 1}")),
      HasSubstr("the H100 80GB holds at most 4 instances of 1g.20gb"));
  // What drivers make gets past the layout (to the next check: kMinimal's process is on the
  // parent GPU): a 1c.3g compute instance on 1 of its 3 slices, an A30's 4 slices, two compute
  // instances on one H100 GPU instance (its slices counted once), a B200's profile.
  EXPECT_THAT(ErrorOf(mig("Test GPU",
                          "      instances:\n        - {gi: 1, profile: 1c.3g.40gb, "
                          "uuid: MIG-1, memory_mib: 100, slices: 3, compute_slices: 1}")),
              HasSubstr("is in MIG mode; name a MIG instance UUID"));
  EXPECT_THAT(ErrorOf(mig("NVIDIA A30",
                          "      total_slices: 4\n      instances:\n        - {gi: 1, "
                          "profile: 2g.12gb+me.all, uuid: MIG-1, memory_mib: 100, slices: 2}")),
              HasSubstr("is in MIG mode; name a MIG instance UUID"));
  EXPECT_THAT(
      ErrorOf(mig("NVIDIA H100 80GB HBM3",
                  "      instances:\n"
                  "        - {gi: 1, ci: 0, profile: 1c.4g.40gb, uuid: MIG-1, memory_mib: 100, "
                  "slices: 4, compute_slices: 1}\n"
                  "        - {gi: 1, ci: 1, profile: 3c.4g.40gb, uuid: MIG-2, memory_mib: 100, "
                  "slices: 4, compute_slices: 3}\n"
                  "        - {gi: 2, profile: 3g.40gb, uuid: MIG-3, memory_mib: 100, slices: 3}")),
      HasSubstr("is in MIG mode; name a MIG instance UUID"));
  EXPECT_THAT(ErrorOf(mig("NVIDIA B200",
                          "      instances:\n        - {gi: 1, profile: 1g.23gb, "
                          "uuid: MIG-1, memory_mib: 100, slices: 1}")),
              HasSubstr("is in MIG mode; name a MIG instance UUID"));
}

TEST(Loader, UnknownFaultKind) {
  EXPECT_THAT(ErrorOf(std::string(kMinimal) + "\nfaults:\n  - {kind: meteor, gpu: 0}\n"),
              HasSubstr("unknown fault kind 'meteor'"));
}

TEST(Loader, ABadValueFaultIsForPowerSamplesAndNamesItsValue) {
  const std::string faults = std::string(kMinimal) + "\nfaults:\n  - ";
  EXPECT_THAT(ErrorOf(faults + "{kind: bad-value, call: nvmlDeviceGetPowerUsage, value: zero}\n"),
              HasSubstr("bad-value is made for nvmlDeviceGetSamples only"));
  EXPECT_THAT(ErrorOf(faults + "{kind: bad-value, call: nvmlDeviceGetSamples, value: negative}\n"),
              HasSubstr("'negative' (expected zero, huge, stale or type)"));
  EXPECT_THAT(ErrorOf(faults + "{kind: bad-value, call: nvmlDeviceGetSamples}\n"),
              HasSubstr("value"));
}

// Health events: what each needs, named when missing or wrong; the state they make over time.
TEST(Loader, HealthEventsNameWhatIsWrong) {
  const std::string faults = std::string(kMinimal) + "\nfaults:\n  - ";
  EXPECT_THAT(ErrorOf(faults + "{kind: throttle, gpu: 0, from_s: 1, reasons: [hw-melting]}\n"),
              HasSubstr("unknown reason 'hw-melting'"));
  EXPECT_THAT(ErrorOf(faults + "{kind: throttle, gpu: 0, reasons: [hw_thermal, hw_thermal]}\n"),
              HasSubstr("'hw_thermal' is named twice"));
  EXPECT_THAT(ErrorOf(faults + "{kind: throttle, gpu: 0, reasons: []}\n"),
              HasSubstr("name at least one reason"));
  EXPECT_THAT(ErrorOf(faults + "{kind: ecc-error, at_s: 5, type: uncorrected, count: 1}\n"),
              HasSubstr("a health event needs 'gpu'"));
  EXPECT_THAT(ErrorOf(faults + "{kind: ecc-error, gpu: 0, at_s: 5, type: double, count: 1}\n"),
              HasSubstr("'double' (expected corrected or uncorrected)"));
  EXPECT_THAT(ErrorOf(faults + "{kind: ecc-error, gpu: 0, at_s: 5, type: corrected, count: 0}\n"),
              HasSubstr("must be at least 1"));
  EXPECT_THAT(ErrorOf(faults + "{kind: ecc-error, gpu: 0, type: corrected, count: 1}\n"),
              HasSubstr("at_s"));
  EXPECT_THAT(ErrorOf(faults + "{kind: row-remap, gpu: 0, at_s: 5, type: uncorrectable}\n"),
              HasSubstr("needs rows, pending or failed"));
  EXPECT_THAT(ErrorOf(faults + "{kind: ecc-error, call: nvmlDeviceGetTotalEccErrors, gpu: 0, "
                               "at_s: 5, type: corrected, count: 1}\n"),
              HasSubstr("a health event fails no call"));
  EXPECT_THAT(
      ErrorOf(faults + "{kind: throttle, gpu: 0, from_s: 9, to_s: 3, reasons: [sw_thermal]}\n"),
      HasSubstr("must be after from_s"));
  EXPECT_THAT(ErrorOf(faults + "{kind: row-remap, gpu: 2, at_s: 5, type: correctable, rows: 1}\n"),
              HasSubstr("no GPU with index 2"));

  auto s = ParseScenario(
      faults +
          "{kind: throttle, gpu: 0, from_s: 2, to_s: 4, reasons: [sw_thermal]}\n"
          "  - {kind: ecc-error, gpu: 0, at_s: 3, type: uncorrected, count: 2}\n"
          "  - {kind: ecc-error, gpu: 0, at_s: 6, type: uncorrected, count: 1}\n"
          "  - {kind: row-remap, gpu: 0, at_s: 3, type: correctable, rows: 4, pending: true, "
          "to_s: 8}\n"
          "  - {kind: row-remap, gpu: 0, at_s: 9, type: uncorrectable, failed: true}\n",
      "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(HealthAt(*s, 0, 1).clock_event_reasons, 0u);
  EXPECT_EQ(HealthAt(*s, 0, 3).clock_event_reasons, ClockEventReasonBit("sw_thermal"));
  EXPECT_EQ(HealthAt(*s, 0, 4).clock_event_reasons, 0u) << "to_s is exclusive";
  EXPECT_EQ(HealthAt(*s, 0, 3).ecc_uncorrected, 2u);
  EXPECT_EQ(HealthAt(*s, 0, 7).ecc_uncorrected, 3u) << "counts add up";
  EXPECT_TRUE(HealthAt(*s, 0, 5).remap_pending);
  EXPECT_FALSE(HealthAt(*s, 0, 8).remap_pending) << "applied at the reset";
  EXPECT_EQ(HealthAt(*s, 0, 8).remapped_correctable, 4u);
  EXPECT_FALSE(HealthAt(*s, 0, 8).remap_failed);
  EXPECT_TRUE(HealthAt(*s, 0, 9).remap_failed);
  EXPECT_TRUE(s->faults.size() == 5 && IsHealthEvent(s->faults[0].kind));
}

// page-retire: its cause, a page count the driver's table can hold, to_s only ending a pending
// retirement, no other kind's keys; counts stay after the reboot that ends pending.
TEST(Loader, PageRetireEvents) {
  const std::string faults = std::string(kMinimal) + "\nfaults:\n  - ";
  EXPECT_THAT(
      ErrorOf(faults + "{kind: page-retire, gpu: 0, at_s: 5, cause: triple-bit, pages: 1}\n"),
      HasSubstr("'triple-bit' (expected single-bit or double-bit)"));
  EXPECT_THAT(
      ErrorOf(faults + "{kind: page-retire, gpu: 0, at_s: 5, cause: double-bit, pages: 65}\n"),
      HasSubstr("must be in [1, 64]"));
  EXPECT_THAT(
      ErrorOf(faults + "{kind: page-retire, gpu: 0, at_s: 5, cause: double-bit, pages: 0}\n"),
      HasSubstr("must be in [1, 64]"));
  EXPECT_THAT(ErrorOf(faults + "{kind: page-retire, gpu: 0, at_s: 5, to_s: 9, cause: double-bit, "
                               "pages: 1}\n"),
              HasSubstr("give pending: true"));
  EXPECT_THAT(ErrorOf(faults + "{kind: page-retire, gpu: 0, at_s: 5, cause: double-bit, pages: 1, "
                               "rows: 2}\n"),
              HasSubstr("rows"));
  EXPECT_THAT(ErrorOf(faults + "{kind: page-retire, gpu: 0, cause: double-bit, pages: 1}\n"),
              HasSubstr("at_s"));
  EXPECT_THAT(
      ErrorOf(faults + "{kind: page-retire, gpu: 0, at_s: 1, cause: single-bit, pages: 40}\n"
                       "  - {kind: page-retire, gpu: 0, at_s: 2, cause: single-bit, pages: 30}\n"),
      HasSubstr("faults[1].pages: more than 64 single-bit pages retired on GPU 0 in all"));
  auto s = ParseScenario(faults +
                             "{kind: page-retire, gpu: 0, at_s: 2, cause: single-bit, pages: 3}\n"
                             "  - {kind: page-retire, gpu: 0, at_s: 4, to_s: 7, cause: double-bit, "
                             "pages: 1, pending: true}\n",
                         "t.yaml");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(HealthAt(*s, 0, 1).retired_single_bit, 0u);
  EXPECT_EQ(HealthAt(*s, 0, 3).retired_single_bit, 3u);
  EXPECT_FALSE(HealthAt(*s, 0, 3).retire_pending);
  EXPECT_TRUE(HealthAt(*s, 0, 5).retire_pending);
  EXPECT_EQ(HealthAt(*s, 0, 5).retired_double_bit, 1u);
  EXPECT_FALSE(HealthAt(*s, 0, 7).retire_pending) << "the reboot at to_s retired it";
  EXPECT_EQ(HealthAt(*s, 0, 7).retired_double_bit, 1u);
}

TEST(Loader, ExclusiveWithReplicas) {
  EXPECT_THAT(ErrorOf(Replace(kMinimal, "    model: Test GPU",
                              "    model: Test GPU\n    sharing: {mode: exclusive, replicas: 2}")),
              HasSubstr("exactly 1 replica"));
}

TEST(Resolve, NameFileAndUnknown) {
  const std::vector<std::string> dirs{testing::SourceDir() + "/scenarios"};
  auto by_name = ResolveScenarioPath("exclusive", dirs);
  ASSERT_TRUE(by_name) << by_name.error().message;
  EXPECT_TRUE(std::filesystem::exists(*by_name));
  auto by_file = ResolveScenarioPath(testing::ScenarioPath("mig-h200"), dirs);
  ASSERT_TRUE(by_file);
  auto unknown = ResolveScenarioPath("no-such-scenario", dirs);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("available: dra-h100, exclusive, mig-a100, "
                                                 "mig-h200, mps-a100, node-8gpu, timeslice-h100"));
}

}  // namespace
}  // namespace gpumeter::scenario

namespace gpumeter::scenario {
namespace {

// Memory traffic per process: a constant or points, as the SM duty; named where it is wrong.
TEST(Loader, MemoryTrafficIsAConstantOrPointsInRange) {
  const std::string sm = "sm_pct: 50}";
  auto ok = ParseScenario(Replace(kMinimal, sm, "sm_pct: 50, mem_pct: 35}"), "test.yaml");
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_TRUE(ok->processes[0].usage[0].memory_duty);
  EXPECT_DOUBLE_EQ(ok->processes[0].usage[0].memory_duty->at(0).duty, 0.35);
  auto none = ParseScenario(kMinimal, "test.yaml");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->processes[0].usage[0].memory_duty) << "unset: half the SM duty";
  auto points = ParseScenario(
      Replace(kMinimal, sm, "sm_pct: 50, mem: [{at_s: 0, pct: 10}, {at_s: 7.3, pct: 80}]}"),
      "test.yaml");
  ASSERT_TRUE(points) << points.error().message;
  EXPECT_EQ(points->processes[0].usage[0].memory_duty->size(), 2u);
  EXPECT_THAT(ErrorOf(Replace(kMinimal, sm, "sm_pct: 50, mem_pct: 101}")), HasSubstr("mem_pct"));
  EXPECT_THAT(ErrorOf(Replace(kMinimal, sm, "sm_pct: 50, mem_pct: 5, mem: []}")),
              HasSubstr("give either mem_pct or mem"));
  EXPECT_THAT(
      ErrorOf(Replace(kMinimal, sm, "sm_pct: 50, mem: [{at_s: 5, pct: 1}, {at_s: 2, pct: 3}]}")),
      HasSubstr("increasing time order"));
}

}  // namespace
}  // namespace gpumeter::scenario
