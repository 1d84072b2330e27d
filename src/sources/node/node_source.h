// The agent's own Node object (node_facts.h): from the API server (GET /api/v1/nodes/NAME on the
// source's own thread, every `period`: labels change rarely — a relabel, a GFD update — so a
// periodic get is enough, and RBAC `get` on nodes is all it needs), or from a file holding one
// (--node-file: nodes without an API server, the demo's simulated node; read again when it
// changes). A node that cannot be read keeps the last good facts and says why in Status() (a
// 403 names the missing RBAC); the agent keeps working without them (flags and the pricing file
// still apply). Thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "domain/source_status.h"
#include "sources/kube_api/api_client.h"
#include "sources/kube_api/kubeconfig.h"
#include "sources/kube_api/periodic_get.h"
#include "sources/kube_api/watched_file.h"
#include "sources/node/node_facts.h"
#include "sources/polled/polled_source.h"

namespace gpumeter::kube_api {

// Status's name: "node". Current: null before a good read.
using NodeSource = sources::PolledSource<k8s::NodeFacts>;

struct NodeSourceOptions {
  ApiServerConfig config;
  std::string node_name;
  std::chrono::milliseconds period{300000};
  std::chrono::milliseconds connect_timeout{5000};
  // A Node object is kilobytes (images lists make it tens); the cap stops a runaway reply.
  ListLimits limits{std::chrono::milliseconds(30000), 4u << 20};
};

class ApiServerNodeSource final : public NodeSource {
 public:
  explicit ApiServerNodeSource(NodeSourceOptions options);
  void Start() { get_.Start(); }
  void Stop() { get_.Stop(); }
  std::shared_ptr<const k8s::NodeFacts> Current() const override { return get_.Current(); }
  domain::SourceStatus Status() const override { return get_.Status(); }

 private:
  PeriodicGet<k8s::NodeFacts> get_;
};

class NodeFileSource final : public NodeSource {
 public:
  // `node_name`: the node the file must describe (another node's object is refused).
  NodeFileSource(std::filesystem::path path, std::string node_name);
  void Poll(std::chrono::steady_clock::time_point now) override { file_.Poll(now); }
  std::shared_ptr<const k8s::NodeFacts> Current() const override { return file_.Current(); }
  domain::SourceStatus Status() const override { return file_.Status(); }

 private:
  WatchedListFile<k8s::NodeFacts> file_;
};

}  // namespace gpumeter::kube_api
