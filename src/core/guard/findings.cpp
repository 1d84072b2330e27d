#include "core/guard/findings.h"

#include <iterator>

#include "common/duration.h"
#include "common/enum_names.h"
#include "common/yaml/reader.h"

namespace gpumeter::guard {

namespace {

constexpr EnumName<Kind> kKindNames[] = {{Kind::kUnallocatedDevice, "unallocated-device"},
                                         {Kind::kNoGpuRequest, "no-gpu-request"},
                                         {Kind::kVisibleDevicesAll, "visible-devices-all"},
                                         {Kind::kVisibleDevicesOutside, "visible-devices-outside"},
                                         {Kind::kHostProcess, "host-process"},
                                         {Kind::kIdleAllocation, "idle-allocation"},
                                         {Kind::kOomRisk, "oom-risk"},
                                         {Kind::kMpsNoLimits, "mps-no-limits"},
                                         {Kind::kGpuLost, "gpu-lost"},
                                         {Kind::kEccUncorrectable, "ecc-uncorrectable"},
                                         {Kind::kRowRemapPending, "row-remap-pending"},
                                         {Kind::kRowRemapFailed, "row-remap-failed"},
                                         {Kind::kClocksSlowdown, "clocks-slowdown"},
                                         {Kind::kXid, "xid"},
                                         {Kind::kXidApplication, "xid-application"},
                                         {Kind::kRetiredPagesPending, "retired-pages-pending"},
                                         {Kind::kRetiredPagesLimit, "retired-pages-limit"}};
static_assert(DistinctEnumNames(kKindNames));
static_assert(std::size(kKindNames) == kAllKinds.size(), "every kind has a name");

}  // namespace

const char* ToString(Kind kind) { return EnumToString(kKindNames, kind, "unknown"); }

std::optional<Kind> KindFromString(std::string_view text) {
  return EnumFromString(kKindNames, text);
}

namespace {

constexpr EnumName<Severity> kSeverityNames[] = {
    {Severity::kInfo, "info"}, {Severity::kWarning, "warning"}, {Severity::kCritical, "critical"}};
static_assert(DistinctEnumNames(kSeverityNames));

}  // namespace

const char* ToString(Severity severity) {
  return EnumToString(kSeverityNames, severity, "unknown");
}

std::optional<Severity> SeverityFromString(std::string_view text) {
  return EnumFromString(kSeverityNames, text);
}

namespace {

using yaml::Field;

// A fraction in (0, 1]; numbers read as guardrails files always have been (yaml-cpp's double).
double Fraction(const Field& f) {
  const auto v = f.As<double>();
  if (!v) f.Fail("'" + f.As<std::string>().value_or("") + "' is not a number");
  if (!(*v > 0) || *v > 1) f.Fail(std::to_string(*v) + " is not in (0, 1]");
  return *v;
}

// Seconds, written "90m", "1h", … or as a plain number of seconds.
double Seconds(const Field& f) {
  if (!f.IsScalar()) f.Fail("expected a duration such as 30m or 1h");
  if (const auto v = f.As<double>(); v && *v > 0) return *v;
  const auto d = ParseDurationSeconds(f.Str());
  if (!d) f.Fail(d.error().message);
  return static_cast<double>(*d);
}

void ApplySeverity(const Field& v, GuardConfig& c) {
  if (!v.IsMap()) v.Fail("expected a mapping of finding kind to severity");
  v.ForEachEntry([&](const std::string& kind_text, const Field& e) {
    const auto kind = KindFromString(kind_text);
    if (!kind) e.Fail("unknown finding kind");
    const auto sev_text = e.As<std::string>().value_or("");
    if (sev_text == "off") {
      c.severity.erase(*kind);
      return;
    }
    const auto sev = SeverityFromString(sev_text);
    if (!sev) e.Fail("'" + sev_text + "' is not info, warning, critical or off");
    c.severity[*kind] = *sev;
  });
}

void ApplyIdle(const Field& v, GuardConfig& c) {
  if (!v.IsMap()) v.Fail("expected a mapping with below and window");
  v.ExpectMap({"below", "window"});
  v.ForEachEntry([&](const std::string& k, const Field& e) {
    if (k == "below")
      c.idle_below = Fraction(e);
    else
      c.idle_window_s = Seconds(e);
  });
}

double OomRatio(const Field& v) {
  if (!v.IsMap() || v.Size() != 1 || !v.Find("ratio")) v.Fail("expected a mapping with ratio");
  return Fraction(v.Get("ratio"));
}

void ApplyHostProcesses(const Field& v, GuardConfig& c) {
  if (!v.IsSequence()) v.Fail("expected a list of command names");
  c.expected_host_processes.clear();
  v.ForEachItem([&](const Field& e) {
    const auto name = e.As<std::string>();
    if (!name) e.Fail("expected a command name");
    c.expected_host_processes.insert(*name);
  });
}

// `slowdown: {hold: 60s}` or `events: {open: 1h}`: the one duration under `key`.
double OneDuration(const Field& v, const char* key) {
  if (!v.IsMap() || v.Size() != 1 || !v.Find(key))
    v.Fail(std::string("expected a mapping with ") + key);
  return Seconds(v.Get(key));
}

// Applies the file's keys in document order over the defaults already in `c`.
void Apply(const Field& root, GuardConfig& c) {
  if (!root.IsMap()) root.Fail("expected a mapping at the top");
  root.ExpectMap({"severity", "idle", "oom", "expected_host_processes", "slowdown", "events"});
  root.ForEachEntry([&](const std::string& key, const Field& v) {
    if (key == "severity")
      ApplySeverity(v, c);
    else if (key == "idle")
      ApplyIdle(v, c);
    else if (key == "oom")
      c.oom_ratio = OomRatio(v);
    else if (key == "slowdown")
      c.slowdown_hold_s = OneDuration(v, "hold");
    else if (key == "events")
      c.event_open_s = OneDuration(v, "open");
    else
      ApplyHostProcesses(v, c);
  });
}

}  // namespace

Expected<GuardConfig> ParseGuardConfig(std::string_view text, const std::string& label) {
  return yaml::Parse<GuardConfig>(text, label, [](const Field& root) {
    GuardConfig c;
    if (!root.IsNull()) Apply(root, c);  // an empty file keeps the defaults
    return c;
  });
}

}  // namespace gpumeter::guard
