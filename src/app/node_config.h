// What the agent and `gpumeter doctor` both need to find on a node: its name and how to reach the
// API server. Not thread-safe (reads the process environment).
#pragma once

#include <memory>
#include <optional>
#include <string>

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

// A file only this user can read (mode 0600) holding `content`, removed with the object: where
// certificate-authority-data goes, because httplib trusts only a CA *file* on its own.
class PrivateFile {
 public:
  static Expected<std::unique_ptr<PrivateFile>> Write(const std::string& content);
  ~PrivateFile();
  PrivateFile(const PrivateFile&) = delete;
  PrivateFile& operator=(const PrivateFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  explicit PrivateFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Writes the CA data of `config` (if any) to a private file and points config.ca_file at it;
// the returned file (null when there was no CA data) must outlive every use of `config`.
Expected<std::unique_ptr<PrivateFile>> MaterializeCa(kube_api::ApiServerConfig& config);

}  // namespace gpumeter::app
