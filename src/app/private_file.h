// A private temporary file: what certificate-authority-data from a kubeconfig becomes, because
// httplib trusts only a CA *file*. Owns the file; not thread-safe.
#pragma once

#include <memory>
#include <string>

#include "common/error.h"

namespace gpumeter::app {

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

}  // namespace gpumeter::app
