#include "core/rightsize/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/enum_names.h"
#include "core/rightsize/mig_profiles.h"

namespace gpumeter::rightsize {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// "24 h", "23.9 h", "45 min": hours as a person says them.
std::string Hours(double h) {
  if (h < 1) return fmt::format("{:.0f} min", std::ceil(h * 60));
  return std::abs(h - std::round(h)) < 0.05 ? fmt::format("{:.0f} h", h)
                                            : fmt::format("{:.1f} h", h);
}

std::string Describe(const Held& u) {
  if (u.unit.Kind() == domain::UnitKind::kMigInstance) return "MIG " + u.unit.mig_profile;
  if (u.share >= 0.999) return "whole GPU";
  const auto n = std::lround(1 / u.share);
  return fmt::format("1/{} of {} GPU", n,
                     u.unit.mode == domain::SharingMode::kMps ? "an MPS" : "a time-sliced");
}

// The code of a held unit (Recommendation::current_code).
std::string Code(const Held& u) {
  if (u.unit.Kind() == domain::UnitKind::kMigInstance) return "mig-" + u.unit.mig_profile;
  if (u.share >= 0.999) return "gpu";
  return fmt::format("{}-{}", u.unit.mode == domain::SharingMode::kMps ? "mps" : "time-slicing",
                     std::lround(1 / u.share));
}

std::string CurrentCode(const WorkloadHistory& h) {
  std::map<std::string, int> kinds;
  for (const auto& u : h.held) ++kinds[Code(u)];
  std::string out;
  for (const auto& [code, n] : kinds)
    out += (out.empty() ? "" : "+") + (n == 1 ? code : fmt::format("{}x{}", n, code));
  return out;
}

// What the workload holds, in words: "whole GPU", "2 whole GPUs", "2 x MIG 1g.10gb", or the
// different kinds joined ("whole GPU + MIG 3g.40gb"), not a count of units.
std::string Current(const WorkloadHistory& h) {
  std::map<std::string, int> kinds;
  for (const auto& u : h.held) ++kinds[Describe(u)];
  std::string out;
  for (const auto& [what, n] : kinds)
    out += (out.empty() ? "" : " + ") + (n == 1                ? what
                                         : what == "whole GPU" ? fmt::format("{} whole GPUs", n)
                                                               : fmt::format("{} x {}", n, what));
  return out;
}

// The GPU's memory for a held unit: its own (a whole GPU), or an instance's scaled up by its
// profile's memory fraction.
std::optional<double> GpuMemory(const Held& u, const MigModel* table) {
  if (!u.unit_memory_bytes) return std::nullopt;
  if (u.unit.mig_profile.empty()) return *u.unit_memory_bytes;
  if (!table) return std::nullopt;
  const auto* p = domain::FindMigProfile(*table, u.unit.mig_profile);
  if (!p) return std::nullopt;
  return *u.unit_memory_bytes * 8.0 / p->memory_eighths;
}

struct Candidate {
  Recommendation r;
  const MigProfile* mig = nullptr;  // the smallest profile that fits, below the whole GPU
  double gpu_memory = 0;
  bool whole_exclusive = false;
};

// The evidence of one workload that holds something now: what it holds, its targets, and
// whether its model has a price (savings are worked out once the action is known).
Candidate Evidence(const WorkloadKey& key, const WorkloadHistory& h, const cost::Pricing& pricing,
                   const RecommendOptions& o) {
  Candidate c;
  auto& r = c.r;
  r.key = key;
  r.pods.assign(h.pods.begin(), h.pods.end());
  r.node = h.held.front().unit.node;
  r.model = h.held.front().unit.model;
  r.current = Current(h);
  r.replicas = std::max<uint32_t>(1, h.replicas);
  r.current_gpu = r.recommended_gpu = h.HeldGpuFraction();
  r.recommended = "keep " + r.current;
  r.current_code = r.recommended_code = CurrentCode(h);
  r.days = static_cast<double>(h.last_s + 60 - h.first_s) / 86400.0;
  r.confidence = h.Confidence();
  r.samples = h.samples;
  r.memory_p95_bytes = h.memory_peaks.Percentile(0.95);
  r.compute_p90 = h.compute.Percentile(0.90);
  r.memory_peak_bytes = h.peak_memory_bytes;
  r.compute_peak = h.peak_compute;
  r.memory_target_bytes =
      std::max(r.memory_p95_bytes.value_or(0), h.peak_memory_bytes) * (1 + o.margin);
  r.compute_target = r.compute_p90.value_or(0) * (1 + o.margin);
  if (h.traffic_samples > 0) r.traffic_p90 = h.traffic.Percentile(0.90);
  r.traffic_target = r.traffic_p90.value_or(0) * (1 + o.margin);
  if (const auto q = pricing.Quote(r.model, pricing.InstanceTypeOf(r.node))) {
    r.currency = pricing.currency(), r.price_source = q->source;
    r.monthly_savings = 0.0;
  }
  return c;
}

// Keep, saying so, when the history is too short to go by (VPA's confidence).
bool TooShort(Recommendation& r, const WorkloadHistory& h, const RecommendOptions& o) {
  const double min_conf = o.min_history_s / 86400.0;
  if (!(h.samples == 0 || r.confidence + 1e-9 < min_conf)) return false;
  // In plain words: how much history there is, how much a recommendation needs, how much more.
  const double more_h = std::max(0.0, (min_conf - r.confidence) * 24);
  r.reason = fmt::format(
      "history too short to say: {} minutes of use sampled; a recommendation needs {} ({} more)",
      h.minutes, Hours(o.min_history_s / 3600), Hours(more_h));
  return true;
}

// Reclaim when idle through its history: the P99 of its use is under idle_below of what it holds.
bool Idle(Recommendation& r, const WorkloadHistory& h, const RecommendOptions& o) {
  const auto p99 = h.compute.Percentile(0.99).value_or(0);
  if (!(h.peak_compute < o.idle_below * r.current_gpu &&
        p99 < o.idle_below * r.current_gpu + 1e-12))
    return false;
  r.action = Action::kReclaim;
  r.recommended = "release it";
  r.recommended_code = "release";
  r.recommended_gpu = 0;
  r.reason = fmt::format(
      "used at most {:.2f} % of a GPU while holding {:.2f} GPU, over {:.1f} h of history",
      100 * h.peak_compute, r.current_gpu, r.days * 24);
  return true;
}

// The smallest profile below the whole GPU that holds both targets; null when none does.
const MigProfile* SmallestMigThatFits(const MigModel& table, double gpu_memory,
                                      const Recommendation& r) {
  for (const auto& p : table.profiles) {
    if (p.slices >= table.total_slices) break;  // the whole GPU is not a move
    // A profile's share of the memory bandwidth is its share of the memory controllers, which MIG
    // partitions with the memory: its eighths.
    if (MigProfileMemory(p, gpu_memory) >= r.memory_target_bytes &&
        MigComputeShare(table, p) >= r.compute_target && p.memory_eighths / 8.0 >= r.traffic_target)
      return &p;
  }
  return nullptr;
}

// "Keep" because it fits, or because it needs more than it holds: say which.
std::string KeepReason(const Recommendation& r, const Held& u) {
  std::vector<std::string> over;
  if (r.compute_target > r.current_gpu + 1e-9)
    over.push_back(fmt::format("compute target {:.1f} % of a GPU > the {:.1f} % it holds",
                               100 * r.compute_target, 100 * r.current_gpu));
  if (u.unit_memory_bytes && r.memory_target_bytes > *u.unit_memory_bytes)
    over.push_back(
        fmt::format("memory target {:.1f} GiB > the unit's {:.1f} GiB (out-of-memory risk)",
                    r.memory_target_bytes / kGiB, *u.unit_memory_bytes / kGiB));
  if (!over.empty()) return fmt::format("needs more than it holds: {}", fmt::join(over, "; "));
  return fmt::format(
      "fits its allocation: targets {:.1f} GiB and {:.1f} % of a GPU within what it holds",
      r.memory_target_bytes / kGiB, 100 * r.compute_target);
}

// A workload on one unit: a smaller MIG profile where one fits, else keep (with why). Notes what
// sharing needs: whether it holds a whole GPU alone, and that GPU's memory.
void SizeOneUnit(Candidate& c, const WorkloadHistory& h) {
  auto& r = c.r;
  const auto& u = h.held.front();
  const auto* table = MigModelFor(r.model);
  const auto gpu_memory = GpuMemory(u, table);
  c.whole_exclusive = u.unit.mig_profile.empty() && u.share >= 0.999;
  if ((!u.unit.mig_profile.empty() || u.share >= 0.999) && gpu_memory) {
    c.gpu_memory = *gpu_memory;
    if (table) c.mig = SmallestMigThatFits(*table, *gpu_memory, r);
  }
  r.reason = KeepReason(r, u);
  if (c.mig && MigComputeShare(*table, *c.mig) < r.current_gpu - 1e-9) {
    r.action = Action::kMig;
    r.recommended = "MIG " + c.mig->name;
    r.recommended_code = "mig-" + c.mig->name;
    r.recommended_gpu = MigComputeShare(*table, *c.mig);
    r.reason = fmt::format(
        "memory target {:.1f} GiB ≤ {:.1f} GiB ({}/8 of the GPU, {:.0f} % counted), compute "
        "target {:.1f} % ≤ {}/{} of the GPU, {}",
        r.memory_target_bytes / kGiB, MigProfileMemory(*c.mig, c.gpu_memory) / kGiB,
        c.mig->memory_eighths, 100 * kMigMemoryUsable, 100 * r.compute_target, c.mig->slices,
        table->total_slices,
        r.traffic_p90 ? fmt::format("memory traffic target {:.1f} % ≤ {}/8 of its bandwidth",
                                    100 * r.traffic_target, c.mig->memory_eighths)
                      : std::string("memory traffic not measured (its bandwidth not checked)"));
  } else if (!table && c.whole_exclusive) {
    r.reason = "no MIG on this GPU; no other workload to share it with";
  }
}

// One workload on its own: keep (too short), reclaim, MIG or keep; sharing is decided after.
Candidate Assess(const WorkloadKey& key, const WorkloadHistory& h, const cost::Pricing& pricing,
                 const RecommendOptions& o) {
  auto c = Evidence(key, h, pricing, o);
  if (TooShort(c.r, h, o) || Idle(c.r, h, o)) return c;
  if (h.held.size() != 1)
    c.r.reason = "holds several units: multi-GPU workloads are not resized";
  else
    SizeOneUnit(c, h);
  return c;
}

// Whole exclusive GPUs that could share, by model (across nodes: a pod moves to whichever node
// keeps the shared GPU): single replicas (replicas are resized alike, not packed) with a known GPU
// memory, kept or moved to MIG on a long enough history.
std::map<std::string, std::vector<Candidate*>> SharingPools(std::vector<Candidate>& all) {
  std::map<std::string, std::vector<Candidate*>> pools;
  for (auto& c : all)
    if (c.whole_exclusive && c.gpu_memory > 0 &&
        (c.r.action == Action::kKeep || c.r.action == Action::kMig) &&
        c.r.reason.rfind("history too short", 0) != 0 && c.r.replicas == 1)
      pools[c.r.model].push_back(&c);
  return pools;
}

struct Bin {
  std::vector<Candidate*> members;
  double memory = 0, compute = 0, traffic = 0;  // the members' summed targets
};

// First-fit by decreasing memory target (then by key, for a stable answer).
std::vector<Bin> PackFirstFit(std::vector<Candidate*> pool) {
  std::sort(pool.begin(), pool.end(), [](const Candidate* a, const Candidate* b) {
    return a->r.memory_target_bytes != b->r.memory_target_bytes
               ? a->r.memory_target_bytes > b->r.memory_target_bytes
               : a->r.key < b->r.key;
  });
  std::vector<Bin> bins;
  for (auto* c : pool) {
    size_t i = 0;
    for (; i < bins.size(); ++i)
      if (bins[i].memory + c->r.memory_target_bytes <= c->gpu_memory &&
          bins[i].compute + c->r.compute_target <= 1.0 &&
          bins[i].traffic + c->r.traffic_target <= 1.0)
        break;
    if (i == bins.size()) bins.emplace_back();
    bins[i].members.push_back(c);
    bins[i].memory += c->r.memory_target_bytes, bins[i].compute += c->r.compute_target;
    bins[i].traffic += c->r.traffic_target;
  }
  return bins;
}

// A bin of two or more becomes one shared GPU where that is less than what each would hold apart
// (its MIG move, else its GPU).
void ShareBin(const Bin& bin) {
  if (bin.members.size() < 2) return;
  double apart = 0;
  for (const auto* c : bin.members) apart += c->r.recommended_gpu;
  if (apart <= 1.0 + 1e-9) return;
  const double each = 1.0 / static_cast<double>(bin.members.size());
  const bool traffic_known =
      std::all_of(bin.members.begin(), bin.members.end(),
                  [](const Candidate* m) { return m->r.traffic_p90.has_value(); });
  for (auto* c : bin.members) {
    auto& r = c->r;
    r.action = Action::kShare;
    r.recommended = fmt::format("time-slice (or MPS) one GPU with {} replicas", bin.members.size());
    r.recommended_code = fmt::format("time-slicing-{}", bin.members.size());
    r.recommended_gpu = each;
    r.share_with.clear();
    std::vector<std::string> named;  // with the node where it is another
    for (const auto* other : bin.members) {
      if (other == c) continue;
      r.share_with.push_back(other->r.key.Name());
      named.push_back(other->r.key.Name() +
                      (other->r.node != r.node ? " (node " + other->r.node + ")" : ""));
    }
    r.reason = fmt::format(
        "with {}: memory targets {:.1f} of {:.1f} GiB, compute targets {:.0f} % of the GPU, {} "
        "(apart they need {:.2f} GPU)",
        fmt::join(named, ", "), bin.memory / kGiB, c->gpu_memory / kGiB, 100 * bin.compute,
        traffic_known
            ? fmt::format("memory traffic targets {:.0f} % of its bandwidth", 100 * bin.traffic)
            : std::string("memory traffic not measured for all"),
        apart);
  }
}

// Savings at the prices, most first.
std::vector<Recommendation> WithSavings(std::vector<Candidate> all, const cost::Pricing& pricing,
                                        const RecommendOptions& o) {
  std::vector<Recommendation> out;
  for (auto& c : all) {
    auto& r = c.r;
    if (r.monthly_savings) {
      const auto q = pricing.Quote(r.model, pricing.InstanceTypeOf(r.node));
      r.monthly_savings =
          (r.current_gpu - r.recommended_gpu) * r.replicas * q->per_gpu_hour * o.hours_per_month;
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) {
    return a.monthly_savings.value_or(0) > b.monthly_savings.value_or(0);
  });
  return out;
}

}  // namespace

namespace {

constexpr EnumName<Action> kActionNames[] = {{Action::kReclaim, "reclaim"},
                                             {Action::kMig, "mig"},
                                             {Action::kShare, "share"},
                                             {Action::kKeep, "keep"}};
static_assert(DistinctEnumNames(kActionNames));

}  // namespace

const char* ToString(Action a) { return EnumToString(kActionNames, a, "keep"); }

std::vector<Recommendation> Recommend(const std::map<WorkloadKey, WorkloadHistory>& histories,
                                      const cost::Pricing& pricing, const RecommendOptions& o) {
  std::vector<Candidate> all;
  for (const auto& [key, h] : histories)
    if (!h.held.empty()) all.push_back(Assess(key, h, pricing, o));  // else nothing to resize
  // Sharing: whole exclusive GPUs of one model, packed first-fit by decreasing memory.
  for (auto& [where, pool] : SharingPools(all))
    for (const auto& bin : PackFirstFit(std::move(pool))) ShareBin(bin);
  return WithSavings(std::move(all), pricing, o);
}

}  // namespace gpumeter::rightsize
