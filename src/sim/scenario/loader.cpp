#include "sim/scenario/loader.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "common/bounded_file.h"
#include "common/yaml/reader.h"
#include "domain/mig_profiles.h"
#include "domain/sharing_mode.h"
#include "sim/scenario/health_faults.h"
#include "sources/nvml/nvml_library.h"

namespace gpumeter::scenario {
namespace {

using yaml::Field;

constexpr uint64_t kMiB = 1024ull * 1024ull;

uint64_t MiB(const Field& f) {
  const uint64_t v = f.UInt();
  if (v > (UINT64_MAX / kMiB)) f.Fail("too large");
  return v * kMiB;
}

domain::SharingMode ParseSharingMode(const Field& f) {
  const auto s = f.Str();
  // MIG is a unit's nature (its profile), not a sharing a scenario declares.
  if (const auto m = domain::ParseSharingMode(s); m && *m != domain::SharingMode::kMig) return *m;
  f.Fail("unknown sharing mode '" + s + "' (expected exclusive, time-slicing or mps)");
}

ComputeMode ParseComputeMode(const Field& f) {
  const auto s = f.Str();
  if (s == "default") return ComputeMode::kDefault;
  if (s == "exclusive-process") return ComputeMode::kExclusiveProcess;
  if (s == "prohibited") return ComputeMode::kProhibited;
  f.Fail("unknown compute mode '" + s + "' (expected default, exclusive-process or prohibited)");
}

std::map<std::string, std::string> ParseStringMap(const Field& f) {
  if (!f.IsMap()) f.Fail("expected a mapping of strings");
  std::map<std::string, std::string> out;
  f.ForEachEntry([&](const std::string& k, const Field& v) { out[k] = v.Str(); });
  return out;
}

MigInstance ParseMigInstance(const Field& f) {
  f.ExpectMap({"gi", "ci", "profile", "uuid", "memory_mib", "slices", "compute_slices"});
  MigInstance m;
  m.gi_id = static_cast<uint32_t>(f.Child("gi").UInt());
  m.ci_id = static_cast<uint32_t>(f.UInt("ci", 0));
  m.profile = f.Child("profile").Str();
  m.uuid = f.Child("uuid").Str();
  if (m.uuid.rfind("MIG-", 0) != 0) f.Child("uuid").Fail("a MIG UUID must start with 'MIG-'");
  m.memory_bytes = MiB(f.Child("memory_mib"));
  if (m.memory_bytes == 0) f.Child("memory_mib").Fail("must be positive");
  m.slices = static_cast<uint32_t>(f.Child("slices").UInt());
  if (m.slices == 0) f.Child("slices").Fail("must be positive");
  m.compute_slices = static_cast<uint32_t>(f.UInt("compute_slices", m.slices));
  if (m.compute_slices == 0 || m.compute_slices > m.slices)
    f.Child("compute_slices").Fail("must be in [1, slices]");
  // The driver's profile names say their slices: "<g>g.<mem>gb" holds g slices, and a compute
  // instance profile "<c>c.<g>g.<mem>gb" c of them for compute. A name that says otherwise is an
  // instance no driver makes.
  static const std::regex kProfile(
      R"(^(?:([1-7])c\.)?([1-7])g(?:\.[0-9]+gb)?(?:[+-][a-z0-9.]+)?$)");
  std::smatch match;
  if (!std::regex_match(m.profile, match, kProfile))
    f.Child("profile").Fail("'" + m.profile +
                            "' is not a MIG profile name (e.g. 1g.10gb, 1c.3g.40gb)");
  if (std::stoul(match[2].str()) != m.slices)
    f.Child("slices").Fail("profile " + m.profile + " holds " + match[2].str() + " slices, not " +
                           std::to_string(m.slices));
  if (const auto cs = f.Optional("compute_slices");
      match[1].matched && std::stoul(match[1].str()) != m.compute_slices)
    (cs ? *cs : f)
        .Fail("profile " + m.profile + " computes on " + match[1].str() + " slices, not " +
              std::to_string(m.compute_slices));
  return m;
}

// An instance on a GPU whose model has a profile table (domain/mig_profiles.h) is one of its
// profiles, with that profile's slices: a name of another model's table, or an A100 "2g.20gb"
// of 3 slices, is no instance a driver makes. Past the names' own checks (ParseMigInstance).
const domain::MigProfile& CheckMigProfile(const domain::MigModel& table, const MigInstance& m,
                                          const Field& f) {
  const auto* p = domain::FindMigProfile(table, m.profile);
  if (!p) {
    std::string known;
    for (const auto& q : table.profiles) known += (known.empty() ? "" : ", ") + q.name;
    f.Child("profile").Fail("'" + m.profile + "' is not a MIG profile of the " + table.model +
                            " (" + known + ")");
  }
  if (p->slices != m.slices)
    f.Child("slices").Fail("profile " + p->name + " of the " + table.model + " holds " +
                           std::to_string(p->slices) + " slices, not " + std::to_string(m.slices));
  return *p;
}

// The instances together: their slices within total_slices, and on a model with a table no
// profile more often than it fits on one GPU.
void CheckMigTotals(const Gpu& g, const domain::MigModel* table, const Field& instances) {
  uint64_t mem = 0;
  uint32_t slices = 0;
  std::map<std::string, uint32_t> per_profile;
  std::set<uint32_t> gpu_instances;
  for (size_t i = 0; i < g.mig_instances.size(); ++i) {
    const auto& m = g.mig_instances[i];
    // Compute instances of one GPU instance share its memory and slices: counted once.
    const bool first_on_gi = gpu_instances.insert(m.gi_id).second;
    if (first_on_gi) mem += m.memory_bytes, slices += m.slices;
    if (table) {
      const auto& p = CheckMigProfile(*table, m, instances.At(i));
      if (first_on_gi && ++per_profile[p.name] > p.max_instances)
        instances.At(i).Fail("the " + table->model + " holds at most " +
                             std::to_string(p.max_instances) + " instances of " + p.name);
    }
  }
  if (mem > g.memory_bytes) instances.Fail("MIG instances use more memory than the GPU has");
  if (slices > g.mig_total_slices)
    instances.Fail("MIG instances use more slices than total_slices");
}

Gpu ParseGpu(const Field& f) {
  f.ExpectMap({"index", "uuid", "model", "memory_mib", "reserved_mib", "power",
               "energy_start_joules", "compute_mode", "gpm", "per_process_utilization", "forbidden",
               "sharing", "mig", "dcgm_exporter", "dcgm_interval_s"});
  Gpu g;
  g.index = static_cast<uint32_t>(f.Child("index").UInt());
  g.uuid = f.Child("uuid").Str();
  if (g.uuid.rfind("GPU-", 0) != 0) f.Child("uuid").Fail("a GPU UUID must start with 'GPU-'");
  g.model = f.Child("model").Str();
  g.memory_bytes = MiB(f.Child("memory_mib"));
  if (g.memory_bytes == 0) f.Child("memory_mib").Fail("must be positive");
  if (auto r = f.Optional("reserved_mib")) g.reserved_bytes = MiB(*r);
  if (g.reserved_bytes >= g.memory_bytes) f.Child("reserved_mib").Fail("must be below memory_mib");
  const Field power = f.Child("power");
  power.ExpectMap({"idle_watts", "max_watts"});
  // A board draws at most a few kilowatts (an H200 NVL is rated 600 W); more is a typo.
  constexpr double kMaxWatts = 5000;
  g.power.idle_watts = power.Child("idle_watts").Double();
  g.power.max_watts = power.Child("max_watts").Double();
  for (const char* k : {"idle_watts", "max_watts"})
    if (const double w = power.Child(k).Double(); w < 0 || w > kMaxWatts)
      power.Child(k).Fail("watts must be in [0, 5000]");
  if (g.power.idle_watts < 0) power.Child("idle_watts").Fail("must not be negative");
  if (g.power.max_watts < g.power.idle_watts)
    power.Child("max_watts").Fail("must be >= idle_watts");
  g.energy_start_joules = f.Double("energy_start_joules", 0);
  if (g.energy_start_joules < 0) f.Child("energy_start_joules").Fail("must not be negative");
  if (auto c = f.Optional("compute_mode")) g.compute_mode = ParseComputeMode(*c);
  g.gpm_supported = f.Bool("gpm", false);
  g.per_process_utilization = f.Bool("per_process_utilization", true);
  g.forbidden = f.Bool("forbidden", false);
  g.dcgm_exporter = f.Bool("dcgm_exporter", false);
  g.dcgm_interval_s = f.Double("dcgm_interval_s", 30);
  if (g.dcgm_interval_s < 1 || g.dcgm_interval_s > 3600)
    f.Child("dcgm_interval_s").Fail("must be in [1, 3600] seconds");
  if (auto s = f.Optional("sharing")) {
    s->ExpectMap({"mode", "replicas"});
    g.sharing.mode = ParseSharingMode(s->Child("mode"));
    g.sharing.replicas = static_cast<uint32_t>(s->UInt("replicas", 1));
    if (g.sharing.replicas == 0) s->Child("replicas").Fail("must be at least 1");
    if (g.sharing.mode == domain::SharingMode::kExclusive && g.sharing.replicas != 1)
      s->Child("replicas").Fail("an exclusive GPU has exactly 1 replica");
  }
  if (auto m = f.Optional("mig")) {
    m->ExpectMap({"total_slices", "instances"});
    g.mig_enabled = true;
    // 4 slices on an A30, 7 on the other MIG GPUs (MIG user guide, "Supported GPUs").
    const auto* table = domain::MigModelFor(g.model);
    const uint32_t most = table ? table->total_slices : 7;
    g.mig_total_slices = static_cast<uint32_t>(m->UInt("total_slices", most));
    if (g.mig_total_slices == 0 || g.mig_total_slices > most)
      m->Child("total_slices")
          .Fail("must be in [1, " + std::to_string(most) + "]: " + g.model + " has " +
                std::to_string(most) + " MIG slices");
    const Field inst = m->Child("instances");
    inst.ExpectSequence();
    for (size_t i = 0; i < inst.Size(); ++i)
      g.mig_instances.push_back(ParseMigInstance(inst.At(i)));
    CheckMigTotals(g, table, inst);
  }
  return g;
}

Claim ParseClaim(const Field& f) {
  f.ExpectMap({"name", "driver", "pool", "device", "share_id"});
  Claim c;
  c.name = f.Child("name").Str();
  c.driver = f.Str("driver", kNvidiaDraDriver);
  c.pool = f.Str("pool", "");  // the node's name, filled in once the node is known
  c.device = f.Child("device").Str();
  if (auto id = f.Optional("share_id")) c.share_id = id->Str();
  if (c.name.empty()) f.Child("name").Fail("must not be empty");
  if (c.device.empty()) f.Child("device").Fail("must not be empty");
  return c;
}

Pod ParsePod(const Field& f) {
  f.ExpectMap({"namespace", "name", "uid", "qos", "labels", "containers"});
  Pod p;
  p.ns = f.Child("namespace").Str();
  p.name = f.Child("name").Str();
  p.uid = f.Child("uid").Str();
  p.qos = f.Str("qos", "BestEffort");
  if (p.qos != "Guaranteed" && p.qos != "Burstable" && p.qos != "BestEffort")
    f.Child("qos").Fail("expected Guaranteed, Burstable or BestEffort, got '" + p.qos + "'");
  if (auto l = f.Optional("labels")) p.labels = ParseStringMap(*l);
  const Field cs = f.Child("containers");
  cs.ExpectSequence();
  for (size_t i = 0; i < cs.Size(); ++i) {
    const Field c = cs.At(i);
    c.ExpectMap({"name", "id", "devices", "requests", "claims"});
    Container out;
    out.name = c.Child("name").Str();
    out.id = c.Child("id").Str();
    if (auto d = c.Optional("devices")) {
      d->ExpectSequence();
      for (size_t j = 0; j < d->Size(); ++j) out.device_ids.push_back(d->At(j).Str());
    }
    if (auto r = c.Optional("requests")) out.requests = ParseStringMap(*r);
    if (auto cl = c.Optional("claims")) {
      cl->ExpectSequence();
      for (size_t j = 0; j < cl->Size(); ++j) out.claims.push_back(ParseClaim(cl->At(j)));
    }
    p.containers.push_back(std::move(out));
  }
  return p;
}

DeviceUsage ParseUsage(const Field& f) {
  f.ExpectMap({"unit", "memory_mib", "memory_growth_mib_per_s", "memory_max_mib", "sm_pct", "sm",
               "mem_pct", "mem"});
  DeviceUsage u;
  u.unit_uuid = f.Child("unit").Str();
  u.memory_bytes = MiB(f.Child("memory_mib"));
  u.memory_growth_bytes_per_s = f.Double("memory_growth_mib_per_s", 0) * static_cast<double>(kMiB);
  if (u.memory_growth_bytes_per_s < 0 || u.memory_growth_bytes_per_s > 1e5 * kMiB)
    f.Child("memory_growth_mib_per_s").Fail("must be in [0, 100000] MiB/s");
  if (auto m = f.Optional("memory_max_mib")) {
    u.memory_max_bytes = MiB(*m);
    if (*u.memory_max_bytes < u.memory_bytes) m->Fail("must be >= memory_mib");
  }
  auto pct = [](const Field& p) {
    const double v = p.Double();
    if (v < 0 || v > 100) p.Fail("must be between 0 and 100, got " + std::to_string(v));
    return v / 100.0;
  };
  // A constant `<name>_pct` or points `<name>: [{at_s, pct}, …]`, into `out`.
  auto points = [&](const char* constant, const char* series, std::vector<DutyPoint>& out) {
    if (f.Has(constant) && f.Has(series))
      f.Fail(std::string("give either ") + constant + " or " + series + ", not both");
    if (auto c = f.Optional(constant)) out.push_back({0.0, pct(*c)});
    if (auto s = f.Optional(series)) {
      s->ExpectSequence();
      for (size_t i = 0; i < s->Size(); ++i) {
        const Field p = s->At(i);
        p.ExpectMap({"at_s", "pct"});
        DutyPoint d{p.Child("at_s").Double(), pct(p.Child("pct"))};
        if (!out.empty() && d.at_s <= out.back().at_s)
          p.Child("at_s").Fail("points must be in increasing time order");
        out.push_back(d);
      }
    }
  };
  points("sm_pct", "sm", u.duty);
  if (f.Has("mem_pct") || f.Has("mem")) points("mem_pct", "mem", u.memory_duty.emplace());
  return u;
}

// `name_hex`: a name as bytes, two hex digits each. YAML text is Unicode ("\xff" in a quoted
// string is U+00FF, two bytes in UTF-8), and a command name is whatever bytes a process set.
std::string HexName(const Field& f) {
  const std::string hex = f.Str();
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    unsigned byte = 0;
    const auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    // Not hex, or 00: a command name is a C string.
    if (ec != std::errc() || end != hex.data() + i + 2 || byte == 0) break;
    out += static_cast<char>(byte);
  }
  if (hex.empty() || out.size() * 2 != hex.size())
    f.Fail("expected pairs of hex digits, none 00, got '" + hex + "'");
  return out;
}

Process ParseProcess(const Field& f) {
  f.ExpectMap({"pid", "name", "name_hex", "container", "env", "list", "start_s", "end_s", "usage"});
  Process p;
  const uint64_t pid = f.Child("pid").UInt();
  if (pid == 0 || pid > 4194304) f.Child("pid").Fail("must be between 1 and 4194304 (pid_max)");
  p.pid = static_cast<uint32_t>(pid);
  p.name = f.Str("name", "process");
  if (const auto hex = f.Optional("name_hex")) {
    if (f.Has("name")) hex->Fail("give either name or name_hex, not both");
    p.name = HexName(*hex);
  }
  if (auto c = f.Optional("container")) {
    const auto s = c->Str();
    const auto a = s.find('/');
    const auto b = a == std::string::npos ? a : s.find('/', a + 1);
    if (b == std::string::npos || s.find('/', b + 1) != std::string::npos)
      c->Fail("expected 'namespace/pod/container', got '" + s + "'");
    p.container = ContainerRef{s.substr(0, a), s.substr(a + 1, b - a - 1), s.substr(b + 1)};
  }
  if (auto e = f.Optional("env")) p.env = ParseStringMap(*e);
  const auto list = f.Str("list", "compute");
  if (list == "mps")
    p.list = ProcessList::kMps;
  else if (list != "compute")
    f.Child("list").Fail("expected compute or mps, got '" + list + "'");
  p.start_s = f.Double("start_s", 0);
  if (p.start_s < 0) f.Child("start_s").Fail("must not be negative");
  if (auto e = f.Optional("end_s")) {
    p.end_s = e->Double();
    if (*p.end_s <= p.start_s) e->Fail("must be after start_s");
  }
  const Field us = f.Child("usage");
  us.ExpectSequence();
  for (size_t i = 0; i < us.Size(); ++i) p.usage.push_back(ParseUsage(us.At(i)));
  return p;
}

// A `process-exit` fault is applied to its process's end_s here and yields no Fault.
std::optional<Fault> ParseFault(const Field& f, Scenario& s) {
  const auto kind = f.Child("kind").Str();
  if (kind != "process-exit" && !FaultKindFromName(kind))
    f.Child("kind").Fail("unknown fault kind '" + kind +
                         "' (expected call-error, gpu-lost, delay, bad-value, process-exit, "
                         "ecc-error, row-remap, page-retire, throttle or xid)");
  // Health events check their own keys (health_faults.cpp); the others share these.
  if (const auto k = FaultKindFromName(kind); !k || !IsHealthEvent(*k))
    f.ExpectMap(
        {"kind", "call", "gpu", "code", "from_s", "to_s", "delay_ms", "pid", "at_s", "value"});
  Fault out;
  if (kind == "process-exit") {
    // Shorthand for a process's end_s; applied once all processes are known.
    const auto pid = f.Child("pid").UInt();
    const double at = f.Child("at_s").Double();
    bool found = false;
    for (auto& p : s.processes) {
      if (p.pid == pid && p.start_s < at && (!p.end_s || *p.end_s > at)) {
        p.end_s = at;
        found = true;
      }
    }
    if (!found) f.Child("pid").Fail("no process with this pid is running at at_s");
    return std::nullopt;
  }
  out.kind = *FaultKindFromName(kind);  // known: checked above
  if (IsHealthEvent(out.kind)) {
    ParseHealthFault(f, out);
    return out;
  }
  out.call = f.Str("call", out.kind == FaultKind::kGpuLost ? "*" : "");
  if (out.kind != FaultKind::kGpuLost && out.call.empty()) f.Fail("missing required field 'call'");
  // A misspelt call would match nothing and fault nothing, while its window still reads as a
  // fault: only the calls the agent makes (the symbols its loader resolves), or "*".
  if (const auto& calls = nvml::AllSymbolNames();
      out.call != "*" && std::find(calls.begin(), calls.end(), out.call) == calls.end())
    f.Child("call").Fail("'" + out.call + "' is no NVML call the agent makes (e.g. " +
                         "nvmlDeviceGetPowerUsage; \"*\" for every call)");
  if (auto g = f.Optional("gpu")) out.gpu_index = static_cast<uint32_t>(g->UInt());
  if (out.kind == FaultKind::kGpuLost && !out.gpu_index) f.Fail("a gpu-lost fault needs 'gpu'");
  if (out.kind == FaultKind::kCallError) {
    out.code = static_cast<int>(f.Child("code").UInt());
    if (out.code == 0) f.Child("code").Fail("must be a non-zero nvmlReturn_t");
  }
  if (out.kind == FaultKind::kDelay) {
    out.delay_ms = static_cast<uint32_t>(f.Child("delay_ms").UInt());
  }
  if (out.kind == FaultKind::kBadValue) {
    if (out.call != "nvmlDeviceGetSamples")
      f.Child("call").Fail("bad-value is made for nvmlDeviceGetSamples only");
    const std::string value = f.Child("value").Str();
    if (value == "zero")
      out.bad_value = BadValue::kZero;
    else if (value == "huge")
      out.bad_value = BadValue::kHuge;
    else if (value == "stale")
      out.bad_value = BadValue::kStale;
    else if (value == "type")
      out.bad_value = BadValue::kType;
    else
      f.Child("value").Fail("'" + value + "' (expected zero, huge, stale or type)");
  }
  out.from_s = f.Double("from_s", 0);
  if (auto t = f.Optional("to_s")) {
    out.to_s = t->Double();
    if (*out.to_s <= out.from_s) t->Fail("must be after from_s");
  }
  return out;
}

Scenario ParseRoot(const Field& root) {
  root.ExpectMap({"name", "description", "node", "node_object", "duration_s", "driver", "gpus",
                  "pods", "processes", "faults"});
  Scenario s;
  s.name = root.Child("name").Str();
  s.description = root.Str("description", "");
  s.node_name = root.Str("node", "sim-node-0");
  if (auto n = root.Optional("node_object")) {
    n->ExpectMap({"labels", "provider_id"});
    Scenario::NodeObject o;
    if (auto l = n->Optional("labels")) o.labels = ParseStringMap(*l);
    o.provider_id = n->Str("provider_id", "");
    s.node_object = std::move(o);
  }
  s.duration_s = root.Double("duration_s", 300);
  if (s.duration_s <= 0 || s.duration_s > 30 * 86400)
    root.Child("duration_s").Fail("must be in (0, 2592000] seconds (30 days)");
  if (auto d = root.Optional("driver")) {
    d->ExpectMap({"version", "nvml_version", "cuda_version"});
    s.driver.version = d->Str("version", s.driver.version);
    s.driver.nvml_version = d->Str("nvml_version", s.driver.nvml_version);
    s.driver.cuda_version = static_cast<int>(d->UInt("cuda_version", 13000));
  }
  const Field gpus = root.Child("gpus");
  gpus.ExpectSequence();
  for (size_t i = 0; i < gpus.Size(); ++i) s.gpus.push_back(ParseGpu(gpus.At(i)));
  if (auto pods = root.Optional("pods")) {
    pods->ExpectSequence();
    for (size_t i = 0; i < pods->Size(); ++i) s.pods.push_back(ParsePod(pods->At(i)));
    // A claim without a pool is in the NVIDIA driver's pool: the node's name.
    for (auto& p : s.pods)
      for (auto& c : p.containers)
        for (auto& cl : c.claims)
          if (cl.pool.empty()) cl.pool = s.node_name;
  }
  if (auto procs = root.Optional("processes")) {
    procs->ExpectSequence();
    for (size_t i = 0; i < procs->Size(); ++i) s.processes.push_back(ParseProcess(procs->At(i)));
  }
  if (auto faults = root.Optional("faults")) {
    faults->ExpectSequence();
    for (size_t i = 0; i < faults->Size(); ++i) {
      if (auto f = ParseFault(faults->At(i), s)) s.faults.push_back(std::move(*f));
    }
  }
  return s;
}

}  // namespace

Expected<Scenario> ParseScenario(const std::string& yaml_text, const std::string& source_name) {
  auto s = yaml::Parse<Scenario>(
      yaml_text, source_name,
      [&](const Field& root) -> Expected<Scenario> {
        if (root.IsNull())
          return MakeError(ErrorCode::kInvalidInput, source_name + ": the scenario is empty");
        return ParseRoot(root);
      },
      yaml::KeyWord::kField);
  if (!s) return s;
  s->source = source_name;
  if (auto v = Validate(*s); !v) return tl::unexpected(v.error());
  return s;
}

Expected<Scenario> LoadScenarioFile(const std::string& path) {
  // The bundled scenarios are a few KiB; 8 MiB is thousands of pods. A 50 MB file would take
  // minutes and gigabytes to load.
  constexpr size_t kMaxScenarioBytes = 8u << 20;
  auto text = ReadBoundedFile(path, kMaxScenarioBytes);
  if (!text && text.error().code == ErrorCode::kNotFound)
    return MakeError(ErrorCode::kNotFound, path + ": cannot open scenario file");
  if (!text) return MakeError(ErrorCode::kInvalidInput, text.error().message);
  return ParseScenario(*text, path);
}

Expected<std::string> ResolveScenarioPath(const std::string& name_or_file,
                                          const std::vector<std::string>& search_dirs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".yaml")) {
    if (fs::is_regular_file(name_or_file, ec)) return name_or_file;
    return MakeError(ErrorCode::kNotFound, name_or_file + ": no such scenario file");
  }
  std::string looked;
  for (const auto& dir : search_dirs) {
    const auto candidate = (fs::path(dir) / (name_or_file + ".yaml")).string();
    if (fs::is_regular_file(candidate, ec)) return candidate;
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  std::string names;
  for (const auto& dir : search_dirs)
    for (const auto& n : ListScenarios(dir)) names += (names.empty() ? "" : ", ") + n;
  return MakeError(ErrorCode::kNotFound,
                   "no bundled scenario named '" + name_or_file + "' (looked in " + looked +
                       "; available: " + (names.empty() ? "none" : names) + ")");
}

std::vector<std::string> ListScenarios(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") out.push_back(it->path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpumeter::scenario
