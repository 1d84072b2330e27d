// The node's DRA devices from a ResourceSliceList JSON file (`kubectl get resourceslices -o json
// --field-selector spec.nodeName=NODE`, or the simulated node's file): --resource-slices-file, for
// nodes without an API server and for the demo and simulate. The file is read again whenever its
// modification time or size changes; one that is missing or malformed keeps the last good devices
// and is reported in Status(). Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include "sources/kube_api/resource_slice_source.h"

namespace gpumeter::kube_api {

class SlicesFileSource final : public SliceSource {
 public:
  explicit SlicesFileSource(std::filesystem::path path);
  // Re-reads the file when it changed since the last read (so a call does file I/O: a stat, and a
  // read of at most 64 MiB when it changed).
  std::shared_ptr<const k8s::ResourceSliceStore> Current() const override;
  domain::SourceStatus Status() const override;

 private:
  void Refresh() const;  // with mu_ held
  std::filesystem::path path_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const k8s::ResourceSliceStore> current_;
  mutable domain::SourceTracker tracker_;
  mutable std::filesystem::file_time_type mtime_{};
  mutable uintmax_t size_ = 0;
};

}  // namespace gpumeter::kube_api
