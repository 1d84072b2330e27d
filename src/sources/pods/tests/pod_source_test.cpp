#include "sources/pods/pod_source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace gpumeter::kube_api {
namespace {

const char* kList =
    R"({"kind":"PodList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a","namespace":"ns","uid":"u-1"},)"
    R"("spec":{"nodeName":"n","containers":[{"name":"c"}]},"status":{"phase":"Running"}}]})";

TEST(PodsFile, ReadsRereadsOnChangeAndKeepsTheLastGoodSet) {
  testing::TempDir dir("gpumeter-podsfile");
  const auto path = dir.path() / "pods.json";
  PodsFileSource src(path);
  const auto now = std::chrono::steady_clock::now();
  src.Poll(now);
  EXPECT_FALSE(src.Status().up);
  EXPECT_NE(src.Status().last_error.find("cannot stat"), std::string::npos)
      << src.Status().last_error;
  EXPECT_EQ(src.Current(), nullptr);

  std::ofstream(path) << kList;
  src.Poll(now);
  ASSERT_NE(src.Current(), nullptr);
  EXPECT_TRUE(src.Status().up);
  EXPECT_NE(src.Current()->ByName("ns", "a"), nullptr);
  const auto first = src.Current();
  src.Poll(now);
  EXPECT_EQ(src.Current(), first) << "unchanged file: same snapshot";

  std::ofstream(path) << "[1,2";
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(2));
  src.Poll(now);
  EXPECT_FALSE(src.Status().up);
  EXPECT_EQ(src.Current(), first) << "bad file: last good pods kept";
  EXPECT_EQ(src.Status().failures, 2u);
}

// A pods file with a key twice in one object (a pod's uid) is refused, saying so; the last good
// pod set stays.
TEST(PodsFile, ADuplicateKeyIsRefused) {
  testing::TempDir dir("gpumeter-podsfile");
  const auto path = dir.path() / "pods.json";
  PodsFileSource src(path);
  const auto now = std::chrono::steady_clock::now();
  std::ofstream(path) << kList;
  src.Poll(now);
  ASSERT_NE(src.Current(), nullptr);
  std::string twice = kList;
  twice.replace(twice.find(R"("uid":"u-1")"), 11, R"("uid":"u-1","uid":"u-2")");
  std::ofstream(path) << twice;
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(2));
  src.Poll(now);
  EXPECT_FALSE(src.Status().up);
  EXPECT_NE(src.Status().last_error.find("duplicate key 'uid'"), std::string::npos)
      << src.Status().last_error;
  ASSERT_NE(src.Current(), nullptr);
  EXPECT_NE(src.Current()->ByUid("u-1"), nullptr) << "the last good pods kept";
}

}  // namespace
}  // namespace gpumeter::kube_api
