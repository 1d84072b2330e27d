#include "app/usage/usage_source.h"

namespace gpumeter::app {
namespace {

std::string_view WhatOf(UsageSource::Kind kind) {
  switch (kind) {
    case UsageSource::Kind::kStore:
    case UsageSource::Kind::kFile:
      return "PATH";
    case UsageSource::Kind::kPrometheus:
    case UsageSource::Kind::kAgent:
      return "URL";
  }
  return "?";
}

// "sqlite:PATH or prometheus:URL"; "agent:URL, prometheus:URL or file:PATH".
std::string Accepted(const std::vector<UsageSource::Kind>& accepted) {
  std::string out;
  for (size_t i = 0; i < accepted.size(); ++i) {
    if (i > 0) out += i + 1 == accepted.size() ? " or " : ", ";
    out += std::string(PrefixOf(accepted[i])) + std::string(WhatOf(accepted[i]));
  }
  return out;
}

}  // namespace

std::string_view PrefixOf(UsageSource::Kind kind) {
  switch (kind) {
    case UsageSource::Kind::kStore:
      return "sqlite:";
    case UsageSource::Kind::kPrometheus:
      return "prometheus:";
    case UsageSource::Kind::kAgent:
      return "agent:";
    case UsageSource::Kind::kFile:
      return "file:";
  }
  return "?:";
}

std::string ToString(const UsageSource& source) {
  return std::string(PrefixOf(source.kind)) + source.where;
}

Expected<UsageSource> ParseUsageSource(const std::string& flag, const std::string& text,
                                       const std::vector<UsageSource::Kind>& accepted) {
  for (const auto kind : accepted) {
    const std::string_view prefix = PrefixOf(kind);
    if (text.compare(0, prefix.size(), prefix) != 0) continue;
    std::string where = text.substr(prefix.size());
    if (where.empty())
      return MakeError(ErrorCode::kInvalidInput, flag + " '" + text + "': " + std::string(prefix) +
                                                     " names no " + std::string(WhatOf(kind)));
    return UsageSource{kind, std::move(where)};
  }
  return MakeError(ErrorCode::kInvalidInput,
                   flag + " '" + text + "': expected " + Accepted(accepted));
}

}  // namespace gpumeter::app
