// What the agent and `gpumeter doctor` both need to find on a node: its name, files named by
// flags, and how to reach the API server. Not thread-safe (reads the process environment).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/error.h"
#include "core/cost/pricing.h"
#include "core/guard/findings.h"
#include "sources/kube_api/kubeconfig.h"

namespace gpumeter::app {

// `flag` when given, else $NODE_NAME (the downward API's spec.nodeName), else the host name.
std::string NodeName(const std::string& flag);

// The whole file; the error names the flag and the path.
Expected<std::string> ReadWhole(const std::string& flag, const std::string& path);

// The pricing file `path` names (--pricing), or the dated default table when `path` is empty.
Expected<cost::Pricing> LoadPricing(const std::string& path);
// The guardrails file `path` names (--guard-config), or the defaults when it is empty.
Expected<guard::GuardConfig> LoadGuardConfig(const std::string& path);

// A command's result: the text to stdout, or to `output` when given; an error logged. The exit
// code: 0, 1 (a source failed or the file could not be written) or 2 (bad input).
int EmitText(const Expected<std::string>& text, const std::string& output);

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
