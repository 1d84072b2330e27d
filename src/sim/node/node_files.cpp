#include "sim/node/node_files.h"

#include <cstdlib>
#include <fstream>

#include "sim/node/scenario_context.h"
#include "sim/node/scenario_fixture.h"

namespace gpumeter::sim {

Expected<std::unique_ptr<NodeFiles>> NodeFiles::Create(const scenario::Scenario& s,
                                                       const std::filesystem::path& dir) {
  std::unique_ptr<NodeFiles> node(new NodeFiles(s));
  if (dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpumeter-demo-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      return MakeError(ErrorCode::kUnavailable, tmpl + ": cannot create a temporary directory");
    node->dir_ = tmpl;
    node->owns_dir_ = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return MakeError(ErrorCode::kUnavailable, dir.string() + ": " + ec.message());
    node->dir_ = dir;
  }
  std::ofstream pods(node->pods_file());
  pods << ScenarioPodListJson(s);
  if (!pods.flush())
    return MakeError(ErrorCode::kUnavailable, node->pods_file().string() + ": cannot write");
  std::ofstream slices(node->resource_slices_file());
  slices << ScenarioResourceSlicesJson(s);
  if (!slices.flush())
    return MakeError(ErrorCode::kUnavailable,
                     node->resource_slices_file().string() + ": cannot write");
  if (const auto n = ScenarioNodeJson(s); !n.empty()) {
    std::ofstream out(node->node_file());
    out << n;
    if (!out.flush())
      return MakeError(ErrorCode::kUnavailable, node->node_file().string() + ": cannot write");
  }
  if (auto proc = node->RefreshProc(0); !proc) return tl::unexpected(proc.error());
  return node;
}

NodeFiles::~NodeFiles() {
  std::error_code ec;
  if (owns_dir_) std::filesystem::remove_all(dir_, ec);
}

Expected<void> NodeFiles::RefreshProc(double t_s) {
  // The fake NVML's clock (fake_driver.cpp): scenario time t is stamped EPOCH_US + (t - START_S) s.
  std::optional<double> unix_s_at_zero;
  if (const char* e = std::getenv("GPUMETER_FAKE_NVML_EPOCH_US"); e && *e) {
    const char* start = std::getenv("GPUMETER_FAKE_NVML_START_S");
    unix_s_at_zero =
        std::strtod(e, nullptr) / 1e6 - (start && *start ? std::strtod(start, nullptr) : 0.0);
  }
  return WriteProcFixture(proc_root(), scenario_, t_s, unix_s_at_zero);
}

}  // namespace gpumeter::sim
