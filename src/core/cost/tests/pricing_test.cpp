#include "core/cost/pricing.h"

#include <gtest/gtest.h>

namespace gpumeter::cost {
namespace {

TEST(Pricing, DefaultTableMatchesNvmlNamesByWords) {
  const auto p = Pricing::Defaults();
  const std::pair<const char*, double> cases[] = {
      {"NVIDIA H100 80GB HBM3", 6.88},
      {"NVIDIA H200", 7.91},
      {"NVIDIA A100-SXM4-80GB", 3.43},
      {"NVIDIA A100-SXM4-40GB", 2.74},
      {"NVIDIA A100-PCIE-40GB", 2.74},
      {"NVIDIA L4", 0.80},
      {"Tesla T4", 0.53},
      {"NVIDIA B200", 14.24},
  };
  for (const auto& [model, price] : cases) {
    const auto q = p.Quote(model);
    ASSERT_TRUE(q) << model;
    EXPECT_DOUBLE_EQ(q->per_gpu_hour, price) << model;
    EXPECT_TRUE(q->flagged) << model << ": a default price is flagged";
  }
  EXPECT_FALSE(p.Quote("NVIDIA L40S")) << "L40S is not an L4";
  EXPECT_FALSE(p.Quote("NVIDIA A100 (size unknown)")) << "no A100 price without its memory size";
}

TEST(Pricing, FileOverridesDefaultsAndAppliesTheDiscount) {
  const auto p = Pricing::Parse(R"(
currency: EUR
discount: 0.25
gpu_models:
  A100: 2.00
  "NVIDIA H100 80GB HBM3": 4.00
fallback_per_gpu_hour: 1.00
)",
                                "pricing.yaml");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->currency(), "EUR");
  const auto a100 =
      p->Quote("NVIDIA A100-SXM4-80GB");  // the file's "A100" beats the default "A100 80GB"
  ASSERT_TRUE(a100);
  EXPECT_DOUBLE_EQ(a100->per_gpu_hour, 1.50);
  EXPECT_FALSE(a100->flagged);
  EXPECT_NE(a100->source.find("pricing.yaml"), std::string::npos);
  EXPECT_DOUBLE_EQ(p->Quote("NVIDIA H100 80GB HBM3")->per_gpu_hour, 3.00);
  EXPECT_DOUBLE_EQ(p->Quote("NVIDIA H200")->per_gpu_hour, 7.91 * 0.75);  // defaults kept
  const auto unknown = p->Quote("Some Future GPU");
  ASSERT_TRUE(unknown);
  EXPECT_DOUBLE_EQ(unknown->per_gpu_hour, 0.75);
  EXPECT_TRUE(unknown->flagged);
  EXPECT_NE(unknown->source.find("Some Future GPU"), std::string::npos);
}

TEST(Pricing, NodePriceSplitByPresetOrRatio) {
  const auto p = Pricing::Parse(R"(
defaults: false
nodes:
  p5.48xlarge: {price_per_hour: 55.04, gpus: 8, split: aws-scad}
  custom.8x: {price_per_hour: 10, gpus: 4, split: "0.8"}
)",
                                "pricing.yaml");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_DOUBLE_EQ(p->Quote("NVIDIA H100 80GB HBM3", "p5.48xlarge")->per_gpu_hour, 55.04 * 0.9 / 8);
  EXPECT_DOUBLE_EQ(p->Quote("anything", "custom.8x")->per_gpu_hour, 2.0);
  EXPECT_FALSE(p->Quote("NVIDIA H100 80GB HBM3")) << "defaults: false drops the table, no fallback";
}

TEST(Pricing, NodesMapToTheirInstanceTypes) {
  const auto p = Pricing::Parse(R"(
nodes:
  p5.48xlarge: {price_per_hour: 55.04, gpus: 8, split: aws-scad}
instance_types:
  gpu-node-1: p5.48xlarge
)",
                                "pricing.yaml");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->InstanceTypeOf("gpu-node-1"), "p5.48xlarge");
  EXPECT_EQ(p->InstanceTypeOf("gpu-node-2"), "");
  EXPECT_DOUBLE_EQ(p->Quote("NVIDIA H100 80GB HBM3", p->InstanceTypeOf("gpu-node-1"))->per_gpu_hour,
                   55.04 * 0.9 / 8);
  EXPECT_DOUBLE_EQ(p->Quote("NVIDIA H100 80GB HBM3", p->InstanceTypeOf("gpu-node-2"))->per_gpu_hour,
                   6.88);  // unmapped: by model
}

TEST(Pricing, BadFilesAreClearErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpu_models: {H100: -1}",
       "gpu_models.H100: a price per hour must be a number in [0, 10000]"},
      {"gpu_models: {H100: 1e308}",
       "gpu_models.H100: a price per hour must be a number in [0, 10000]"},
      {"gpu_models: {H100: .inf}",
       "gpu_models.H100: a price per hour must be a number in [0, 10000]"},
      {"discount: -0.1", "discount: a discount is a fraction in [0, 1)"},
      {"gpu_models: {H100: 1, H100: 2}", "duplicate key 'H100'"},
      {"gpu_models: {H100: cheap}", "gpu_models.H100: not a number"},
      {"discount: 1.5", "discount is a fraction"},
      {"currency: dollars", "ISO 4217"},
      {"nodes: {p5: {price_per_hour: 5, gpus: 8, split: \"1.5\"}}", "must be in (0, 1]"},
      {"nodes: {p5: {price_per_hour: 5, gpus: 8, split: half}}", "neither a preset"},
      {"nodes: {p5: {price_per_hour: 5, gpus: 0, split: aws-scad}}", "gpus: a whole number"},
      {"nodes: {p5: {price_per_hour: 5}}", "needs price_per_hour, gpus and split"},
      {"gpu_model: {H100: 1}", "unknown key 'gpu_model'"},
      {"instance_types: {node-a: p5.48xlarge}", "'p5.48xlarge' has no entry under nodes"},
      {"[1, 2]", "expected a mapping"},
      {"gpu_models: {H100: [", "not YAML"},
  };
  for (const auto& [text, want] : cases) {
    const auto p = Pricing::Parse(text, "bad.yaml");
    ASSERT_FALSE(p) << text;
    EXPECT_NE(p.error().message.find("bad.yaml"), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find(want), std::string::npos)
        << text << " → " << p.error().message;
  }
}

// A node's instance type prices its GPUs from the bundled table without a pricing file: the
// instance's price over its GPU devices, named with its source and the node's region where the
// table's differs; a file's model price still wins, and a mislabelled node is priced by model.
TEST(Pricing, TheInstanceTypePricesAGpuWithoutAFile) {
  const auto d = Pricing::Defaults();
  const auto q = d.Quote("NVIDIA H100 80GB HBM3", "p5.48xlarge", "us-east-1");
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(q->per_gpu_hour, 55.04 / 8);
  EXPECT_TRUE(q->flagged);
  EXPECT_NE(q->source.find("aws p5.48xlarge on-demand 55.04/h over 8 GPUs"), std::string::npos)
      << q->source;
  EXPECT_EQ(q->source.find("the node is in"), std::string::npos);
  const auto gcp = d.Quote("NVIDIA H100 80GB HBM3", "a3-highgpu-8g", "europe-west4");
  ASSERT_TRUE(gcp);
  EXPECT_DOUBLE_EQ(gcp->per_gpu_hour, 88.4899999 / 8);
  EXPECT_NE(gcp->source.find("the node is in europe-west4"), std::string::npos) << gcp->source;
  // Azure's labels come in either case.
  ASSERT_TRUE(d.Quote("NVIDIA A100 80GB PCIe", "standard_nc24ads_a100_v4"));
  EXPECT_DOUBLE_EQ(d.Quote("NVIDIA A100 80GB PCIe", "standard_nc24ads_a100_v4")->per_gpu_hour,
                   3.673);
  // A fractional L4 (g6f): its one device is priced at the instance's price.
  EXPECT_DOUBLE_EQ(d.Quote("NVIDIA L4", "g6f.2xlarge")->per_gpu_hour, 0.68888);
  // The label says H100, NVML says A100: the model decides.
  EXPECT_DOUBLE_EQ(d.Quote("NVIDIA A100-SXM4-80GB", "p5.48xlarge")->per_gpu_hour, 3.43);
  // An unknown type: the model table.
  EXPECT_DOUBLE_EQ(d.Quote("NVIDIA H100 80GB HBM3", "x9.huge")->per_gpu_hour, 6.88);
  // A file's model price wins; without the defaults the table is not used either.
  const auto file = *Pricing::Parse("gpu_models: {H100: 5.0}\n", "p.yaml");
  EXPECT_DOUBLE_EQ(file.Quote("NVIDIA H100 80GB HBM3", "p5.48xlarge")->per_gpu_hour, 5.0);
  const auto bare = *Pricing::Parse("gpu_models: {A100: 2.0}\ndefaults: false\n", "p.yaml");
  EXPECT_FALSE(bare.Quote("NVIDIA H100 80GB HBM3", "p5.48xlarge"));
}

}  // namespace
}  // namespace gpumeter::cost
