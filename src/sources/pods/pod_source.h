// Where the node's pods come from: the API server (list and watch, api_server_source.h) or a
// PodList JSON file (--pods-file, for nodes without an API server and for the demo). A source
// hands out immutable snapshots of its PodStore, so the sampling loop never waits on it and never
// sees a half-applied update. Implementations are thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>

#include "domain/source_status.h"
#include "sources/kube_api/watched_file.h"
#include "sources/pods/pods.h"
#include "sources/polled/polled_source.h"

namespace gpumeter::kube_api {

// Poll: a file source re-reads a changed file; a watching source does its work on its own thread
// and returns at once. Current: the last good pod set, a new object at each update.
using PodSource = sources::PolledSource<k8s::PodStore>;

// Reads a PodList (as `kubectl get pods -o json` prints it) from a file, and again whenever its
// modification time or size changes (watched_file.h). A file that is missing or malformed is an
// error that keeps the last good pod set.
class PodsFileSource final : public PodSource {
 public:
  explicit PodsFileSource(std::filesystem::path path);
  void Poll(std::chrono::steady_clock::time_point now) override { file_.Poll(now); }
  std::shared_ptr<const k8s::PodStore> Current() const override { return file_.Current(); }
  domain::SourceStatus Status() const override { return file_.Status(); }

 private:
  WatchedListFile<k8s::PodStore> file_;
};

}  // namespace gpumeter::kube_api
