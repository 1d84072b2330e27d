#include "sim/scenario/health_faults.h"

#include <algorithm>
#include <utility>

#include "domain/gpu_types.h"

namespace gpumeter::scenario {
namespace {

// "corrected"/"uncorrected" (ECC) or "correctable"/"uncorrectable" (rows): true if uncorrect*.
bool Uncorrectable(const yaml::Field& f, const char* yes, const char* no) {
  const std::string t = f.Child("type").Str();
  if (t != yes && t != no)
    f.Child("type").Fail("'" + t + "' (expected " + std::string(no) + " or " + yes + ")");
  return t == yes;
}

// cause: single-bit | double-bit; pages in [1, 64] (the driver's retirement table holds 64);
// pending until to_s (the reboot or driver reload that retires them).
void ParsePageRetire(const yaml::Field& f, Fault& out) {
  const std::string cause = f.Child("cause").Str();
  if (cause != "single-bit" && cause != "double-bit")
    f.Child("cause").Fail("'" + cause + "' (expected single-bit or double-bit)");
  out.uncorrectable = cause == "double-bit";
  out.count = f.Child("pages").UInt();
  if (out.count == 0 || out.count > 64) f.Child("pages").Fail("must be in [1, 64]");
  if (f.Optional("to_s") && !f.Bool("pending", false))
    f.Child("to_s").Fail("ends a pending retirement (the reboot): give pending: true");
  out.pending = f.Bool("pending", false);
}

}  // namespace

std::optional<FaultKind> FaultKindFromName(const std::string& name) {
  static const std::pair<const char*, FaultKind> kNames[] = {
      {"call-error", FaultKind::kCallError},  {"gpu-lost", FaultKind::kGpuLost},
      {"delay", FaultKind::kDelay},           {"bad-value", FaultKind::kBadValue},
      {"ecc-error", FaultKind::kEccError},    {"row-remap", FaultKind::kRowRemap},
      {"throttle", FaultKind::kThrottle},     {"xid", FaultKind::kXid},
      {"page-retire", FaultKind::kPageRetire}};
  for (const auto& [n, k] : kNames)
    if (name == n) return k;
  return std::nullopt;
}

uint64_t ClockEventReasonBit(const std::string& name) {
  for (const auto& r : gpu::ClockEventReasons())
    if (name == r.name) return r.bit;
  return 0;
}

// The events' own fields, and to_s after their start.
void ParseHealthFault(const yaml::Field& f, Fault& out) {
  ParseHealthFields(f, out);
  if (auto t = f.Optional("to_s")) {
    out.to_s = t->Double();
    if (*out.to_s <= out.from_s)
      t->Fail(std::string("must be after ") +
              (out.kind == FaultKind::kThrottle ? "from_s" : "at_s"));
  }
}

void ParseHealthFields(const yaml::Field& f, Fault& out) {
  if (f.Optional("call")) f.Child("call").Fail("a health event fails no call: leave 'call' out");
  // Each kind's own keys: another kind's would be ignored (a throttle's at_s, say).
  switch (out.kind) {
    case FaultKind::kThrottle:
      f.ExpectMap({"kind", "gpu", "from_s", "to_s", "reasons"});
      break;
    case FaultKind::kXid:
      f.ExpectMap({"kind", "gpu", "at_s", "xid", "gi"});
      break;
    case FaultKind::kEccError:
      f.ExpectMap({"kind", "gpu", "at_s", "type", "count"});
      break;
    case FaultKind::kPageRetire:
      f.ExpectMap({"kind", "gpu", "at_s", "to_s", "cause", "pages", "pending"});
      break;
    default:
      f.ExpectMap({"kind", "gpu", "at_s", "to_s", "type", "rows", "pending", "failed"});
  }
  if (!f.Optional("gpu")) f.Fail("a health event needs 'gpu'");
  out.gpu_index = static_cast<uint32_t>(f.Child("gpu").UInt());
  if (out.kind == FaultKind::kThrottle) {
    out.from_s = f.Double("from_s", 0);
    const yaml::Field reasons = f.Child("reasons");
    reasons.ExpectSequence();
    if (reasons.Size() == 0) reasons.Fail("name at least one reason");
    for (size_t i = 0; i < reasons.Size(); ++i) {
      const std::string name = reasons.At(i).Str();
      const uint64_t bit = ClockEventReasonBit(name);
      if (bit == 0)
        reasons.At(i).Fail("unknown reason '" + name +
                           "' (expected gpu_idle, applications_clocks, sw_power_cap, "
                           "hw_slowdown, sync_boost, sw_thermal, hw_thermal, hw_power_brake or "
                           "display_clock)");
      if (out.reasons & bit) reasons.At(i).Fail("'" + name + "' is named twice");
      out.reasons |= bit;
    }
    return;
  }
  out.from_s = f.Child("at_s").Double();
  if (out.kind == FaultKind::kXid) {
    out.xid = f.Child("xid").UInt();
    // XIDs run from 1 to a few hundred; 999 is the driver's "unknown".
    if (out.xid == 0 || out.xid > 999) f.Child("xid").Fail("must be in [1, 999]");
    if (auto gi = f.Optional("gi")) {
      if (gi->UInt() > 14) gi->Fail("must be a GPU instance ID in [0, 14]");
      out.gpu_instance_id = static_cast<uint32_t>(gi->UInt());
    }
    if (f.Optional("to_s")) f.Child("to_s").Fail("an xid is an event at at_s: no to_s");
    return;
  }
  if (out.kind == FaultKind::kEccError) {
    out.uncorrectable = Uncorrectable(f, "uncorrected", "corrected");
    out.count = f.Child("count").UInt();
    if (out.count == 0) f.Child("count").Fail("must be at least 1");
    return;
  }
  if (out.kind == FaultKind::kPageRetire) {
    ParsePageRetire(f, out);
    return;
  }
  out.uncorrectable = Uncorrectable(f, "uncorrectable", "correctable");
  out.count = f.UInt("rows", 0);
  if (out.count > (1u << 20)) f.Child("rows").Fail("must be at most 1048576");
  if (f.Optional("to_s") && !f.Bool("pending", false))
    f.Child("to_s").Fail("ends a pending remap (the reset): give pending: true");
  out.pending = f.Bool("pending", false);
  out.failed = f.Bool("failed", false);
  if (out.count == 0 && !out.pending && !out.failed)
    f.Fail("a row-remap event needs rows, pending or failed");
}

GpuHealth HealthAt(const Scenario& s, uint32_t gpu_index, double t_s) {
  GpuHealth h;
  for (const auto& f : s.faults) {
    if (!IsHealthEvent(f.kind) || !f.gpu_index || *f.gpu_index != gpu_index || t_s < f.from_s)
      continue;
    const bool within = !f.to_s || t_s < *f.to_s;
    switch (f.kind) {
      case FaultKind::kEccError:
        (f.uncorrectable ? h.ecc_uncorrected : h.ecc_corrected) += f.count;
        break;
      case FaultKind::kRowRemap:
        (f.uncorrectable ? h.remapped_uncorrectable : h.remapped_correctable) +=
            static_cast<uint32_t>(f.count);  // at most 2^20, the loader says
        h.remap_pending = h.remap_pending || (f.pending && within);
        h.remap_failed = h.remap_failed || f.failed;
        break;
      case FaultKind::kThrottle:
        if (within) h.clock_event_reasons |= f.reasons;
        break;
      case FaultKind::kPageRetire:
        (f.uncorrectable ? h.retired_double_bit : h.retired_single_bit) +=
            static_cast<uint32_t>(f.count);  // at most 64, the loader says
        h.retire_pending = h.retire_pending || (f.pending && within);
        break;
      default:
        break;
    }
  }
  return h;
}

}  // namespace gpumeter::scenario
