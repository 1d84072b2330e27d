// Internal to the attribution core (attribute.cpp), not an interface of it: per-owner sums of one
// unit's amounts, and the ranks of the unit's owners that order and match those sums without
// comparing owner strings again at each step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "core/attribution/attribute.h"

namespace gpumeter::attribution::detail {

// The owners a unit's rules can name, ranked by value once: each process's (`unattributed` for a
// process without one), each holder's, and the constants given. Equal owners have equal ranks and
// ranks order as the owners do. Keeps pointers into the observation and to the constants, which
// must outlive it. Thread-compatible.
class OwnerRanks {
 public:
  OwnerRanks(const UnitObservation& u, const Owner& unattributed,
             std::initializer_list<const Owner*> constants);

  uint32_t Process(size_t i) const { return process_[i]; }  // of processes[i]'s owner
  uint32_t Holder(size_t i) const { return holder_[i]; }    // of holders[i].owner
  size_t size() const { return size_; }                     // every rank is below this
  size_t processes() const { return process_.size(); }
  size_t holders() const { return holder_.size(); }
  // (owner, rank) of every owner object ranked, in address order (std::less), each once.
  const std::vector<std::pair<const Owner*, uint32_t>>& ByAddress() const { return by_address_; }

 private:
  void IndexByAddress();
  std::vector<uint32_t> process_, holder_;
  std::vector<std::pair<const Owner*, uint32_t>> constants_, by_address_;
  size_t size_ = 0;
};

// Accumulates per-owner amounts; a rule is kept per owner (the last non-empty one wins,
// and within one unit every owner's amount comes from a single rule). Amounts are recorded as
// entries that point at their owner and are merged once at the end: a unit sees each owner a
// few times, and a map keyed by owner value costs a node and two owner copies per owner.
// Every owner recorded must be one `ranks` ranked; they and `ranks` must outlive the accumulator.
class Accumulator {
 public:
  // Amounts at or below these are rounding residue (e.g. busy − Σ shares summed in another
  // order), not a measurement: they make no row, so the result does not depend on process order.
  Accumulator(const OwnerRanks& ranks, double memory_epsilon, double compute_epsilon)
      : ranks_(ranks), memory_epsilon_(memory_epsilon), compute_epsilon_(compute_epsilon) {
    // Room for what a unit usually records (memory and compute per process, a request per
    // holder, a few constants'), so the entries are not reallocated as they come.
    entries_.reserve(2 * ranks.processes() + ranks.holders() + 8);
  }
  const OwnerRanks& ranks() const { return ranks_; }
  void Memory(const Owner& o, double v, Rule rule) {
    if (v > memory_epsilon_)
      entries_.push_back({&o, v, 0, 0, 0, 0, rule, Rule::kNone, entries_.size(), 0, 0, 0});
  }
  // `bound`: the estimate's ± (Row::compute_bound_seconds), 0 for a measurement.
  void Compute(const Owner& o, double v, Rule rule, double bound = 0) {
    if (v > compute_epsilon_ || bound > compute_epsilon_)
      entries_.push_back({&o, 0, v, 0, 0, bound, Rule::kNone, rule, 0, entries_.size(), 0, 0});
  }
  void Request(const Owner& o, double v) {
    if (v > 0) entries_.push_back({&o, 0, 0, v, 0, 0, Rule::kNone, Rule::kNone, 0, 0, 0, 0});
  }
  // Each owner `owners()` lists, once: `v` seconds of its compute unknown
  // (Row::compute_unknown_seconds). They are listed only when `v` makes entries: listing them
  // compares owners, and most calls have nothing unknown to book.
  template <typename Owners>
  void ComputeUnknown(const Owners& owners, double v) {
    if (v > compute_epsilon_)
      for (const Owner* o : owners())
        entries_.push_back({o, 0, 0, 0, v, 0, Rule::kNone, Rule::kNone, 0, 0, 0, 0});
  }
  // One row per owner, sorted by owner. Amounts of an owner are summed in the order they were
  // recorded. With `joules` known, energy follows the unit's time: each owner gets the energy of
  // its share of the interval (idle time's energy is idle's); exact when power is constant
  // within the interval.
  std::vector<Row> Take(std::optional<double> joules, double seconds, Rule energy_rule);

 private:
  struct Entry {
    const Owner* owner;
    double memory, compute, request, unknown, bound;
    Rule memory_rule;
    Rule compute_rule;
    size_t memory_seq, compute_seq;  // when each rule was recorded: the latest one wins
    uint32_t rank;                   // the owner's (OwnerRanks), set by Take
    uint32_t order;                  // recorded as the order-th entry, set by Take
  };
  static void Fold(Entry& into, const Entry& e);
  const OwnerRanks& ranks_;
  double memory_epsilon_, compute_epsilon_;
  std::vector<Entry> entries_;
};

}  // namespace gpumeter::attribution::detail
