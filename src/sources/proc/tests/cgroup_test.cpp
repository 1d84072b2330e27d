// Every literal line of kubernetes-node.md §4.3, plus malformed files.
#include "sources/proc/cgroup.h"

#include <gtest/gtest.h>

namespace gpumeter::k8s {
namespace {

constexpr const char* kId1 = "bacb920470900725e0aa7d914fee5eb0854315448b024b6b8420ad8429c607ba";
constexpr const char* kId2 = "40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9";
constexpr const char* kId3 = "f33f47b0db740bb647cb3e7ac62d96c74966dbb99cbfaf4563bfd42d387e8b44";

struct Case {
  const char* name;
  std::string file;
  std::optional<std::string> pod_uid;
  bool static_pod;
  std::optional<std::string> container_id;
  ContainerRuntime runtime;
  QosClass qos;
};

class ReferenceLines : public ::testing::TestWithParam<Case> {};

TEST_P(ReferenceLines, Parse) {
  const auto& c = GetParam();
  const auto r = ParseProcCgroup(c.file);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->pod_uid, c.pod_uid);
  EXPECT_EQ(r->static_pod, c.static_pod);
  EXPECT_EQ(r->container_id, c.container_id);
  EXPECT_EQ(r->runtime, c.runtime) << ToString(r->runtime);
  EXPECT_EQ(r->qos, c.qos) << ToString(r->qos);
}

const std::string kV1Systemd =
    "12:memory:/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-poddde1244b_5bb5_4297_b544_85f3bc0d80bf.slice/"
    "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9.scope\n"
    "11:devices:/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-poddde1244b_5bb5_4297_b544_85f3bc0d80bf.slice/"
    "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9.scope\n"
    "1:name=systemd:/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-poddde1244b_5bb5_4297_b544_85f3bc0d80bf.slice/"
    "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9.scope\n";

INSTANTIATE_TEST_SUITE_P(
    KubernetesNode43, ReferenceLines,
    ::testing::Values(
        Case{"v2_systemd_containerd_besteffort",
             "0::/kubepods.slice/kubepods-besteffort.slice/"
             "kubepods-besteffort-pod4c9f1974_5c46_44c2_b42f_3bbf0e98eef9.slice/"
             "cri-containerd-bacb920470900725e0aa7d914fee5eb0854315448b024b6b8420ad8429c607ba."
             "scope\n",
             "4c9f1974-5c46-44c2-b42f-3bbf0e98eef9", false, kId1, ContainerRuntime::kContainerd,
             QosClass::kBestEffort},
        Case{"v2_systemd_containerd_burstable",
             "0::/kubepods.slice/kubepods-burstable.slice/"
             "kubepods-burstable-poddde1244b_5bb5_4297_b544_85f3bc0d80bf.slice/"
             "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9."
             "scope\n",
             "dde1244b-5bb5-4297-b544-85f3bc0d80bf", false, kId2, ContainerRuntime::kContainerd,
             QosClass::kBurstable},
        Case{"v2_systemd_crio_burstable",
             "0::/kubepods.slice/kubepods-burstable.slice/"
             "kubepods-burstable-pod042efd86_1f3b_4f2f_8736_f31c58e95bbc.slice/"
             "crio-f33f47b0db740bb647cb3e7ac62d96c74966dbb99cbfaf4563bfd42d387e8b44.scope\n",
             "042efd86-1f3b-4f2f-8736-f31c58e95bbc", false, kId3, ContainerRuntime::kCrio,
             QosClass::kBurstable},
        Case{"v2_systemd_crio_guaranteed",
             "0::/kubepods.slice/kubepods-pod042efd86_1f3b_4f2f_8736_f31c58e95bbc.slice/"
             "crio-f33f47b0db740bb647cb3e7ac62d96c74966dbb99cbfaf4563bfd42d387e8b44.scope\n",
             "042efd86-1f3b-4f2f-8736-f31c58e95bbc", false, kId3, ContainerRuntime::kCrio,
             QosClass::kGuaranteed},
        Case{"v2_systemd_cri_dockerd",
             "0::/kubepods.slice/kubepods-besteffort.slice/"
             "kubepods-besteffort-pod4c9f1974_5c46_44c2_b42f_3bbf0e98eef9.slice/"
             "docker-b1eba9dfaeba29d8b80532a574a03ea3cac29384327f339c26da13649e2120df.scope\n",
             "4c9f1974-5c46-44c2-b42f-3bbf0e98eef9", false,
             "b1eba9dfaeba29d8b80532a574a03ea3cac29384327f339c26da13649e2120df",
             ContainerRuntime::kDocker, QosClass::kBestEffort},
        Case{"v2_cgroupfs_containerd_besteffort",
             "0::/kubepods/besteffort/pod05e102bf-8744-4942-a241-9b6f07983a53/"
             "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8\n",
             "05e102bf-8744-4942-a241-9b6f07983a53", false,
             "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8",
             ContainerRuntime::kUnknown, QosClass::kBestEffort},
        Case{"v2_cgroupfs_crio",
             "0::/kubepods/besteffort/pod897277d4-5e6f-4999-a976-b8340e8d075e/"
             "crio-a4d6b686848a610472a2eed3ae20d4d64b6b4819feb9fdfc7fd7854deaf59ef3\n",
             "897277d4-5e6f-4999-a976-b8340e8d075e", false,
             "a4d6b686848a610472a2eed3ae20d4d64b6b4819feb9fdfc7fd7854deaf59ef3",
             ContainerRuntime::kCrio, QosClass::kBestEffort},
        Case{"static_pod_cgroupfs",
             "0::/kubepods/burstable/podb53dfa9e2dc9b890f7fadb2770857b03/"
             "40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9\n",
             "b53dfa9e2dc9b890f7fadb2770857b03", true, kId2, ContainerRuntime::kUnknown,
             QosClass::kBurstable},
        Case{"static_pod_systemd",
             "0::/kubepods.slice/kubepods-burstable.slice/"
             "kubepods-burstable-pod7260904bbd08e72e4dff95d9fccd2ee8.slice/"
             "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9."
             "scope\n",
             "7260904bbd08e72e4dff95d9fccd2ee8", true, kId2, ContainerRuntime::kContainerd,
             QosClass::kBurstable},
        Case{"kind_nested_kubelet",
             "0::/docker/8afe480d66074930353da456a1344caca810fe31c1e31f6e08c95a66887235d6/"
             "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
             "kubelet-kubepods-besteffort-pod44c76ce5_f953_4bd3_bc89_12621681af49.slice/"
             "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9."
             "scope\n",
             "44c76ce5-f953-4bd3-bc89-12621681af49", false, kId2, ContainerRuntime::kContainerd,
             QosClass::kBestEffort},
        Case{"v1_systemd_containerd", kV1Systemd, "dde1244b-5bb5-4297-b544-85f3bc0d80bf", false,
             kId2, ContainerRuntime::kContainerd, QosClass::kBurstable},
        Case{"v1_cgroupfs_docker",
             "11:devices:/kubepods/burstable/pod05e102bf-8744-4942-a241-9b6f07983a53/"
             "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8\n",
             "05e102bf-8744-4942-a241-9b6f07983a53", false,
             "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8",
             ContainerRuntime::kUnknown, QosClass::kBurstable},
        Case{"private_namespace_leaf_only",
             "0::/../"
             "cri-containerd-40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9."
             "scope\n",
             std::nullopt, false, kId2, ContainerRuntime::kContainerd, QosClass::kUnknown},
        Case{"private_namespace_pod_and_leaf",
             "0::/../../pode039200acb850c82bb901653cc38ff6e/"
             "40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9\n",
             "e039200acb850c82bb901653cc38ff6e", true, kId2, ContainerRuntime::kUnknown,
             QosClass::kUnknown},
        Case{"trailing_component_after_scope",
             "0::/kubepods.slice/kubepods-pod042efd86_1f3b_4f2f_8736_f31c58e95bbc.slice/"
             "docker-b1eba9dfaeba29d8b80532a574a03ea3cac29384327f339c26da13649e2120df.scope/init\n",
             "042efd86-1f3b-4f2f-8736-f31c58e95bbc", false,
             "b1eba9dfaeba29d8b80532a574a03ea3cac29384327f339c26da13649e2120df",
             ContainerRuntime::kDocker, QosClass::kGuaranteed},
        Case{"containerd_colon_form",
             "0::/"
             "kubepods-besteffort-pod4c9f1974_5c46_44c2_b42f_3bbf0e98eef9.slice:cri-containerd:"
             "bacb920470900725e0aa7d914fee5eb0854315448b024b6b8420ad8429c607ba\n",
             "4c9f1974-5c46-44c2-b42f-3bbf0e98eef9", false, kId1, ContainerRuntime::kContainerd,
             QosClass::kBestEffort},
        Case{"host_service", "0::/system.slice/nvidia-persistenced.service\n", std::nullopt, false,
             std::nullopt, ContainerRuntime::kUnknown, QosClass::kUnknown},
        Case{"hybrid_root_v2_prefers_v1",
             "12:memory:/kubepods/pod05e102bf-8744-4942-a241-9b6f07983a53/"
             "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8\n0::/\n",
             "05e102bf-8744-4942-a241-9b6f07983a53", false,
             "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8",
             ContainerRuntime::kUnknown, QosClass::kGuaranteed}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(Cgroup, CrioConmonIsNotTheContainer) {
  const auto r = ParseProcCgroup(
      "0::/kubepods.slice/kubepods-pod042efd86_1f3b_4f2f_8736_f31c58e95bbc.slice/"
      "crio-conmon-f33f47b0db740bb647cb3e7ac62d96c74966dbb99cbfaf4563bfd42d387e8b44.scope\n");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->container_id);
  EXPECT_EQ(r->pod_uid, "042efd86-1f3b-4f2f-8736-f31c58e95bbc")
      << "a pod-level process of that pod";
}

TEST(Cgroup, NearMissesAreNotIds) {
  for (
      const char* path : {
          "/kubepods/podnot-a-uid/f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8",
          "/kubepods/besteffort/pod05e102bf-8744-4942-a241-9b6f07983a5/x",    // UID one short
          "/kubepods/besteffort/pod05E102BF-8744-4942-a241-9b6f07983a53/x",   // upper case
          "/kubepods/besteffort/ipod05e102bf-8744-4942-a241-9b6f07983a53/x",  // "pod" inside a word
      }) {
    EXPECT_FALSE(ParseCgroupPath(path).pod_uid) << path;
  }
  EXPECT_FALSE(ParseCgroupPath("/kubepods/podx/cri-containerd-40c03570.scope").container_id)
      << "short ID";
  EXPECT_FALSE(ParseCgroupPath("/x/docker-" + std::string(64, 'g') + ".scope").container_id)
      << "not hex";
}

TEST(Cgroup, MalformedFilesAreClearErrors) {
  struct Bad {
    std::string file, expect;
  };
  for (const auto& b : std::vector<Bad>{
           {"", "no usable line"},
           {"garbage\n", "cgroup line 1 'garbage': expected hierarchy-ID:controllers:path"},
           {"0::/ok\n5:cpu\n", "cgroup line 2 '5:cpu'"},
           {"0::relative\n", "a path not starting with '/'"},
           {":memory:/x\n", "empty hierarchy ID"},
           {"3:hugetlb:/kubepods/x\n", "no usable line"},
       }) {
    const auto r = ParseProcCgroup(b.file);
    ASSERT_FALSE(r) << b.file;
    EXPECT_NE(r.error().message.find(b.expect), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace gpumeter::k8s
