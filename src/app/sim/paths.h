// Where the subcommands find bundled scenarios and the fake NVML builds, relative to the binary
// (build tree or install prefix) and the source tree it was built from.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "sim/scenario/model.h"

namespace gpumeter::app {

std::filesystem::path ExeDir(const std::string& argv0);
std::vector<std::string> ScenarioDirs(const std::string& extra_dir,
                                      const std::filesystem::path& exe_dir);
// The fake libnvidia-ml.so.1 of `profile`, or `explicit_path` when given.
std::vector<std::string> FakeLibraryCandidates(const std::string& explicit_path,
                                               const std::string& profile,
                                               const std::filesystem::path& exe_dir);
// gpumeter-fake-kubelet, the demo's kubelet: next to the binary (build tree), else in the install
// prefix's lib/gpumeter/. The first that exists; empty when none does.
std::string FakeKubeletProgram(const std::filesystem::path& exe_dir);

struct LoadedScenario {
  std::string path;
  scenario::Scenario scenario;
};
// Resolves NAME|FILE against the scenario directories and loads it, validated. The error is the
// loader's message (file, path inside it, what is wrong): callers refuse to start with it.
Expected<LoadedScenario> LoadScenario(const std::string& name_or_file, const std::string& extra_dir,
                                      const std::filesystem::path& exe_dir);

}  // namespace gpumeter::app
