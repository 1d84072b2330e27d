// The node's DRA devices from a ResourceSliceList JSON file (`kubectl get resourceslices -o json
// --field-selector spec.nodeName=NODE`, or the simulated node's file): --resource-slices-file, for
// nodes without an API server and for the demo and simulate. The file is read again whenever its
// modification time or size changes, when polled (watched_file.h); one that is missing or malformed
// keeps the last good devices and is reported in Status(). Thread-safe.
#pragma once

#include <filesystem>
#include <memory>

#include "sources/kube_api/watched_file.h"
#include "sources/slices/resource_slice_source.h"

namespace gpumeter::kube_api {

class SlicesFileSource final : public SliceSource {
 public:
  explicit SlicesFileSource(std::filesystem::path path);
  // Reads the file again when it changed since the last read (a stat, and a read of at most
  // 64 MiB when it changed).
  void Poll(std::chrono::steady_clock::time_point now) override { file_.Poll(now); }
  std::shared_ptr<const k8s::ResourceSliceStore> Current() const override {
    return file_.Current();
  }
  domain::SourceStatus Status() const override { return file_.Status(); }

 private:
  WatchedListFile<k8s::ResourceSliceStore> file_;
};

}  // namespace gpumeter::kube_api
