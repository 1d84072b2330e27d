// A dcgm-exporter for a scenario's node: serves sim::DcgmExporterPage at the scenario time a
// clock gives, on GET /metrics, from a thread of its own. In gpumeter-fake-kubelet (the demo's
// node process) and tests; never in the gpumeter binary.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/error.h"
#include "sim/scenario/model.h"

namespace httplib {
class Server;
}

namespace gpumeter::sim {

class FakeDcgmExporter {
 public:
  FakeDcgmExporter();
  ~FakeDcgmExporter();  // stops the server
  FakeDcgmExporter(const FakeDcgmExporter&) = delete;
  FakeDcgmExporter& operator=(const FakeDcgmExporter&) = delete;

  // Binds `host` on a free port and serves. `scenario` must outlive the server; `scenario_time_s`
  // is called from the server's threads.
  Expected<void> Start(const scenario::Scenario& scenario, std::function<double()> scenario_time_s,
                       const std::string& host);
  void Stop();
  // http://HOST:PORT/metrics once started.
  const std::string& url() const { return url_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
};

}  // namespace gpumeter::sim
