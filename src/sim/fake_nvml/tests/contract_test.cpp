// The fake cannot drift from the loader: every symbol the loader resolves is exported by the
// full profile, and each older profile lacks exactly the symbols its driver release lacked.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "sources/nvml/nvml_library.h"
#include "support/paths.h"

namespace gpumeter::fake {
namespace {

struct Lib {
  explicit Lib(const std::string& profile)
      : handle(dlopen(testing::FakeNvmlPath(profile).c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Lib() {
    if (handle) dlclose(handle);
  }
  bool Has(const std::string& sym) const { return dlsym(handle, sym.c_str()) != nullptr; }
  void* handle;
};

std::set<std::string> Omitted(const std::string& profile) {
  std::ifstream in(std::string(GPUMETER_TEST_BINARY_DIR) + "/src/sim/fake_nvml/" + profile +
                   ".omitted");
  std::set<std::string> out;
  std::string s;
  while (in >> s) out.insert(s);
  return out;
}

TEST(FakeContract, FullProfileExportsEverySymbolTheLoaderResolves) {
  Lib lib("r580");
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  for (const auto& sym : nvml::AllSymbolNames()) {
    EXPECT_TRUE(lib.Has(sym)) << sym;
  }
}

TEST(FakeContract, ProfilesOmitExactlyTheirDocumentedSymbols) {
  // What each driver release lacked (docs/nvml.md, "Driver profiles of the fake").
  const std::map<std::string, std::set<std::string>> expected = {
      {"r580", {}},
      {"r535_43",
       {"nvmlDeviceGetRunningProcessDetailList", "nvmlDeviceGetProcessesUtilizationInfo"}},
  };
  for (const char* profile : testing::kProfiles) {
    SCOPED_TRACE(profile);
    Lib lib(profile);
    ASSERT_NE(lib.handle, nullptr) << dlerror();
    const auto omitted = Omitted(profile);
    if (expected.count(profile)) {
      EXPECT_EQ(omitted, expected.at(profile));
    }
    for (const auto& sym : nvml::AllSymbolNames()) {
      EXPECT_EQ(lib.Has(sym), omitted.count(sym) == 0) << sym;
    }
    // Omitted: a symbol the loader resolves, or one of the monitoring calls only tools make
    // (docs/nvml.md, "Monitoring calls"), which must then really be absent.
    const std::set<std::string> tool_only = {"nvmlDeviceGetGraphicsRunningProcesses_v3",
                                             "nvmlDeviceGetGraphicsRunningProcesses_v2"};
    for (const auto& sym : omitted) {
      if (tool_only.count(sym)) {
        EXPECT_FALSE(lib.Has(sym)) << sym;
        continue;
      }
      EXPECT_NE(std::find(nvml::AllSymbolNames().begin(), nvml::AllSymbolNames().end(), sym),
                nvml::AllSymbolNames().end())
          << sym << " is omitted but not a loader symbol";
    }
  }
  // Older releases lack everything newer ones lack.
  const auto r470 = Omitted("r470"), r418 = Omitted("r418");
  for (const auto& s : r470) {
    EXPECT_TRUE(r418.count(s)) << s;
  }
  for (const char* s : {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetMemoryInfo_v2",
                        "nvmlGpmSampleGet"})
    EXPECT_TRUE(r470.count(s)) << s;
  for (const char* s : {"nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetMigMode"}) {
    EXPECT_TRUE(r418.count(s)) << s;
  }
}

TEST(FakeContract, OnlyNvmlAndControlSymbolsAreExported) {
  Lib lib("r580");
  ASSERT_NE(lib.handle, nullptr);
  // Internals (the scenario loader, yaml-cpp glue) stay hidden behind the version script.
  EXPECT_FALSE(
      lib.Has("_ZN8gpumeter8scenario16LoadScenarioFileERKNSt7__cxx1112basic_stringIcSt11char_"
              "traitsIcESaIcEEE"));
  EXPECT_TRUE(lib.Has("gpumeterFakeNvmlSetTime"));
}

}  // namespace
}  // namespace gpumeter::fake
