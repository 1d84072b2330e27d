// Internal: typed, path-tracking access to a YAML tree for the scenario loader.
// Every accessor throws ReadError with "path (line N): what is wrong"; the loader converts it to
// an Error at its public edge, so no exception leaves the module.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>

namespace gpumeter::scenario::detail {

struct ReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A YAML node together with its path from the document root, e.g. "gpus[0].mig".
class Field {
 public:
  Field(YAML::Node node, std::string path) : node_(std::move(node)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSequence() const { return node_.IsSequence(); }

  [[noreturn]] void Fail(const std::string& what) const;

  // Requires a mapping whose keys are all in `allowed`.
  void ExpectMap(std::initializer_list<const char*> allowed) const;
  void ExpectSequence() const;
  bool Has(const char* key) const;
  Field Child(const char* key) const;  // must exist
  std::optional<Field> Optional(const char* key) const;
  size_t Size() const;
  Field At(size_t i) const;
  // Iterates a mapping: calls fn(key, value-field).
  template <typename Fn>
  void ForEachEntry(Fn fn) const {
    for (const auto& kv : node_)
      fn(kv.first.as<std::string>(), Field(kv.second, path_ + "." + kv.first.as<std::string>()));
  }

  std::string Str() const;
  uint64_t UInt() const;
  double Double() const;  // finite
  bool Bool() const;

  // Convenience for optional scalars with a default.
  std::string Str(const char* key, std::string def) const;
  uint64_t UInt(const char* key, uint64_t def) const;
  double Double(const char* key, double def) const;
  bool Bool(const char* key, bool def) const;

 private:
  YAML::Node node_;
  std::string path_;
};

}  // namespace gpumeter::scenario::detail
