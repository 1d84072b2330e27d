#include "core/attribution/observe.h"

namespace gpumeter::attribution {
namespace {

// A process's owner as the ledger takes it: unknown (unattributed) has none.
std::optional<Owner> ToOwner(const domain::ProcessOwner& o) {
  if (o.kind == OwnerKind::kUnattributed) return std::nullopt;
  return o.AsOwner();
}

}  // namespace

IntervalFacts::IntervalFacts(std::shared_ptr<const domain::NodeSnapshot> end,
                             std::shared_ptr<const domain::NodeSnapshot> start)
    : end_(std::move(end)), start_(std::move(start)) {}

std::optional<Owner> IntervalFacts::OwnerOf(uint32_t pid) const {
  for (const auto* s : {end_.get(), start_.get()})
    if (s)
      if (const auto* p = s->Process(pid)) return ToOwner(p->owner);
  return std::nullopt;
}

std::optional<double> IntervalFacts::MpsThreadFraction(uint32_t pid) const {
  const auto* p = end_ ? end_->Process(pid) : nullptr;
  return p ? p->mps_thread_fraction : std::nullopt;
}

std::optional<EarlierProcess> IntervalFacts::EarlierOf(uint32_t pid) const {
  const auto* now = end_ ? end_->Process(pid) : nullptr;
  const auto* before = start_ ? start_->Process(pid) : nullptr;
  if (!now || !before || !now->start || !before->start || now->start->ticks == before->start->ticks)
    return std::nullopt;
  return EarlierProcess{ToOwner(before->owner), now->start->unix_us};
}

IntervalFacts::Process IntervalFacts::ProcessOf(uint32_t pid) const {
  const auto* now = end_ ? end_->Process(pid) : nullptr;
  const auto* before = start_ ? start_->Process(pid) : nullptr;
  Process out;
  if (now) {
    out.owner = ToOwner(now->owner);
    out.mps_thread_fraction = now->mps_thread_fraction;
  } else if (before) {
    out.owner = ToOwner(before->owner);
  }
  if (now && before && now->start && before->start && now->start->ticks != before->start->ticks)
    out.earlier = EarlierProcess{ToOwner(before->owner), now->start->unix_us};
  return out;
}

SharingMode IntervalFacts::ModeOf(const std::string& unit_uuid) const {
  return end_ ? end_->ModeOf(unit_uuid) : SharingMode::kExclusive;
}

std::vector<Holding> IntervalFacts::HoldersOf(const std::string& unit_uuid) const {
  const auto* u = end_ ? end_->Unit(unit_uuid) : nullptr;
  return u ? u->holders : std::vector<Holding>{};
}

}  // namespace gpumeter::attribution
