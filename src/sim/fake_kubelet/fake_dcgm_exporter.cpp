#include "sim/fake_kubelet/fake_dcgm_exporter.h"

#include <httplib.h>

#include "sim/node/dcgm_page.h"

namespace gpumeter::sim {

FakeDcgmExporter::FakeDcgmExporter() = default;

FakeDcgmExporter::~FakeDcgmExporter() { Stop(); }

Expected<void> FakeDcgmExporter::Start(const scenario::Scenario& scenario,
                                       std::function<double()> scenario_time_s,
                                       const std::string& host) {
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [&scenario, clock = std::move(scenario_time_s)](const httplib::Request&,
                                                                           httplib::Response& res) {
    res.set_content(DcgmExporterPage(scenario, clock()), "text/plain; version=0.0.4");
  });
  const int port = server_->bind_to_any_port(host);
  if (port <= 0)
    return MakeError(ErrorCode::kUnavailable, "fake dcgm-exporter: cannot bind " + host);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 5000 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  url_ = "http://" + host + ":" + std::to_string(port) + "/metrics";
  return {};
}

void FakeDcgmExporter::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpumeter::sim
