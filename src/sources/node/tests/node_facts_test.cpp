// The Node object as clouds label it: instance type, region, zone, capacity type, provider ID and
// the GPU Feature Discovery labels; what is not a Node is refused, naming the field.
#include "sources/node/node_facts.h"

#include <gtest/gtest.h>

namespace gpumeter::k8s {
namespace {

std::string NodeJson(const std::string& labels, const std::string& provider = "") {
  return R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"ip-10-0-1-17","labels":{)" +
         labels + "}}" + (provider.empty() ? "" : R"(,"spec":{"providerID":")" + provider + "\"}") +
         "}";
}

TEST(NodeFacts, AnEksNodeWithKarpenterAndGfdLabels) {
  NodeFacts f;
  ASSERT_TRUE(f.ApplyList(NodeJson(
      R"("node.kubernetes.io/instance-type":"p5.48xlarge","topology.kubernetes.io/region":"us-east-1",)"
      R"("topology.kubernetes.io/zone":"us-east-1a","karpenter.sh/capacity-type":"spot",)"
      R"("nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"time-slicing",)"
      R"("nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-SHARED","kubernetes.io/os":"linux")",
      "aws:///us-east-1a/i-0abc123def4567890")));
  EXPECT_EQ(f.name, "ip-10-0-1-17");
  EXPECT_EQ(f.cloud, "aws");
  EXPECT_EQ(f.provider_id, "aws:///us-east-1a/i-0abc123def4567890");
  EXPECT_EQ(f.instance_type, "p5.48xlarge");
  EXPECT_EQ(f.region, "us-east-1");
  EXPECT_EQ(f.zone, "us-east-1a");
  EXPECT_EQ(f.capacity_type, "spot");
  EXPECT_EQ(f.gpu_labels.size(), 3u) << "only nvidia.com/ labels are kept";
  EXPECT_EQ(f.gpu_labels.at("nvidia.com/gpu.replicas"), "4");
}

TEST(NodeFacts, CapacityTypeFromEachPlatformsLabel) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("eks.amazonaws.com/capacityType":"ON_DEMAND")", "on-demand"},
      {R"("eks.amazonaws.com/capacityType":"SPOT")", "spot"},
      {R"("cloud.google.com/gke-spot":"true")", "spot"},
      {R"("cloud.google.com/gke-preemptible":"true")", "spot"},
      {R"("kubernetes.azure.com/scalesetpriority":"spot")", "spot"},
      {R"("lifecycle":"EC2Spot")", "spot"},
      {R"("karpenter.sh/capacity-type":"reserved")", "reserved"},
      {R"("kubernetes.io/os":"linux")", ""},  // nothing says: unknown, not on-demand
  };
  for (const auto& [labels, want] : cases) {
    NodeFacts f;
    ASSERT_TRUE(f.ApplyList(NodeJson(labels))) << labels;
    EXPECT_EQ(f.capacity_type, want) << labels;
  }
}

TEST(NodeFacts, GkeAndAksProviderIdsAndTheBetaLabels) {
  NodeFacts f;
  ASSERT_TRUE(f.ApplyList(NodeJson(R"("beta.kubernetes.io/instance-type":"a3-highgpu-8g",)"
                                   R"("failure-domain.beta.kubernetes.io/region":"us-central1")",
                                   "gce://my-project/us-central1-a/gke-pool-1-abc")));
  EXPECT_EQ(f.cloud, "gcp");
  EXPECT_EQ(f.instance_type, "a3-highgpu-8g");
  EXPECT_EQ(f.region, "us-central1");
  ASSERT_TRUE(f.ApplyList(
      NodeJson(R"("node.kubernetes.io/instance-type":"Standard_ND96isr_H100_v5")",
               "azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/"
               "virtualMachineScaleSets/aks-gpu-123/virtualMachines/0")));
  EXPECT_EQ(f.cloud, "azure");
  EXPECT_EQ(f.instance_type, "Standard_ND96isr_H100_v5");
}

TEST(NodeFacts, GkesNumericInstanceIdComesFromItsAnnotation) {
  NodeFacts f;
  ASSERT_TRUE(f.ApplyList(
      R"({"kind":"Node","metadata":{"name":"gke-a","annotations":{"container.googleapis.com/instance_id":"4520988123456789012","other":"x"}},"spec":{"providerID":"gce://p/z/gke-a"}})"));
  EXPECT_EQ(f.instance_id, "4520988123456789012");
  NodeFacts g;
  ASSERT_TRUE(g.ApplyList(R"({"kind":"Node","metadata":{"name":"n"}})"));
  EXPECT_EQ(g.instance_id, "");
  auto bad = g.ApplyList(
      R"({"kind":"Node","metadata":{"name":"n","annotations":{"container.googleapis.com/instance_id":7}}})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("container.googleapis.com/instance_id"), std::string::npos);
}

TEST(NodeFacts, WhatIsNotANodeIsRefusedNamingTheField) {
  const std::pair<std::string, std::string> cases[] = {
      {"{not json", "Node: not valid JSON: parse error at line 1, column 3"},
      {R"({"kind":"Pod","metadata":{"name":"x"}})", "Node: kind is not Node"},
      {R"({"kind":1,"metadata":{"name":"x"}})", "Node: kind is not Node"},
      {R"([{"kind":"Node"}])", "Node: kind is not Node"},
      {R"({"kind":"Node","metadata":{"name":"x","annotations":)" + std::string(40, '[') +
           std::string(40, ']') + "}}",
       "Node: nested deeper than 32 levels"},
      {R"({"kind":"Node","metadata":{}})", "Node: metadata.name missing or not a string"},
      {R"({"kind":"Node","metadata":{"name":"x","labels":{"a":1}}})",
       "Node: metadata.labels['a'] is not a string"},
      {R"({"kind":"Node","metadata":{"name":"x","labels":{"a":"1","a":"2"}}})",
       "Node: duplicate key 'a'"},
      {R"({"kind":"Node","metadata":{"name":"x"},"spec":{"providerID":7}})",
       "Node: spec.providerID is not a string"},
  };
  for (const auto& [body, want] : cases) {
    NodeFacts f;
    const auto r = f.ApplyList(body);
    ASSERT_FALSE(r) << body;
    // A parse error goes on to say what the parser read.
    EXPECT_EQ(r.error().message.substr(0, want.size()), want) << r.error().message;
  }
  // The same key in two different objects is not a duplicate.
  NodeFacts f;
  EXPECT_TRUE(f.ApplyList(R"({"kind":"Node","metadata":{"name":"x","labels":{"name":"y"}}})"));
}

}  // namespace
}  // namespace gpumeter::k8s
