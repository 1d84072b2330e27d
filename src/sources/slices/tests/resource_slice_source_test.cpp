// The API-server slice lister against a fake API server (cpp-httplib, plain HTTP on loopback):
// a list gives the devices, a denial keeps the last good ones, and a 404 (no resource.k8s.io/v1)
// means no DRA devices rather than an error.
#include "sources/slices/resource_slice_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "support/temp_dir.h"

namespace gpumeter::kube_api {
namespace {

using ::testing::HasSubstr;

template <typename F>
bool Eventually(F f, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

TEST(ApiServerSlices, ResourceSlicesAreListedAndA404MeansNoDra) {
  httplib::Server api;
  std::atomic<int> mode{200};
  api.Get("/apis/resource.k8s.io/v1/resourceslices", [&](const httplib::Request& req,
                                                         httplib::Response& res) {
    res.status = mode.load();
    if (req.get_param_value("fieldSelector") != "spec.nodeName=node-a") res.status = 400;
    res.set_content(
        R"({"kind":"ResourceSliceList","items":[{"spec":{"driver":"gpu.nvidia.com","pool":{"name":"node-a"},)"
        R"("devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-1"}}}]}}]})",
        "application/json");
  });
  const int port = api.bind_to_any_port("127.0.0.1");
  std::thread t([&] { api.listen_after_bind(); });
  testing::TempDir dir("gpumeter-apiserver");
  std::ofstream(dir.path() / "token") << "tok-1\n";
  SliceSourceOptions o;
  o.config.server = "http://127.0.0.1:" + std::to_string(port);
  o.config.token_file = (dir.path() / "token").string();
  o.config.source = "test";
  o.node_name = "node-a";
  o.period = std::chrono::milliseconds(20);
  ApiServerSliceSource src(o);
  src.Start();
  ASSERT_TRUE(Eventually([&] { return src.Current() != nullptr; }));
  ASSERT_NE(src.Current()->Find("gpu.nvidia.com", "node-a", "gpu-0"), nullptr);
  mode = 403;
  ASSERT_TRUE(Eventually([&] { return !src.Status().up; }));
  EXPECT_THAT(src.Status().last_error, HasSubstr("list resourceslices: HTTP 403"));
  EXPECT_EQ(src.Current()->devices().size(), 1u) << "last good devices kept";
  mode = 404;
  ASSERT_TRUE(Eventually([&] { return src.Status().up && src.Current()->devices().empty(); }))
      << "no DRA API: no devices, not an error";
  src.Stop();
  api.stop();
  t.join();
}

}  // namespace
}  // namespace gpumeter::kube_api
