#include "sources/pods/pod_source.h"

#include <string>

namespace gpumeter::kube_api {

PodsFileSource::PodsFileSource(std::filesystem::path path)
    : file_(std::move(path),
            {"pods", "pods file", "the last good pod set",
             [](const k8s::PodStore& s) { return std::to_string(s.size()) + " pods"; }}) {}

}  // namespace gpumeter::kube_api
