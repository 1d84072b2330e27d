#include "core/attribution/accumulator.h"

#include <algorithm>
#include <functional>

namespace gpumeter::attribution::detail {

OwnerRanks::OwnerRanks(const UnitObservation& u, const Owner& unattributed,
                       std::initializer_list<const Owner*> constants)
    : process_(u.processes.size()), holder_(u.holders.size()) {
  for (const Owner* c : constants) constants_.emplace_back(c, 0);
  // Every owner object with the place its rank goes.
  struct Item {
    const Owner* owner;
    uint32_t* rank;
  };
  std::vector<Item> items;
  items.reserve(process_.size() + holder_.size() + constants_.size());
  for (size_t i = 0; i < u.processes.size(); ++i) {
    const auto& owner = u.processes[i].owner;
    items.push_back({owner ? &*owner : &unattributed, &process_[i]});
  }
  for (size_t i = 0; i < u.holders.size(); ++i) items.push_back({&u.holders[i].owner, &holder_[i]});
  for (auto& c : constants_) items.push_back({c.first, &c.second});
  // The unit's one sort of owners by value (processes without an owner share one object).
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.owner != b.owner && *a.owner < *b.owner; });
  uint32_t rank = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0 && items[i - 1].owner != items[i].owner && *items[i - 1].owner != *items[i].owner)
      ++rank;
    *items[i].rank = rank;
  }
  size_ = items.empty() ? 0 : rank + 1;
  by_address_.reserve(items.size());
  for (const auto& item : items) by_address_.emplace_back(item.owner, *item.rank);
  IndexByAddress();
}

void OwnerRanks::IndexByAddress() {
  using Ranked = std::pair<const Owner*, uint32_t>;
  std::sort(by_address_.begin(), by_address_.end(), [](const Ranked& a, const Ranked& b) {
    return std::less<const Owner*>{}(a.first, b.first);
  });
  by_address_.erase(
      std::unique(by_address_.begin(), by_address_.end(),
                  [](const Ranked& a, const Ranked& b) { return a.first == b.first; }),
      by_address_.end());
}

std::vector<Row> Accumulator::Take(std::optional<double> joules, double seconds, Rule energy_rule) {
  // Entries of one owner object first (an integer sort), then those partial sums by the owners'
  // ranks, which order them as their values do: no owner compared here. Sums over one owner's
  // processes or holders keep the order they were recorded in (loops over vectors: ascending
  // addresses); only equal owners held by different objects (a process owned by `system` and the
  // reservation's constant) are added in address order, which can change the last bits, never
  // conservation.
  // (Sorts on unique keys, the recording order or the object breaking ties: the orders of
  // stable sorts without their buffers.)
  for (size_t i = 0; i < entries_.size(); ++i) entries_[i].order = static_cast<uint32_t>(i);
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    if (a.owner != b.owner) return std::less<const Owner*>{}(a.owner, b.owner);
    return a.order < b.order;
  });
  size_t kept = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (kept > 0 && entries_[kept - 1].owner == entries_[i].owner)
      Fold(entries_[kept - 1], entries_[i]);
    else
      entries_[kept++] = entries_[i];
  }
  entries_.resize(kept);
  // The entries and the ranked owners are both in address order: one walk ranks every entry.
  const auto& ranked = ranks_.ByAddress();
  size_t j = 0;
  for (auto& e : entries_) {
    while (j < ranked.size() && std::less<const Owner*>{}(ranked[j].first, e.owner)) ++j;
    e.rank = j < ranked.size() ? ranked[j].second : 0;  // always found: every owner is ranked
  }
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return std::less<const Owner*>{}(a.owner, b.owner);  // each object once by now
  });
  std::vector<Row> out;
  out.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size();) {
    Entry sum = entries_[i++];
    for (; i < entries_.size() && entries_[i].rank == sum.rank; ++i) Fold(sum, entries_[i]);
    Row r;
    r.owner = *sum.owner;
    r.memory_byte_seconds = sum.memory;
    r.compute_seconds = sum.compute;
    r.requested_share_seconds = sum.request;
    r.compute_unknown_seconds = sum.unknown;
    r.compute_bound_seconds = sum.bound;
    r.memory_rule = sum.memory_rule;
    r.compute_rule = sum.compute_rule;
    if (joules && r.compute_seconds > 0) {
      r.energy_joules = *joules * r.compute_seconds / seconds;
      r.energy_rule = energy_rule;
    }
    out.push_back(std::move(r));
  }
  entries_.clear();
  return out;
}

void Accumulator::Fold(Entry& into, const Entry& e) {
  into.memory += e.memory;
  into.compute += e.compute;
  into.request += e.request;
  into.unknown += e.unknown;
  into.bound += e.bound;
  if (e.memory_rule != Rule::kNone &&
      (into.memory_rule == Rule::kNone || e.memory_seq > into.memory_seq)) {
    into.memory_rule = e.memory_rule;
    into.memory_seq = e.memory_seq;
  }
  if (e.compute_rule != Rule::kNone &&
      (into.compute_rule == Rule::kNone || e.compute_seq > into.compute_seq)) {
    into.compute_rule = e.compute_rule;
    into.compute_seq = e.compute_seq;
  }
}

}  // namespace gpumeter::attribution::detail
