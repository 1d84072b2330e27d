// The reader of the snapshot's serialized form (node_snapshot_json.h). Each object is read through
// Obj, which knows the path to it for errors and refuses the keys nobody took.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/json/strict_parse.h"
#include "domain/node_snapshot_json.h"
#include "domain/node_snapshot_keys.h"

namespace gpumeter::domain {
namespace {

using nlohmann::json;

// Thrown inside this file only, and turned into an Error at its edge.
struct Bad {
  std::string what;
};

class Obj {
 public:
  Obj(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw Bad{path_.empty() ? "not an object" : path_ + ": not an object"};
  }
  // Every key of the object must have been taken.
  void Done() const {
    for (const auto& [k, v] : j_.items())
      if (!taken_.count(k)) throw Bad{At(k) + ": unknown key"};
  }
  std::string At(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  const json* Find(const char* key) {
    const auto it = j_.find(key);
    if (it == j_.end()) return nullptr;
    taken_.insert(key);
    return &*it;
  }
  const json& Need(const char* key) {
    const json* v = Find(key);
    if (!v) throw Bad{At(key) + ": missing"};
    return *v;
  }

  template <typename T>
  std::optional<T> OptUInt(const char* key, uint64_t max = std::numeric_limits<T>::max()) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->is_number_unsigned()) throw Bad{At(key) + ": not an unsigned integer"};
    const auto n = v->get<uint64_t>();
    if (n > max) throw Bad{At(key) + ": " + std::to_string(n) + " is over " + std::to_string(max)};
    return static_cast<T>(n);
  }
  template <typename T>
  T UInt(const char* key, uint64_t max = std::numeric_limits<T>::max()) {
    Need(key);
    return *OptUInt<T>(key, max);
  }
  std::optional<double> OptNum(const char* key, double lo, double hi) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw Bad{At(key) + ": not a number"};
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi)
      throw Bad{At(key) + ": " + v->dump() + " is outside [" + Num(lo) + ", " + Num(hi) + "]"};
    return d;
  }
  double Number(const char* key, double lo, double hi) {
    Need(key);
    return *OptNum(key, lo, hi);
  }
  int Int(const char* key) {
    const json& v = Need(key);
    if (!v.is_number_integer() || v.get<int64_t>() < std::numeric_limits<int>::min() ||
        v.get<int64_t>() > std::numeric_limits<int>::max())
      throw Bad{At(key) + ": not a 32-bit integer"};
    return static_cast<int>(v.get<int64_t>());
  }
  std::optional<bool> OptBool(const char* key) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) throw Bad{At(key) + ": not true or false"};
    return v->get<bool>();
  }
  bool Bool(const char* key) {
    Need(key);
    return *OptBool(key);
  }
  std::string Str(const char* key) {
    const json& v = Need(key);
    if (!v.is_string()) throw Bad{At(key) + ": not a string"};
    return v.get<std::string>();
  }
  // Calls each(element, path) for the array at `key`.
  template <typename F>
  void Array(const char* key, F each) {
    const json& v = Need(key);
    if (!v.is_array()) throw Bad{At(key) + ": not an array"};
    for (size_t i = 0; i < v.size(); ++i) each(v[i], At(key) + "[" + std::to_string(i) + "]");
  }
  // The object as a map of strings, every key taken.
  std::map<std::string, std::string> Strings() {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : j_.items()) {
      if (!v.is_string()) throw Bad{At(k) + ": not a string"};
      taken_.insert(k);
      out.emplace(k, v.get<std::string>());
    }
    return out;
  }
  // The object at `key`, or none.
  std::optional<Obj> Sub(const char* key) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    return Obj(*v, At(key));
  }

 private:
  static std::string Num(double d) { return json(d).dump(); }

  const json& j_;
  std::string path_;
  std::set<std::string> taken_;
};

constexpr double kMaxWatts = 1e6;  // far above any board; a bigger figure is corrupt
constexpr double kMaxJoules = 1e18;

gpu::MemoryInfo Memory(Obj o) {
  gpu::MemoryInfo m;
  m.total_bytes = o.UInt<uint64_t>("totalBytes");
  m.used_bytes = o.UInt<uint64_t>("usedBytes");
  m.free_bytes = o.UInt<uint64_t>("freeBytes");
  m.reserved_bytes = o.OptUInt<uint64_t>("reservedBytes");
  o.Done();
  return m;
}

std::vector<gpu::GpuProcess> Processes(Obj& parent) {
  std::vector<gpu::GpuProcess> out;
  parent.Array("processes", [&](const json& j, const std::string& path) {
    Obj o(j, path);
    gpu::GpuProcess p;
    p.pid = o.UInt<uint32_t>("pid");
    const auto type = snapshot_keys::ParseProcessType(o.Str("type"));
    if (!type) throw Bad{o.At("type") + ": not compute or mps"};
    p.type = *type;
    p.used_memory_bytes = o.OptUInt<uint64_t>("usedMemoryBytes");
    p.gpu_instance_id = o.OptUInt<uint32_t>("gpuInstanceId");
    p.compute_instance_id = o.OptUInt<uint32_t>("computeInstanceId");
    o.Done();
    out.push_back(std::move(p));
  });
  return out;
}

std::vector<gpu::CallError> Errors(Obj& parent) {
  std::vector<gpu::CallError> out;
  parent.Array("errors", [&](const json& j, const std::string& path) {
    Obj o(j, path);
    out.push_back({o.Str("call"), o.Int("code"), o.Str("message")});
    o.Done();
  });
  return out;
}

gpu::GpuHealth Health(Obj o) {
  gpu::GpuHealth h;
  h.clock_event_reasons = o.OptUInt<uint64_t>("clockEventReasons");
  h.ecc_corrected = o.OptUInt<uint64_t>("eccCorrected");
  h.ecc_uncorrected = o.OptUInt<uint64_t>("eccUncorrected");
  if (auto r = o.Sub("remappedRows")) {
    h.remapped_rows = gpu::GpuHealth::RemappedRows{r->UInt<uint32_t>("correctable"),
                                                   r->UInt<uint32_t>("uncorrectable"),
                                                   r->Bool("pending"), r->Bool("failed")};
    r->Done();
  }
  if (auto r = o.Sub("retiredPages")) {
    h.retired_pages = gpu::GpuHealth::RetiredPages{
        r->UInt<uint32_t>("singleBit"), r->UInt<uint32_t>("doubleBit"), r->OptBool("pending")};
    r->Done();
  }
  o.Array("xidEvents", [&](const json& j, const std::string& path) {
    Obj x(j, path);
    h.xid_events.push_back({x.UInt<uint64_t>("xid"), x.OptUInt<uint32_t>("gpuInstanceId"),
                            x.UInt<uint64_t>("seenUs")});
    x.Done();
  });
  o.Done();
  return h;
}

gpu::MigInstanceSample Instance(Obj o) {
  gpu::MigInstanceSample m;
  m.uuid = o.Str("uuid");
  m.name = o.Str("name");
  m.gpu_instance_id = o.UInt<uint32_t>("gpuInstanceId");
  m.compute_instance_id = o.UInt<uint32_t>("computeInstanceId");
  if (auto mem = o.Sub("memory")) m.memory = Memory(std::move(*mem));
  m.processes = Processes(o);
  m.sm_active_ratio = o.OptNum("smActiveRatio", 0, 1);
  m.dram_bw_ratio = o.OptNum("dramBwRatio", 0, 1);
  m.slices = o.OptUInt<uint32_t>("slices");
  m.dcgm_gr_active = o.OptNum("dcgmGrActive", 0, 1);
  m.dcgm_dram_active = o.OptNum("dcgmDramActive", 0, 1);
  o.Done();
  return m;
}

void Samples(Obj& o, gpu::DeviceSample& d) {
  o.Array("processUtil", [&](const json& j, const std::string& path) {
    Obj s(j, path);
    d.process_util.push_back({s.UInt<uint32_t>("pid"), s.UInt<uint64_t>("timestampUs"),
                              s.UInt<uint32_t>("smPercent", 100),
                              s.UInt<uint32_t>("memoryPercent", 100)});
    s.Done();
  });
  d.process_util_window_start_us = o.UInt<uint64_t>("processUtilWindowStartUs");
  d.process_util_window_end_us = o.UInt<uint64_t>("processUtilWindowEndUs");
  d.process_util_period_us = o.OptUInt<uint64_t>("processUtilPeriodUs");
  d.process_util_uncovered_us = o.UInt<uint64_t>("processUtilUncoveredUs");
  d.process_util_buffer_span_us = o.OptUInt<uint64_t>("processUtilBufferSpanUs");
  o.Array("powerSamples", [&](const json& j, const std::string& path) {
    Obj s(j, path);
    d.power_samples.push_back({s.UInt<uint64_t>("timestampUs"), s.Number("watts", 0, kMaxWatts)});
    s.Done();
  });
}

// The fields NVML reads once per pass.
void Readings(Obj& o, gpu::DeviceSample& d) {
  if (auto mem = o.Sub("memory")) d.memory = Memory(std::move(*mem));
  d.utilization_gpu_percent = o.OptUInt<uint32_t>("utilizationGpuPercent", 100);
  d.utilization_memory_percent = o.OptUInt<uint32_t>("utilizationMemoryPercent", 100);
  d.power_watts = o.OptNum("powerWatts", 0, kMaxWatts);
  d.energy_joules = o.OptNum("energyJoules", 0, kMaxJoules);
  if (const json* m = o.Find("computeMode")) {
    const auto mode =
        m->is_string() ? snapshot_keys::ParseComputeMode(m->get<std::string>()) : std::nullopt;
    if (!mode) throw Bad{o.At("computeMode") + ": not a compute mode"};
    d.compute_mode = mode;
  }
  d.sm_active_ratio = o.OptNum("smActiveRatio", 0, 1);
  d.dram_bw_ratio = o.OptNum("dramBwRatio", 0, 1);
  d.dcgm_gr_active = o.OptNum("dcgmGrActive", 0, 1);
  d.dcgm_dram_active = o.OptNum("dcgmDramActive", 0, 1);
  if (auto w = o.Sub("dcgmWindow")) {
    d.dcgm_window =
        gpu::ActivityWindow{w->Number("activity", 0, 1), w->Number("watts", 0, kMaxWatts),
                            w->Number("seconds", 0, kMaxJoules)};
    w->Done();
  }
}

gpu::DeviceSample Device(Obj o) {
  gpu::DeviceSample d;
  d.index = o.UInt<uint32_t>("index");
  d.uuid = o.Str("uuid");
  d.name = o.Str("name");
  d.lost = o.Bool("lost");
  d.mig_enabled = o.Bool("migEnabled");
  d.processes = Processes(o);
  d.process_utilization_supported = o.Bool("processUtilizationSupported");
  d.dcgm_held = o.Bool("dcgmHeld");
  d.errors = Errors(o);
  d.health = Health(Obj(o.Need("health"), o.At("health")));
  Readings(o, d);
  Samples(o, d);
  o.Array("migInstances", [&](const json& j, const std::string& path) {
    d.mig_instances.push_back(Instance(Obj(j, path)));
  });
  d.mig_total_slices = o.OptUInt<uint32_t>("migTotalSlices");
  o.Done();
  return d;
}

gpu::GpuSnapshot Gpus(Obj o) {
  gpu::GpuSnapshot s;
  s.timestamp_us = o.UInt<uint64_t>("timestampUs");
  o.Array("devices", [&](const json& j, const std::string& path) {
    s.devices.push_back(Device(Obj(j, path)));
  });
  s.errors = Errors(o);
  s.xid_watch_ok = o.OptBool("xidWatchOk");
  s.xid_watch_error = o.Str("xidWatchError");
  o.Done();
  return s;
}

// An owner's kind and, for a container, its names; `how` is read where the caller takes it.
Owner OwnerOf(Obj& o) {
  const std::string kind = o.Str("kind");
  Owner out;
  out.kind = OwnerKindFromString(kind);
  if (ToString(out.kind) != kind) throw Bad{o.At("kind") + ": '" + kind + "' is no owner kind"};
  if (out.kind == OwnerKind::kContainer) {
    out.ns = o.Str("namespace");
    out.pod = o.Str("pod");
    out.container = o.Str("container");
  }
  return out;
}

ProcessFact Process(Obj o, int version) {
  ProcessFact p;
  p.pid = o.UInt<uint32_t>("pid");
  Obj owner(o.Need("owner"), o.At("owner"));
  const Owner who = OwnerOf(owner);
  if (who.kind == OwnerKind::kIdle) throw Bad{owner.At("kind") + ": a process is never idle"};
  p.owner = {who.kind, who.ns, who.pod, who.container, owner.Str("how")};
  owner.Done();
  if (auto s = o.Sub("start")) {
    p.start = ProcessStart{s->UInt<uint64_t>("ticks"), s->OptUInt<uint64_t>("unixUs")};
    s->Done();
  }
  p.mps_thread_fraction = o.OptNum("mpsThreadFraction", 0, 1);
  if (p.mps_thread_fraction && *p.mps_thread_fraction <= 0)
    throw Bad{o.At("mpsThreadFraction") + ": must be above 0"};
  p.comm = o.Str("comm");
  if (auto env = o.Sub("gpuEnv")) p.gpu_env = env->Strings();
  // Written only as false (met between passes, version 2 on): true is the absent key's meaning.
  if (const auto listed = o.OptBool("listed")) {
    if (version < 2) throw Bad{o.At("listed") + ": not in a version 1 snapshot"};
    if (*listed) throw Bad{o.At("listed") + ": written only as false (absent means listed)"};
    p.listed = false;
  }
  o.Done();
  return p;
}

UnitFact Unit(Obj o) {
  UnitFact u;
  u.uuid = o.Str("uuid");
  const auto mode = ParseSharingMode(o.Str("mode"));
  if (!mode) throw Bad{o.At("mode") + ": not a sharing mode"};
  u.mode = *mode;
  o.Array("holders", [&](const json& j, const std::string& path) {
    Obj h(j, path);
    Obj owner(h.Need("owner"), h.At("owner"));
    Holding holding{OwnerOf(owner), h.Number("share", 0, 1)};
    if (holding.owner.kind != OwnerKind::kContainer)
      throw Bad{owner.At("kind") + ": a holder is a container"};
    owner.Done();
    h.Done();
    u.holders.push_back(std::move(holding));
  });
  o.Done();
  return u;
}

}  // namespace

namespace {

// The format is at most this deep (snapshot, gpus, devices, a device, its instances, an instance,
// its processes, a process): a deeper document is refused as it is parsed.
constexpr int kMaxDepth = 12;

NodeSnapshot Snapshot(Obj o) {
  if (o.Str("format") != snapshot_keys::kFormat)
    throw Bad{"format: not " + std::string(snapshot_keys::kFormat)};
  const int version = o.Int("version");
  if (version < 1 || version > kNodeSnapshotVersion)
    throw Bad{"version: " + std::to_string(version) + " (this build reads 1 to " +
              std::to_string(kNodeSnapshotVersion) + ")"};
  NodeSnapshot s;
  s.sequence = o.UInt<uint64_t>("sequence");
  s.ok = o.Bool("ok");
  s.error = o.Str("error");
  s.gpus = Gpus(Obj(o.Need("gpus"), "gpus"));
  o.Array("processes", [&](const json& j, const std::string& path) {
    s.processes.push_back(Process(Obj(j, path), version));
    if (s.processes.size() > 1 && s.processes.end()[-2].pid >= s.processes.back().pid)
      throw Bad{path + ".pid: PIDs must be sorted and unique"};
  });
  o.Array("units", [&](const json& j, const std::string& path) {
    s.units.push_back(Unit(Obj(j, path)));
    if (s.units.size() > 1 && s.units.end()[-2].uuid >= s.units.back().uuid)
      throw Bad{path + ".uuid: units must be sorted by UUID and unique"};
  });
  s.allocations_known = o.Bool("allocationsKnown");
  o.Done();
  return s;
}

}  // namespace

Expected<NodeSnapshot> ReadNodeSnapshot(std::string_view text) {
  // Two equal keys in one object are a corrupt snapshot, not a choice to make.
  auto doc = json_strict::Parse(text, "snapshot", kMaxDepth);
  if (!doc) return tl::unexpected(doc.error());
  try {
    return Snapshot(Obj(*doc, ""));
  } catch (const Bad& b) {
    return MakeError(ErrorCode::kInvalidInput, "snapshot: " + b.what);
  }
}

}  // namespace gpumeter::domain
