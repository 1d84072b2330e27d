// Where tests find the bundled scenarios and the fake NVML builds (set by CMake).
#pragma once

#include <string>

namespace gpumeter::testing {

inline std::string SourceDir() { return GPUMETER_TEST_SOURCE_DIR; }
inline std::string ScenarioPath(const std::string& name) {
  return SourceDir() + "/scenarios/" + name + ".yaml";
}
inline std::string FakeNvmlPath(const std::string& profile) {
  return std::string(GPUMETER_TEST_BINARY_DIR) + "/fake_nvml/" + profile + "/libnvidia-ml.so.1";
}
inline const char* const kBundledScenarios[] = {"exclusive", "timeslice-h100", "mps-a100",
                                                "mig-h200",  "node-8gpu",      "dra-h100"};
inline const char* const kProfiles[] = {"r580", "r535_43", "r470", "r418"};

}  // namespace gpumeter::testing
