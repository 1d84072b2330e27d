#include "sources/slices/slices_file_source.h"

#include <string>

namespace gpumeter::kube_api {

SlicesFileSource::SlicesFileSource(std::filesystem::path path)
    : file_(std::move(path), {"resourceslices", "resource slices file", "the last good DRA devices",
                              [](const k8s::ResourceSliceStore& s) {
                                return std::to_string(s.devices().size()) + " DRA devices";
                              }}) {}

}  // namespace gpumeter::kube_api
