// Where the subcommands find bundled scenarios and the fake NVML builds, relative to the binary
// (build tree or install prefix) and the source tree it was built from.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpumeter::cli {

std::filesystem::path ExeDir(const std::string& argv0);
std::vector<std::string> ScenarioDirs(const std::string& extra_dir, const std::filesystem::path& exe_dir);
// The fake libnvidia-ml.so.1 of `profile`, or `explicit_path` when given.
std::vector<std::string> FakeLibraryCandidates(const std::string& explicit_path, const std::string& profile,
                                               const std::filesystem::path& exe_dir);

}  // namespace gpumeter::cli
