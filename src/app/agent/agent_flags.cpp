#include "app/agent/agent_flags.h"

#include "domain/sharing_mode.h"

#include <charconv>
#include <cmath>

namespace gpumeter::app {
namespace {

Expected<std::pair<std::string, std::string>> SplitKeyValue(const std::string& flag,
                                                            const std::string& value) {
  const auto eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
    return MakeError(ErrorCode::kInvalidInput, flag + " '" + value + "': expected KEY=VALUE");
  return std::make_pair(value.substr(0, eq), value.substr(eq + 1));
}

}  // namespace

Expected<std::pair<std::string, k8s::SharingEvidence::Configured>> ParseSharingFlag(
    const std::string& value) {
  auto kv = SplitKeyValue("--sharing", value);
  if (!kv) return tl::unexpected(kv.error());
  const auto& [uuid, spec] = *kv;
  if (!uuid.starts_with("GPU-"))
    return MakeError(ErrorCode::kInvalidInput,
                     "--sharing '" + value + "': expected a GPU UUID (GPU-…) before '='");
  const auto colon = spec.find(':');
  const std::string mode = spec.substr(0, colon);
  k8s::SharingEvidence::Configured c{domain::SharingMode::kExclusive, 1};
  const auto parsed = domain::ParseSharingMode(mode);
  if (!parsed || *parsed == domain::SharingMode::kMig)
    return MakeError(ErrorCode::kInvalidInput,
                     "--sharing '" + value + "': mode must be exclusive, time-slicing or mps");
  c.mode = *parsed;
  if (c.mode == domain::SharingMode::kExclusive) {
    if (colon != std::string::npos)
      return MakeError(ErrorCode::kInvalidInput,
                       "--sharing '" + value + "': exclusive takes no replica count");
    return std::make_pair(uuid, c);
  }
  if (colon == std::string::npos)
    return MakeError(ErrorCode::kInvalidInput,
                     "--sharing '" + value + "': " + mode + " needs :REPLICAS");
  const auto r = spec.substr(colon + 1);
  uint32_t replicas = 0;
  const auto [end, ec] = std::from_chars(r.data(), r.data() + r.size(), replicas);
  if (ec != std::errc() || end != r.data() + r.size() || replicas < 2)
    return MakeError(ErrorCode::kInvalidInput,
                     "--sharing '" + value + "': replicas must be an integer >= 2");
  c.replicas = replicas;
  return std::make_pair(uuid, c);
}

Expected<std::map<std::string, std::string>> ParseKeyValues(
    const std::string& flag, const std::vector<std::string>& values) {
  std::map<std::string, std::string> out;
  for (const auto& v : values) {
    auto kv = SplitKeyValue(flag, v);
    if (!kv) return tl::unexpected(kv.error());
    out[kv->first] = kv->second;
  }
  return out;
}

Expected<std::map<std::string, double>> ParseIdlePower(const std::vector<std::string>& values) {
  std::map<std::string, double> out;
  for (const auto& v : values) {
    auto kv = SplitKeyValue("--idle-power", v);
    if (!kv) return tl::unexpected(kv.error());
    double w = 0;
    const auto& s = kv->second;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), w);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(w) || w <= 0)
      return MakeError(ErrorCode::kInvalidInput,
                       "--idle-power '" + v + "': watts must be a number > 0");
    out[kv->first] = w;
  }
  return out;
}

}  // namespace gpumeter::app
