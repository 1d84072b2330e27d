// The MIG profile tables against NVIDIA's MIG user guide ("Supported MIG Profiles"): for A100,
// H100, H200 and B200, a 1g profile has 1/8 of the memory and 1/7 of the SMs (7 instances), the
// doubled-memory 1g has 2/8 and 1/7 (4), 2g 2/8 and 2/7 (3), 3g 4/8 and 3/7 (2), 4g 4/8 and 4/7
// (1), 7g all (1); the names carry the memory of each model. The A30 has 4 slices: 1g.6gb a
// quarter of memory and SMs (4 instances), 2g.12gb half (2), 4g.24gb all (1).
#include "domain/mig_profiles.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace gpumeter::domain {
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
      {"A30 24GB", {{"1g.6gb", 2, 1, 4}, {"2g.12gb", 4, 2, 2}, {"4g.24gb", 8, 4, 1}}},
      {"B200 180GB",
       {{"1g.23gb", 1, 1, 7},
        {"1g.45gb", 2, 1, 4},
        {"2g.45gb", 2, 2, 3},
        {"3g.90gb", 4, 3, 2},
        {"4g.90gb", 4, 4, 1},
        {"7g.180gb", 8, 7, 1}}},
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
    EXPECT_EQ(m.total_slices, m.model == "A30 24GB" ? 4u : 7u) << m.model;
    // Each profile's instances fit the GPU's slices and eighths.
    for (const auto& p : m.profiles) {
      EXPECT_LE(p.slices * p.max_instances, m.total_slices) << m.model << " " << p.name;
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
      {"NVIDIA H200 NVL", "H200 141GB"},      {"NVIDIA A30", "A30 24GB"},
      {"NVIDIA B200", "B200 180GB"},
  };
  for (const auto& [name, model] : cases) {
    const auto* m = MigModelFor(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->model, model) << name;
  }
  for (const char* none : {"NVIDIA L4", "NVIDIA L40S", "Tesla T4", "NVIDIA A10G"})
    EXPECT_EQ(MigModelFor(none), nullptr) << none;
}

// A driver's name for an instance finds the profile it is made on: media extensions and compute
// instances on it included; a name of another model's table does not.
TEST(MigProfiles, DriverNamesFindTheirBaseProfile) {
  const auto* a30 = MigModelFor("NVIDIA A30");
  const auto* h100 = MigModelFor("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(a30 && h100);
  const std::tuple<const MigModel*, const char*, const char*> cases[] = {
      {h100, "3g.40gb", "3g.40gb"},    {h100, "1g.10gb+me", "1g.10gb"},
      {h100, "1c.3g.40gb", "3g.40gb"}, {a30, "2g.12gb+me.all", "2g.12gb"},
      {a30, "1g.6gb-me", "1g.6gb"},    {h100, "3g.47gb", nullptr},
      {a30, "3g.18gb", nullptr},       {h100, "", nullptr},
  };
  for (const auto& [model, name, want] : cases) {
    const auto* p = FindMigProfile(*model, name);
    if (!want) {
      EXPECT_EQ(p, nullptr) << name;
      continue;
    }
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name, want) << name;
  }
}

}  // namespace
}  // namespace gpumeter::domain
