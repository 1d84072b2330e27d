#include "core/cost/bill_match.h"

#include <gtest/gtest.h>

namespace gpumeter::cost {
namespace {

using Ids = std::vector<size_t>;

TEST(NodeMatcher, AwsInstanceIdsMatchAsBareIdsOrArns) {
  const NodeMatcher m({{"ip-10-0-1-5", "aws:///us-east-1a/i-0123456789abcdef0", ""},
                       {"ip-10-0-1-6", "aws:///us-east-1b/i-0fedcba9876543210", ""}});
  EXPECT_EQ(m.Match("i-0123456789abcdef0"), Ids{0});
  EXPECT_EQ(m.Match("arn:aws:ec2:us-east-1:123456789012:instance/i-0fedcba9876543210"), Ids{1});
  EXPECT_EQ(m.Match("i-0123456789abcdef1"), Ids{});  // another instance
  EXPECT_EQ(m.Match("vol-0123456789abcdef0"), Ids{});
  EXPECT_EQ(m.Match(""), Ids{});
  EXPECT_TRUE(NodeMatcher::LooksLikeVm("i-0123456789abcdef1"));
  EXPECT_FALSE(NodeMatcher::LooksLikeVm("vol-0123456789abcdef0"));
  EXPECT_FALSE(NodeMatcher::LooksLikeVm("arn:aws:savingsplans::123456789012:savingsplan/sp-1"));
}

TEST(NodeMatcher, GceByProjectZoneAndNameOrByGkesNumericId) {
  const NodeMatcher m({{"gke-a", "gce://proj/us-central1-a/gke-pool-a-1", "4520988123456789012"},
                       {"gke-b", "gce://proj/us-central1-b/gke-pool-b-1", ""}});
  EXPECT_EQ(
      m.Match("//compute.googleapis.com/projects/proj/zones/us-central1-a/instances/gke-pool-a-1"),
      Ids{0});
  EXPECT_EQ(m.Match("//compute.googleapis.com/projects/proj/zones/us-central1-a/instances/"
                    "4520988123456789012"),
            Ids{0});
  EXPECT_EQ(m.Match("4520988123456789012"), Ids{0});
  // The project by number: the numeric id alone is unique.
  EXPECT_EQ(m.Match("//compute.googleapis.com/projects/123456789/zones/us-central1-a/instances/"
                    "4520988123456789012"),
            Ids{0});
  // A bare name may be the VM's boot disk, and other services' instances are not VMs.
  EXPECT_EQ(m.Match("gke-pool-b-1"), Ids{});
  EXPECT_EQ(m.Match("projects/proj/zones/us-central1-b/instances/gke-pool-b-1"), Ids{1});
  EXPECT_EQ(m.Match("//cloudsql.googleapis.com/projects/proj/instances/gke-pool-b-1"), Ids{});
  EXPECT_FALSE(NodeMatcher::LooksLikeVm("//cloudsql.googleapis.com/projects/proj/instances/db-1"));
  EXPECT_FALSE(NodeMatcher::LooksLikeVm("projects/proj/locations/us-central1/instances/redis"));
  EXPECT_TRUE(NodeMatcher::LooksLikeVm("projects/proj/zones/z/instances/other"));
  // The same name in another project or zone is another VM.
  EXPECT_EQ(m.Match("//compute.googleapis.com/projects/other/zones/us-central1-a/instances/"
                    "gke-pool-a-1"),
            Ids{});
  EXPECT_EQ(m.Match("projects/proj/zones/us-central1-c/instances/gke-pool-b-1"), Ids{});
  EXPECT_EQ(m.Match("4520988123456789013"), Ids{});
}

TEST(NodeMatcher, TheSameGceNameInTwoProjectsIsTwoVms) {
  const NodeMatcher m({{"a", "gce://p1/z/pool-1", ""}, {"b", "gce://p2/z/pool-1", ""}});
  EXPECT_EQ(m.Match("pool-1"), Ids{});
  EXPECT_EQ(m.Match("//compute.googleapis.com/projects/p2/zones/z/instances/pool-1"), Ids{1});
}

TEST(NodeMatcher, AzureInstancesCaseInsensitivelyAndAScaleSetsLineNamesAllItsNodes) {
  const std::string set =
      "/subscriptions/0000-11/resourceGroups/MC_rg_aks_eastus/providers/Microsoft.Compute/"
      "virtualMachineScaleSets/aks-gpu-12345678-vmss";
  const NodeMatcher m({{"aks-gpu-0", "azure://" + set + "/virtualMachines/0", ""},
                       {"aks-gpu-1", "azure://" + set + "/virtualMachines/1", ""},
                       {"vm",
                        "azure:///subscriptions/0000-11/resourceGroups/rg/providers/"
                        "Microsoft.Compute/virtualMachines/gpu-box",
                        ""}});
  std::string lower = set;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_EQ(m.Match(set + "/virtualMachines/1"), Ids{1});
  EXPECT_EQ(m.Match(lower + "/virtualmachines/0"), Ids{0});
  EXPECT_EQ(m.Match(set), (Ids{0, 1}));
  EXPECT_EQ(m.Match(lower + "/"), (Ids{0, 1}));
  EXPECT_EQ(m.Match("/subscriptions/0000-11/resourcegroups/RG/providers/microsoft.compute/"
                    "virtualmachines/GPU-BOX"),
            Ids{2});
  EXPECT_EQ(m.Match(set + "2"), Ids{});  // another scale set
  EXPECT_EQ(m.Match(set + "/virtualMachines/2"), Ids{});
  EXPECT_TRUE(NodeMatcher::LooksLikeVm(set + "/virtualMachines/2"));
  EXPECT_FALSE(NodeMatcher::LooksLikeVm(
      "/subscriptions/0000-11/resourceGroups/rg/providers/Microsoft.Compute/disks/d1"));
}

TEST(NodeMatcher, NodesWithoutAProviderIdOrOfAnUnknownCloudMatchNothing) {
  const NodeMatcher m({{"kind-worker", "", ""}, {"metal", "baremetal://rack1/n1", ""}});
  EXPECT_EQ(m.Match("kind-worker"), Ids{});
  EXPECT_EQ(m.Match("n1"), Ids{});
}

}  // namespace
}  // namespace gpumeter::cost
