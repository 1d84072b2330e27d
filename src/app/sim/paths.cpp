#include "app/sim/paths.h"

#include "sim/scenario/loader.h"

#ifndef GPUMETER_SOURCE_SCENARIOS
#define GPUMETER_SOURCE_SCENARIOS ""
#endif

namespace gpumeter::app {
namespace fs = std::filesystem;

fs::path ExeDir(const std::string& argv0) {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) p = fs::absolute(argv0, ec);
  return p.parent_path();
}

std::vector<std::string> ScenarioDirs(const std::string& extra_dir, const fs::path& exe_dir) {
  std::vector<std::string> dirs;
  if (!extra_dir.empty()) dirs.push_back(extra_dir);
  dirs.push_back((exe_dir / "../share/gpumeter/scenarios").lexically_normal().string());
  if (*GPUMETER_SOURCE_SCENARIOS) dirs.push_back(GPUMETER_SOURCE_SCENARIOS);
  return dirs;
}

std::vector<std::string> FakeLibraryCandidates(const std::string& explicit_path,
                                               const std::string& profile,
                                               const fs::path& exe_dir) {
  if (!explicit_path.empty()) return {explicit_path};
  return {(exe_dir / "fake_nvml" / profile / "libnvidia-ml.so.1").string(),
          (exe_dir / "../lib/gpumeter/fake_nvml" / profile / "libnvidia-ml.so.1")
              .lexically_normal()
              .string()};
}

std::string FakeKubeletProgram(const fs::path& exe_dir) {
  for (const auto& p : {exe_dir / "gpumeter-fake-kubelet",
                        (exe_dir / "../lib/gpumeter/gpumeter-fake-kubelet").lexically_normal()}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

Expected<LoadedScenario> LoadScenario(const std::string& name_or_file, const std::string& extra_dir,
                                      const fs::path& exe_dir) {
  auto path = scenario::ResolveScenarioPath(name_or_file, ScenarioDirs(extra_dir, exe_dir));
  if (!path) return tl::unexpected(path.error());
  auto loaded = scenario::LoadScenarioFile(*path);
  if (!loaded)
    return MakeError(loaded.error().code, "refusing to start: " + loaded.error().message);
  return LoadedScenario{*path, std::move(*loaded)};
}

}  // namespace gpumeter::app
