// HTTP endpoints of the agent and the demo: /metrics (text format 0.0.4), /healthz, /readyz.
// Handlers read the pipeline's latest NodeState and the sampler's health only; a scrape never
// waits on the driver, the kubelet or /proc.
// Start() binds (port 0 picks a free port) and serves on its own thread; Stop() or the
// destructor shuts it down.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "common/error.h"
#include "metrics/exposition.h"
#include "node/pipeline.h"
#include "sampler/sampler.h"

namespace httplib {
class Server;
}

namespace gpumeter::metrics {

class HttpServer {
 public:
  // `sampler` and `pipeline` must outlive the server.
  HttpServer(const sampler::Sampler& sampler, const node::NodePipeline& pipeline, ExpositionOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `listen` is HOST:PORT, e.g. "127.0.0.1:9400" or "0.0.0.0:0".
  Expected<void> Start(const std::string& listen);
  void Stop();
  // "http://HOST:PORT" actually bound; valid after Start().
  const std::string& url() const { return url_; }

 private:
  const sampler::Sampler& sampler_;
  const node::NodePipeline& pipeline_;
  ExpositionOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
};

// Splits "HOST:PORT" (also "[::1]:PORT"); the error names the flag value.
Expected<std::pair<std::string, int>> ParseListen(const std::string& listen);

}  // namespace gpumeter::metrics
