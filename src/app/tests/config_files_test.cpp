// The YAML files a command's flags name (--pricing, --guard-config): a small file that stands for
// a huge one is refused with the file's path and the place, not expanded until the process hangs.
#include "app/config_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "support/yaml_bombs.h"

namespace gpumeter::app {
namespace {

using ::testing::HasSubstr;

TEST(ConfigFiles, APricingFileOfAliasesIsRefusedNamingIt) {
  testing::TempDir dir("gpumeter-config-files");
  const std::string path = (dir.path() / "pricing.yaml").string();
  std::ofstream(path) << testing::BillionLaughs();
  const auto laughs = LoadPricing(path);
  ASSERT_FALSE(laughs);
  EXPECT_EQ(laughs.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(laughs.error().message,
            path + ": line 2, column 8: YAML aliases are not accepted (*a); write the value out");
  // The one use of an alias a pricing file might have had: one node's price for another.
  std::ofstream(path) << "nodes:\n  a: &n {price_per_hour: 12.0, gpus: 4}\n  b: *n\n";
  const auto shared = LoadPricing(path);
  ASSERT_FALSE(shared);
  EXPECT_EQ(shared.error().message,
            path + ": line 3, column 6: YAML aliases are not accepted (*n); write the value out");
}

TEST(ConfigFiles, AGuardrailsFileNestedTooDeepIsRefusedNamingIt) {
  testing::TempDir dir("gpumeter-config-files");
  const std::string path = (dir.path() / "guard.yaml").string();
  std::ofstream(path) << "x: " << testing::NestedLists(1000) << "\n";
  const auto deep = LoadGuardConfig(path);
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, ErrorCode::kInvalidInput);
  EXPECT_THAT(deep.error().message,
              HasSubstr(path + ": line 1, column 67: nested deeper than 64 levels (refused)"));
  std::ofstream(path) << testing::BillionLaughs();
  EXPECT_THAT(LoadGuardConfig(path).error().message,
              HasSubstr(path + ": line 2, column 8: YAML aliases are not accepted"));
}

}  // namespace
}  // namespace gpumeter::app
