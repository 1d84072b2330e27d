#include "core/guard/findings.h"

#include <yaml-cpp/yaml.h>

#include "common/duration.h"

namespace gpumeter::guard {

const char* ToString(Kind kind) {
  switch (kind) {
    case Kind::kUnallocatedDevice:
      return "unallocated-device";
    case Kind::kNoGpuRequest:
      return "no-gpu-request";
    case Kind::kVisibleDevicesAll:
      return "visible-devices-all";
    case Kind::kVisibleDevicesOutside:
      return "visible-devices-outside";
    case Kind::kHostProcess:
      return "host-process";
    case Kind::kIdleAllocation:
      return "idle-allocation";
    case Kind::kOomRisk:
      return "oom-risk";
    case Kind::kMpsNoLimits:
      return "mps-no-limits";
  }
  return "unknown";
}

std::optional<Kind> KindFromString(std::string_view text) {
  for (const Kind k : kAllKinds)
    if (text == ToString(k)) return k;
  return std::nullopt;
}

const char* ToString(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "unknown";
}

std::optional<Severity> SeverityFromString(std::string_view text) {
  for (const Severity s : {Severity::kInfo, Severity::kWarning, Severity::kCritical})
    if (text == ToString(s)) return s;
  return std::nullopt;
}

namespace {

// A fraction in (0, 1] at `key`.
Expected<double> Fraction(const YAML::Node& n, const std::string& where) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    return MakeError(ErrorCode::kInvalidInput,
                     where + ": '" + n.as<std::string>("") + "' is not a number");
  }
  if (!(v > 0) || v > 1)
    return MakeError(ErrorCode::kInvalidInput,
                     where + ": " + std::to_string(v) + " is not in (0, 1]");
  return v;
}

// Seconds, written "90m", "1h", … or as a plain number of seconds.
Expected<double> Seconds(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar())
    return MakeError(ErrorCode::kInvalidInput, where + ": expected a duration such as 30m or 1h");
  const auto text = n.as<std::string>();
  try {
    const double v = n.as<double>();
    if (v > 0) return v;
  } catch (const YAML::Exception&) {
  }
  const auto d = ParseDurationSeconds(text);
  if (!d) return MakeError(ErrorCode::kInvalidInput, where + ": " + d.error().message);
  return static_cast<double>(*d);
}

Expected<void> Apply(const YAML::Node& root, const std::string& label, GuardConfig& c) {
  if (!root.IsMap())
    return MakeError(ErrorCode::kInvalidInput, label + ": expected a mapping at the top");
  for (const auto& top : root) {
    const auto key = top.first.as<std::string>();
    const auto& v = top.second;
    if (key == "severity") {
      if (!v.IsMap())
        return MakeError(ErrorCode::kInvalidInput,
                         label + ": severity: expected a mapping of finding kind to severity");
      for (const auto& e : v) {
        const auto kind_text = e.first.as<std::string>();
        const auto kind = KindFromString(kind_text);
        if (!kind)
          return MakeError(ErrorCode::kInvalidInput,
                           label + ": severity." + kind_text + ": unknown finding kind");
        const auto sev_text = e.second.as<std::string>("");
        if (sev_text == "off") {
          c.severity.erase(*kind);
          continue;
        }
        const auto sev = SeverityFromString(sev_text);
        if (!sev)
          return MakeError(ErrorCode::kInvalidInput, label + ": severity." + kind_text + ": '" +
                                                         sev_text +
                                                         "' is not info, warning, critical or off");
        c.severity[*kind] = *sev;
      }
    } else if (key == "idle") {
      if (!v.IsMap())
        return MakeError(ErrorCode::kInvalidInput,
                         label + ": idle: expected a mapping with below and window");
      for (const auto& e : v) {
        const auto k = e.first.as<std::string>();
        if (k == "below") {
          auto f = Fraction(e.second, label + ": idle.below");
          if (!f) return tl::unexpected(f.error());
          c.idle_below = *f;
        } else if (k == "window") {
          auto s = Seconds(e.second, label + ": idle.window");
          if (!s) return tl::unexpected(s.error());
          c.idle_window_s = *s;
        } else {
          return MakeError(ErrorCode::kInvalidInput,
                           label + ": idle." + k + ": unknown key (below, window)");
        }
      }
    } else if (key == "oom") {
      if (!v.IsMap() || v.size() != 1 || !v["ratio"])
        return MakeError(ErrorCode::kInvalidInput, label + ": oom: expected a mapping with ratio");
      auto f = Fraction(v["ratio"], label + ": oom.ratio");
      if (!f) return tl::unexpected(f.error());
      c.oom_ratio = *f;
    } else if (key == "expected_host_processes") {
      if (!v.IsSequence())
        return MakeError(ErrorCode::kInvalidInput,
                         label + ": expected_host_processes: expected a list of command names");
      c.expected_host_processes.clear();
      for (const auto& e : v) c.expected_host_processes.insert(e.as<std::string>());
    } else {
      return MakeError(
          ErrorCode::kInvalidInput,
          label + ": " + key + ": unknown key (severity, idle, oom, expected_host_processes)");
    }
  }
  return {};
}

}  // namespace

Expected<GuardConfig> ParseGuardConfig(std::string_view yaml, const std::string& label) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidInput, label + ": not YAML: " + e.what());
  }
  GuardConfig c;
  if (root.IsNull()) return c;
  try {
    if (auto ok = Apply(root, label, c); !ok) return tl::unexpected(ok.error());
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidInput, label + ": " + e.what());
  }
  return c;
}

}  // namespace gpumeter::guard
