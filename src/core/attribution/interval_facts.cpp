#include "core/attribution/observe.h"

#include <algorithm>
#include <utility>

namespace gpumeter::attribution {
namespace {

// A process's owner as the ledger takes it: unknown (unattributed) has none.
std::optional<Owner> ToOwner(const domain::ProcessOwner& o) {
  if (o.kind == OwnerKind::kUnattributed) return std::nullopt;
  return o.AsOwner();
}

// The MPS control daemon's server, nvidia-cuda-mps-server, as /proc/<pid>/stat names it: the
// kernel keeps 15 characters of a command (TASK_COMM_LEN 16).
constexpr std::string_view kMpsServerCommand = "nvidia-cuda-mps";

bool IsMpsServerCommand(std::string_view comm) {
  return comm == kMpsServerCommand || comm == "nvidia-cuda-mps-server";
}

}  // namespace

IntervalFacts::IntervalFacts(std::shared_ptr<const domain::NodeSnapshot> end,
                             std::shared_ptr<const domain::NodeSnapshot> start)
    : end_(std::move(end)), start_(std::move(start)) {
  auto index = std::make_shared<Index>();
  for (const auto& [s, pids] : {std::pair{end_.get(), &index->end}, {start_.get(), &index->start}})
    if (s) {
      pids->reserve(s->processes.size());
      for (const auto& p : s->processes) pids->push_back(p.pid);
    }
  index_ = std::move(index);
}

const domain::ProcessFact* IntervalFacts::Find(const domain::NodeSnapshot* s,
                                               const std::vector<uint32_t>& pids, uint32_t pid) {
  if (!s || pids.empty()) return nullptr;
  // std::lower_bound without its branch per step (a conditional move instead): which way a
  // search over PIDs goes is a coin toss the branch predictor loses half the time, and every
  // process of every step is looked up twice. `first` stays at or before the first PID not
  // below `pid`, within `len` of it.
  const uint32_t* first = pids.data();
  size_t len = pids.size();
  while (len > 1) {
    const size_t half = len / 2;
    first = first[half - 1] < pid ? first + half : first;
    len -= half;
  }
  const size_t i = static_cast<size_t>(first - pids.data()) + (*first < pid ? 1 : 0);
  if (i == pids.size() || pids[i] != pid) return nullptr;
  return &s->processes[i];
}

const domain::ProcessFact* IntervalFacts::AtEnd(uint32_t pid) const {
  return index_ ? Find(end_.get(), index_->end, pid) : nullptr;
}

const domain::ProcessFact* IntervalFacts::AtStart(uint32_t pid) const {
  return index_ ? Find(start_.get(), index_->start, pid) : nullptr;
}

std::optional<Owner> IntervalFacts::OwnerOf(uint32_t pid) const {
  if (const auto* p = AtEnd(pid)) return ToOwner(p->owner);
  if (const auto* p = AtStart(pid)) return ToOwner(p->owner);
  return std::nullopt;
}

std::optional<double> IntervalFacts::MpsThreadFraction(uint32_t pid) const {
  const auto* p = AtEnd(pid);
  return p ? p->mps_thread_fraction : std::nullopt;
}

std::optional<EarlierProcess> IntervalFacts::EarlierOf(uint32_t pid) const {
  const auto* now = AtEnd(pid);
  const auto* before = AtStart(pid);
  if (!now || !before || !now->start || !before->start || now->start->ticks == before->start->ticks)
    return std::nullopt;
  return EarlierProcess{ToOwner(before->owner), now->start->unix_us};
}

IntervalFacts::Process IntervalFacts::Of(const domain::ProcessFact* now,
                                         const domain::ProcessFact* before) const {
  Process out;
  if (const auto* f = now ? now : before) out.mps_server_name = IsMpsServerCommand(f->comm);
  if (now) {
    out.owner = ToOwner(now->owner);
    out.mps_thread_fraction = now->mps_thread_fraction;
    out.met_between = !now->listed;
  } else if (before) {
    out.owner = ToOwner(before->owner);
  }
  if (now && before && now->start && before->start && now->start->ticks != before->start->ticks)
    out.earlier = EarlierProcess{ToOwner(before->owner), now->start->unix_us};
  return out;
}

IntervalFacts::Process IntervalFacts::ProcessOf(uint32_t pid) const {
  return Of(AtEnd(pid), AtStart(pid));
}

IntervalFacts::Process IntervalFacts::ProcessOf(uint32_t pid, Cursor& cursor) const {
  if (!index_) return {};
  return Of(FindFrom(end_.get(), index_->end, pid, cursor.end),
            FindFrom(start_.get(), index_->start, pid, cursor.start));
}

const domain::ProcessFact* IntervalFacts::FindFrom(const domain::NodeSnapshot* s,
                                                   const std::vector<uint32_t>& pids, uint32_t pid,
                                                   size_t& from) {
  const size_t n = pids.size();
  if (!s || from >= n) return nullptr;
  // Gallop from `from` (the next PID of a walk is usually a few places on), then search the
  // span it found: [lo, hi) holds the first PID not below `pid`, or it is hi.
  size_t lo = from, hi = from, step = 1;
  while (hi < n && pids[hi] < pid) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  hi = std::min(hi, n);
  const auto first = pids.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto last = pids.begin() + static_cast<std::ptrdiff_t>(hi);
  from = static_cast<size_t>(std::lower_bound(first, last, pid) - pids.begin());
  if (from == n || pids[from] != pid) return nullptr;
  return &s->processes[from];
}

SharingMode IntervalFacts::ModeOf(const std::string& unit_uuid) const {
  return end_ ? end_->ModeOf(unit_uuid) : SharingMode::kExclusive;
}

std::vector<Holding> IntervalFacts::HoldersOf(const std::string& unit_uuid) const {
  const auto* u = end_ ? end_->Unit(unit_uuid) : nullptr;
  return u ? u->holders : std::vector<Holding>{};
}

}  // namespace gpumeter::attribution
