#include "app/config_files.h"

#include <spdlog/spdlog.h>

#include "common/bounded_file.h"
#include "common/secret_file.h"

namespace gpumeter::app {

Expected<std::string> ReadWhole(const std::string& flag, const std::string& path) {
  auto text = ReadBoundedFile(path, 16u << 20);
  if (!text && text.error().code == ErrorCode::kInvalidInput)  // not a regular file, too large
    return MakeError(ErrorCode::kInvalidInput, flag + " " + text.error().message);
  if (!text) return MakeError(ErrorCode::kInvalidInput, flag + " " + path + ": cannot open");
  return text;
}

Expected<cost::Pricing> LoadPricing(const std::string& path) {
  if (path.empty()) return cost::Pricing::Defaults();
  auto text = ReadWhole("--pricing", path);
  if (!text) return tl::unexpected(text.error());
  return cost::Pricing::Parse(*text, path);
}

Expected<guard::GuardConfig> LoadGuardConfig(const std::string& path) {
  if (path.empty()) return guard::GuardConfig{};
  auto text = ReadWhole("--guard-config", path);
  if (!text) return tl::unexpected(text.error());
  return guard::ParseGuardConfig(*text, path);
}

Expected<std::string> ReadTokenFlag(const std::string& flag, const std::string& path) {
  if (path.empty()) return std::string();
  if (auto w = SecretFileWarning(flag, path); !w.empty()) spdlog::warn("{}", w);
  return ReadSecretFile(flag, path);
}

}  // namespace gpumeter::app
