// Accountant::Profile: the pieces of a GPU's released intervals, the board's power over each,
// and the collections' mean activity over each, for ProfileCollections (collection_profile.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/attribution/accountant.h"
#include "domain/power_trace.h"

namespace gpumeter::attribution {
namespace {

// A unit's floor weight: one that looked steady across collections still takes a little of a
// change no other unit can (its neighbours at 0 or 1).
constexpr double kWeightFloor = 1e-4;

// The units and their shares of the GPU: MIG instances by slices, or the whole GPU; false where a
// size is unknown.
bool Units(const gpu::DeviceSample& d, std::vector<double>& share,
           std::vector<std::optional<uint32_t>>& gi) {
  if (d.mig_enabled) {
    if (!d.mig_total_slices || *d.mig_total_slices == 0) return false;
    for (const auto& m : d.mig_instances) {
      if (!m.slices || *m.slices == 0) return false;
      share.push_back(*m.slices / static_cast<double>(*d.mig_total_slices));
      gi.push_back(m.gpu_instance_id);
    }
  } else {
    share.push_back(1.0), gi.push_back(std::nullopt);
  }
  return !share.empty();
}

// Idle power not known yet (no fit, none configured): anything from 0 to the least power drawn,
// its middle taken, the bounds widened to cover the rest. Units whose activity changed between
// collections (from `before`, the last released) take up the power's changes inside them.
void SetIdleAndWeights(ProfileInput& in, std::optional<double> idle, std::vector<double> before) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& p : in.pieces) least = std::min(least, p.watts);
  in.idle_watts = idle ? *idle : least / 2;
  in.idle_watts_error = idle ? 0.0 : least / 2;
  if (before.size() != in.share.size()) before = in.pieces.front().prior;
  in.weight.assign(in.share.size(), kWeightFloor);
  for (const auto& p : in.pieces) {
    for (size_t i = 0; i < in.share.size(); ++i)
      in.weight[i] = std::max(in.weight[i], kWeightFloor + std::pow(p.prior[i] - before[i], 2));
    before = p.prior;
  }
}

// The same MIG instances (by UUID, in order), or both whole GPUs.
bool SameInstances(const gpu::DeviceSample& a, const gpu::DeviceSample& b) {
  if (a.mig_enabled != b.mig_enabled || a.mig_instances.size() != b.mig_instances.size())
    return false;
  for (size_t i = 0; i < a.mig_instances.size(); ++i)
    if (a.mig_instances[i].uuid != b.mig_instances[i].uuid ||
        a.mig_instances[i].slices != b.mig_instances[i].slices)
      return false;
  return true;
}

// One held interval, as ProfileCollections needs it.
struct IntervalPower {
  const gpu::DeviceSample* previous;  // the sample before it, or null
  const gpu::DeviceSample* device;
  double from_s, to_s;  // on the snapshots' clock
  double seconds;       // the interval's length as accounted
  double joules;        // the energy counter's delta over it
};

// The interval's pieces: the driver periods of its power samples where they cover it (those read
// with the sample before it too: a period stamped between that snapshot and its read came with
// it), each at its power scaled so they add up to the counter's energy and its seconds to the
// interval's, with the collections' means over each; else the interval as one piece.
void AddPieces(const IntervalPower& iv, const std::vector<double>& prior,
               const std::vector<std::optional<uint32_t>>& gi, const PastActivityOf& activity,
               ProfileInput& in) {
  const auto periods = domain::PowerPeriods(
      iv.previous ? domain::MergePowerSamples(iv.previous->power_samples, iv.device->power_samples)
                  : iv.device->power_samples,
      iv.from_s, iv.to_s);
  double sampled = 0;
  for (const auto& p : periods) sampled += p.watts * (p.to_s - p.from_s);
  if (periods.empty() || sampled <= 0) {
    in.pieces.push_back({iv.seconds, iv.joules / iv.seconds, false, prior});
    return;
  }
  // The counter is the interval's energy and the accounted seconds its length (the snapshots'
  // clock may run apart from the one that timed the interval); the samples give the shape.
  const double stretch = iv.seconds / (iv.to_s - iv.from_s);
  const double scale = iv.joules / (sampled * stretch);
  for (const auto& period : periods) {
    ProfilePiece p{(period.to_s - period.from_s) * stretch, period.watts * scale, true, prior};
    for (size_t i = 0; i < gi.size() && i < p.prior.size(); ++i) {
      const auto a = activity(iv.device->uuid, gi[i], period.from_s, period.to_s);
      if (!a.pending && a.mean) p.prior[i] = std::clamp(*a.mean, 0.0, 1.0);
    }
    in.pieces.push_back(std::move(p));
  }
}

}  // namespace

std::vector<Accountant::HeldProfile> Accountant::Profile(const std::deque<HeldInterval>& queue,
                                                         const std::vector<Means>& known,
                                                         const PastActivityOf& activity) {
  if (known.empty()) return {};
  const gpu::DeviceSample& first = queue.front().device;
  // What changed between collections is judged against the last interval released, whether or
  // not this release can be profiled.
  const auto last = last_released_.find(first.uuid);
  std::vector<double> before;
  if (last != last_released_.end()) before = last->second;
  // Only what was told: an unknown activity is no neighbour to compare with (forgotten instead).
  std::vector<double> latest;
  for (const auto& a : known.back().activity)
    if (a) latest.push_back(std::clamp(*a, 0.0, 1.0));
  if (latest.size() == known.back().activity.size())
    last_released_[first.uuid] = latest;
  else
    last_released_.erase(first.uuid);
  std::vector<double> share;
  std::vector<std::optional<uint32_t>> gi;
  if (!Units(first, share, gi)) return {};
  ProfileInput in;
  in.share = share;
  in.seen_within_s = options_.dcgm_seen_within_s;
  std::vector<size_t> first_piece;  // per interval: its first piece
  for (size_t q = 0; q < known.size(); ++q) {
    const HeldInterval& h = queue[q];
    // The same units throughout, every activity known, the energy counted.
    if (!SameInstances(h.device, first) || known[q].activity.size() != share.size()) return {};
    std::vector<double> prior;
    for (const auto& a : known[q].activity) {
      if (!a) return {};
      prior.push_back(std::clamp(*a, 0.0, 1.0));
    }
    Rule rule = Rule::kNone;
    const auto energy = HeldEnergy(h, &rule);
    if (!energy || rule != Rule::kEnergyCounterDelta || h.seconds <= 0) return {};
    first_piece.push_back(in.pieces.size());
    AddPieces(
        {h.previous ? &*h.previous : nullptr, &h.device, h.from_s, h.to_s, h.seconds, *energy},
        prior, gi, activity, in);
  }
  SetIdleAndWeights(in, IdleWatts(first.uuid),
                    before.size() == share.size() ? before : in.pieces.front().prior);
  in.before = before.size() == share.size() ? before : std::vector<double>{};
  const auto result = ProfileCollections(in);
  if (result.units.size() != in.pieces.size()) return {};
  std::vector<HeldProfile> out(known.size());
  for (size_t q = 0; q < known.size(); ++q) {
    const size_t end = q + 1 < known.size() ? first_piece[q + 1] : in.pieces.size();
    HeldProfile& hp = out[q];
    hp.means.memory = known[q].memory;
    hp.units.assign(share.size(), {});
    for (size_t k = first_piece[q]; k < end; ++k)
      for (size_t i = 0; i < share.size(); ++i) {
        const UnitProfile& u = result.units[k][i];
        hp.units[i].busy_seconds += u.busy_seconds;
        hp.units[i].energy_joules += u.energy_joules;
        hp.units[i].busy_energy_joules += u.busy_energy_joules;
        hp.units[i].busy_energy_bound_joules += u.busy_energy_bound_joules;
      }
    for (size_t i = 0; i < share.size(); ++i)
      hp.means.activity.push_back(
          std::clamp(hp.units[i].busy_seconds / queue[q].seconds, 0.0, 1.0));
  }
  return out;
}

}  // namespace gpumeter::attribution
