// How the agent and `gpumeter doctor` find their node and the API server: the node's name, the
// API server's configuration (kubeconfig or in-cluster) and its CA as a file. Not thread-safe
// (reads the process environment).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "app/private_file.h"
#include "common/error.h"
#include "sources/kube_api/kubeconfig.h"

namespace gpumeter::app {

// `flag` when given, else $NODE_NAME (the downward API's spec.nodeName), else the host name.
std::string NodeName(const std::string& flag);

// The API server from `kubeconfig` (its `context`, or the current one) when given, else the
// in-cluster service account; nullopt outside a cluster without a kubeconfig, with the reason in
// `why_none` when given. Errors: an unreadable or malformed kubeconfig.
Expected<std::optional<kube_api::ApiServerConfig>> ApiServerFor(const std::string& kubeconfig,
                                                                const std::string& context,
                                                                std::string* why_none = nullptr);

// Writes the CA data of `config` (if any) to a private file and points config.ca_file at it;
// the returned file (null when there was no CA data) must outlive every use of `config`.
Expected<std::unique_ptr<PrivateFile>> MaterializeCa(kube_api::ApiServerConfig& config);

}  // namespace gpumeter::app
