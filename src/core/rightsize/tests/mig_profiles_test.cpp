// The MIG profile tables against NVIDIA's MIG user guide ("Supported MIG Profiles"): for A100,
// H100 and H200, a 1g profile has 1/8 of the memory and 1/7 of the SMs (7 instances), the
// doubled-memory 1g has 2/8 and 1/7 (4), 2g 2/8 and 2/7 (3), 3g 4/8 and 3/7 (2), 4g 4/8 and 4/7
// (1), 7g all (1); the names carry the memory of each model.
#include "core/rightsize/mig_profiles.h"

#include <gtest/gtest.h>

#include <tuple>

namespace gpumeter::rightsize {
namespace {

using Row = std::tuple<std::string, uint32_t, uint32_t, uint32_t>;

std::vector<Row> Rows(const MigModel& m) {
  std::vector<Row> out;
  for (const auto& p : m.profiles)
    out.emplace_back(p.name, p.memory_eighths, p.slices, p.max_instances);
  return out;
}

TEST(MigProfiles, TablesMatchTheMigUserGuide) {
  const std::map<std::string, std::vector<Row>> documented = {
      {"A100 40GB",
       {{"1g.5gb", 1, 1, 7},
        {"1g.10gb", 2, 1, 4},
        {"2g.10gb", 2, 2, 3},
        {"3g.20gb", 4, 3, 2},
        {"4g.20gb", 4, 4, 1},
        {"7g.40gb", 8, 7, 1}}},
      {"A100 80GB",
       {{"1g.10gb", 1, 1, 7},
        {"1g.20gb", 2, 1, 4},
        {"2g.20gb", 2, 2, 3},
        {"3g.40gb", 4, 3, 2},
        {"4g.40gb", 4, 4, 1},
        {"7g.80gb", 8, 7, 1}}},
      {"H100 80GB",
       {{"1g.10gb", 1, 1, 7},
        {"1g.20gb", 2, 1, 4},
        {"2g.20gb", 2, 2, 3},
        {"3g.40gb", 4, 3, 2},
        {"4g.40gb", 4, 4, 1},
        {"7g.80gb", 8, 7, 1}}},
      {"H100 94GB",
       {{"1g.12gb", 1, 1, 7},
        {"1g.24gb", 2, 1, 4},
        {"2g.24gb", 2, 2, 3},
        {"3g.47gb", 4, 3, 2},
        {"4g.47gb", 4, 4, 1},
        {"7g.94gb", 8, 7, 1}}},
      {"H200 141GB",
       {{"1g.18gb", 1, 1, 7},
        {"1g.35gb", 2, 1, 4},
        {"2g.35gb", 2, 2, 3},
        {"3g.71gb", 4, 3, 2},
        {"4g.71gb", 4, 4, 1},
        {"7g.141gb", 8, 7, 1}}},
  };
  ASSERT_EQ(MigModels().size(), documented.size());
  for (const auto& m : MigModels()) {
    ASSERT_TRUE(documented.count(m.model)) << m.model;
    EXPECT_EQ(Rows(m), documented.at(m.model)) << m.model;
    // Each profile's instances fit the GPU's slices and eighths.
    for (const auto& p : m.profiles) {
      EXPECT_LE(p.slices * p.max_instances, kMigSlices) << m.model << " " << p.name;
      EXPECT_LE(p.memory_eighths * p.max_instances, 8u) << m.model << " " << p.name;
    }
  }
}

TEST(MigProfiles, ModelsByTheirNvmlNames) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA A100-SXM4-40GB", "A100 40GB"}, {"NVIDIA A100-PCIE-40GB", "A100 40GB"},
      {"NVIDIA A100-SXM4-80GB", "A100 80GB"}, {"NVIDIA A100 80GB PCIe", "A100 80GB"},
      {"NVIDIA H100 80GB HBM3", "H100 80GB"}, {"NVIDIA H100 PCIe", "H100 80GB"},
      {"NVIDIA H100 NVL", "H100 94GB"},       {"NVIDIA H200", "H200 141GB"},
      {"NVIDIA H200 NVL", "H200 141GB"},
  };
  for (const auto& [name, model] : cases) {
    const auto* m = MigModelFor(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->model, model) << name;
  }
  for (const char* none : {"NVIDIA L4", "NVIDIA L40S", "Tesla T4", "NVIDIA A10G"})
    EXPECT_EQ(MigModelFor(none), nullptr) << none;
}

}  // namespace
}  // namespace gpumeter::rightsize
