#include "sources/slices/slices_file_source.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace gpumeter::kube_api {
namespace {

std::string List(const std::string& device, const std::string& uuid) {
  return R"({"kind":"ResourceSliceList","items":[{"spec":{"driver":"gpu.nvidia.com",)"
         R"("pool":{"name":"n","generation":1},"devices":[{"name":")" +
         device + R"(","attributes":{"type":{"string":"gpu"},"uuid":{"string":")" + uuid +
         R"("}}}]}}]})";
}

TEST(SlicesFile, ReadsRereadsOnChangeAndKeepsTheLastGoodDevices) {
  testing::TempDir dir("gpumeter-slicesfile");
  const auto path = dir.path() / "resourceslices.json";
  SlicesFileSource src(path);
  const auto now = std::chrono::steady_clock::now();
  src.Poll(now);
  EXPECT_EQ(src.Current(), nullptr);
  EXPECT_FALSE(src.Status().up);
  EXPECT_NE(src.Status().last_error.find("cannot stat"), std::string::npos)
      << src.Status().last_error;

  std::ofstream(path) << List("gpu-0", "GPU-a");
  EXPECT_EQ(src.Current(), nullptr) << "read when polled, not when asked";
  src.Poll(now);
  const auto first = src.Current();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(src.Status().up);
  const auto* d = first->Find("gpu.nvidia.com", "n", "gpu-0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->uuid, "GPU-a");
  src.Poll(now);
  EXPECT_EQ(src.Current(), first) << "unchanged file: same snapshot";
  const auto reads = src.Status().attempts;

  // A malformed file changes nothing but the status, which names the file's problem.
  std::ofstream(path) << "{\"items\": 3}";
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(2));
  src.Poll(now);
  EXPECT_EQ(src.Status().attempts, reads + 1) << "an unchanged file was not read again";
  EXPECT_EQ(src.Current(), first);
  EXPECT_TRUE(src.Status().last_duration_seconds.has_value()) << "a failed read is timed too";
  EXPECT_FALSE(src.Status().up);
  EXPECT_NE(src.Status().last_error.find("items"), std::string::npos) << src.Status().last_error;

  // A changed file is read again.
  std::ofstream(path) << List("gpu-1", "GPU-b");
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(4));
  src.Poll(now);
  const auto second = src.Current();
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(src.Status().up);
  EXPECT_NE(second->Find("gpu.nvidia.com", "n", "gpu-1"), nullptr);
  EXPECT_EQ(second->Find("gpu.nvidia.com", "n", "gpu-0"), nullptr);
}

}  // namespace
}  // namespace gpumeter::kube_api
