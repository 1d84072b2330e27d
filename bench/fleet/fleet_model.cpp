#include "fleet/fleet_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <queue>
#include <tuple>

namespace gpumeter::fleet {
namespace {

constexpr int64_t kHour = 60, kDay = 24 * 60;  // in minutes
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kIdleWatts = 70, kBusyWatts = 630;  // an H100 SXM: ~70 W idle, 700 W flat out
constexpr double kSystemBytes = 0.54 * kGiB;         // driver contexts no process holds

uint64_t Mix(uint64_t x) {  // splitmix64: a stateless hash, so any minute is computed alone
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double Unit(uint64_t h) { return static_cast<double>(h >> 11) / 9007199254740992.0; }

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  double Next() { return Unit(Mix(state_++)); }
  double Between(double lo, double hi) { return lo + (hi - lo) * Next(); }
  size_t Pick(size_t n) { return static_cast<size_t>(Next() * static_cast<double>(n)) % n; }
  std::string Chars(int n) {
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // Kubernetes' safe set
    std::string s;
    for (int i = 0; i < n; ++i) s += kAlphabet[Pick(sizeof kAlphabet - 1)];
    return s;
  }

 private:
  uint64_t state_;
};

struct NamespaceInfo {
  const char* ns;
  const char* team;
};
constexpr NamespaceInfo kNamespaces[] = {
    {"llm", "llm"},       {"vision", "vision"},     {"ads", "ads"},
    {"search", "search"}, {"research", "research"}, {"recsys", "ads"},
    {"speech", "speech"}, {"batch", "platform"},    {"fraud", "risk"},
    {"maps", "geo"},      {"robotics", "research"}, {"platform", "platform"}};
constexpr const char* kServices[] = {"chat",    "embedder",   "reranker",  "detector",  "ocr",
                                     "ctr",     "summarizer", "asr",       "tts",       "notebook",
                                     "feature", "ranker",     "segmenter", "translator"};
constexpr const char* kJobs[] = {"train", "finetune", "eval", "distill", "index", "backfill"};

// The container of a workload's pods (one each), named as such images usually are.
std::string ContainerOf(const Workload& w) {
  if (w.kind == "Job") return "worker";
  return w.name.starts_with("notebook") ? "jupyter" : "server";
}

// A pod waiting for a GPU: the workload, when it asks, and how long it would run (minutes).
struct Request {
  int64_t at;
  int workload;
  int64_t runs;
  int serial;
  bool operator>(const Request& o) const { return std::tie(at, serial) > std::tie(o.at, o.serial); }
};

struct Slot {
  int node, gpu;
  double share;
  int64_t free_at;
};

}  // namespace

Fleet::Fleet(const FleetOptions& options) : options_(options) {
  MakeWorkloads();
  Schedule();
}

std::string Fleet::NodeName(int node) {
  return "gpu-node-" + std::string(node < 10 ? "0" : "") + std::to_string(node);
}

std::string Fleet::TeamOf(const std::string& ns) {
  for (const auto& n : kNamespaces)
    if (ns == n.ns) return n.team;
  return "";
}

std::string Fleet::GpuUuid(int node, int gpu) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%04x%04x-aa10-4c2b-9e3f-5b6a7c8d%04x", node, gpu,
                node * 8 + gpu);
  return buf;
}

void Fleet::MakeWorkloads() {
  Rng rng(Mix(options_.seed));
  const int n = options_.workloads;
  for (int i = 0; i < n; ++i) {
    Workload w;
    const auto& ns = kNamespaces[rng.Pick(std::size(kNamespaces))];
    w.ns = ns.ns;
    w.team = ns.team;
    // A quarter services (Deployments, then StatefulSets), three quarters Jobs: services run
    // for days and hold most GPU time, Jobs come and go in hours.
    w.kind = i < n * 18 / 100 ? "Deployment" : i < n * 25 / 100 ? "StatefulSet" : "Job";
    const bool job = w.kind == "Job";
    char idx[16];
    std::snprintf(idx, sizeof idx, "%03d", i);
    w.name = std::string(job ? kJobs[rng.Pick(std::size(kJobs))]
                             : kServices[rng.Pick(std::size(kServices))]) +
             "-" + idx;
    w.exclusive = rng.Next() < (job ? 0.5 : 0.3);
    // Use skewed low, as measured fleets are: many allocations mostly idle, a few near full.
    const double u = rng.Next();
    w.compute = rng.Next() < 0.1 && !job ? 0.004
                : w.exclusive            ? 0.03 + 0.9 * u * u
                                         : 0.02 + 0.18 * u;
    w.memory_gib = w.exclusive ? rng.Between(2, 70) : rng.Between(1, 17);
    w.swing = job ? 0 : rng.Between(0, 0.5);
    w.phase = rng.Next();
    workloads_.push_back(w);
  }
}

// Services ask for a GPU at a random time (a third from the start) and replace their pod every
// half day to four days (rollouts, evictions) until they end; Jobs run once, one in ten twice
// (a retry). A pod waits for a free slot of its kind and is dropped if none frees in time.
void Fleet::Schedule() {
  Rng rng(Mix(options_.seed ^ 0x5eedULL));
  const int64_t from = options_.start_minute, to = options_.end_minute, span = to - from;
  std::vector<Slot> slots;
  for (int node = 0; node < options_.nodes; ++node)
    for (int gpu = 0; gpu < kGpusPerNode; ++gpu)
      for (int r = 0; r < (Shared(gpu) ? kReplicas : 1); ++r)
        slots.push_back({node, gpu, Shared(gpu) ? 1.0 / kReplicas : 1.0, from});
  std::priority_queue<Request, std::vector<Request>, std::greater<>> queue;
  std::vector<int64_t> until(workloads_.size());
  int serial = 0;
  for (size_t w = 0; w < workloads_.size(); ++w) {
    const bool job = workloads_[w].kind == "Job";
    int64_t at =
        job ? from + static_cast<int64_t>(rng.Next() * static_cast<double>(span - 12 * kHour))
            : from + std::max<int64_t>(0, static_cast<int64_t>(rng.Between(-0.5, 0.8) *
                                                               static_cast<double>(span)));
    until[w] = job ? to : std::min(to, at + static_cast<int64_t>(rng.Between(3, 40) * kDay));
    const int runs = job && rng.Next() < 0.1 ? 2 : 1;
    for (int k = 0; k < runs; ++k)
      queue.push({at + k * 3 * kHour, static_cast<int>(w),
                  job ? static_cast<int64_t>(rng.Between(1, 12) * kHour) : 0, serial++});
  }
  std::map<int, std::string> deployment_hash;
  while (!queue.empty()) {
    Request q = queue.top();
    queue.pop();
    const Workload& w = workloads_[q.workload];
    const bool job = w.kind == "Job";
    const int64_t runs = job ? q.runs : static_cast<int64_t>(rng.Between(0.5, 4) * kDay);
    // The slot of the wanted kind that frees first; among those free now, one at random.
    std::vector<size_t> fit;
    int64_t earliest = to;
    for (size_t s = 0; s < slots.size(); ++s)
      if ((slots[s].share == 1.0) == w.exclusive) {
        earliest = std::min(earliest, std::max(q.at, slots[s].free_at));
        if (slots[s].free_at <= q.at) fit.push_back(s);
      }
    const int64_t start = earliest;
    const int64_t end = std::min({start + runs, job ? to : until[q.workload], to});
    if (start >= end) continue;
    if (fit.empty())
      for (size_t s = 0; s < slots.size(); ++s)
        if ((slots[s].share == 1.0) == w.exclusive && std::max(q.at, slots[s].free_at) == start)
          fit.push_back(s);
    Slot& slot = slots[fit[rng.Pick(fit.size())]];
    slot.free_at = end;
    Pod p{q.workload, "", {{"team", w.team}}, slot.node, slot.gpu, slot.share, start, end};
    if (w.kind == "Deployment") {
      // A new template hash on a rollout (half the replacements), else an eviction.
      auto& hash = deployment_hash[q.workload];
      if (hash.empty() || rng.Next() < 0.5) hash = rng.Chars(10);
      p.name = w.name + "-" + hash + "-" + rng.Chars(5);
      p.labels["pod-template-hash"] = hash;
    } else if (w.kind == "StatefulSet") {
      p.name = w.name + "-0";
      p.labels["statefulset.kubernetes.io/pod-name"] = p.name;
    } else {
      p.name = w.name + "-" + rng.Chars(5);
      p.labels["job-name"] = w.name;
    }
    pods_.push_back(std::move(p));
    if (!job && end < std::min(to, until[q.workload])) queue.push({end, q.workload, 0, serial++});
  }
  std::stable_sort(pods_.begin(), pods_.end(),
                   [](const Pod& a, const Pod& b) { return a.start < b.start; });
}

std::vector<attribution::UnitRecord> Fleet::Minute(int node, int64_t minute,
                                                   const std::vector<int>& alive) const {
  using attribution::OwnerAmounts;
  using domain::Owner;
  using domain::OwnerKind;
  std::vector<attribution::UnitRecord> units;
  const double day_angle = 2 * std::numbers::pi * static_cast<double>(minute % kDay) / kDay;
  for (int gpu = 0; gpu < kGpusPerNode; ++gpu) {
    attribution::UnitRecord u;
    const std::string uuid = GpuUuid(node, gpu);
    u.unit = {NodeName(node),
              uuid,
              uuid,
              kModel,
              "",
              Shared(gpu) ? domain::SharingMode::kTimeSlicing : domain::SharingMode::kExclusive,
              1.0};
    u.seconds = 60;
    u.memory_capacity_byte_seconds = kMemoryBytes * 60;
    double used = 0, memory = 0, held = 0;
    for (int i : alive) {
      const Pod& p = pods_[i];
      if (p.gpu != gpu) continue;
      const Workload& w = workloads_[p.workload];
      const uint64_t h = Mix(options_.seed ^ (static_cast<uint64_t>(i) << 24) ^
                             static_cast<uint64_t>(minute) * 0x2545F4914F6CDD1DULL);
      const double c = std::clamp(
          w.compute * (1 + w.swing * std::sin(day_angle + 6.28 * w.phase)) * (0.85 + 0.3 * Unit(h)),
          0.0, 1.0);
      const double m = w.memory_gib * kGiB * (0.9 + 0.1 * Unit(Mix(h)));
      OwnerAmounts o{Owner::Container(w.ns, p.name, ContainerOf(w)), m * 60, c * 60, 0,
                     p.share * 60};
      u.owners.push_back(o);
      used += c, memory += m, held += p.share;
    }
    // A time-sliced GPU cannot give more than all of itself: scale its holders down to fit.
    const double over_c = std::max(1.0, used),
                 over_m = std::max(1.0, memory / (kMemoryBytes - kSystemBytes));
    for (auto& o : u.owners) {
      o.compute_seconds /= over_c;
      o.memory_byte_seconds /= over_m;
      o.energy_joules = (kBusyWatts * o.compute_seconds) + kIdleWatts * o.requested_share_seconds;
    }
    used /= over_c, memory /= over_m;
    u.energy_joules = (kIdleWatts + kBusyWatts * used) * 60;
    u.owners.push_back({Owner{OwnerKind::kIdle, {}, {}, {}},
                        (kMemoryBytes - kSystemBytes - memory) * 60, (1 - used) * 60,
                        kIdleWatts * (1 - held) * 60, 0});
    u.owners.push_back({Owner{OwnerKind::kSystem, {}, {}, {}}, kSystemBytes * 60, 0, 0, 0});
    u.owners.push_back({Owner{OwnerKind::kUnattributed, {}, {}, {}}, 0, 0, 0, 0});
    units.push_back(std::move(u));
  }
  return units;
}

Timeline::Timeline(const Fleet& fleet) : fleet_(fleet), alive_(fleet.options().nodes) {}

void Timeline::Advance(int64_t minute) {
  const auto& pods = fleet_.pods();
  for (auto& list : alive_) std::erase_if(list, [&](int i) { return pods[i].end <= minute; });
  while (next_ < pods.size() && pods[next_].start <= minute) {
    if (pods[next_].end > minute) alive_[pods[next_].node].push_back(static_cast<int>(next_));
    ++next_;
  }
}

}  // namespace gpumeter::fleet
