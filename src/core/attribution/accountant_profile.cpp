// Accountant::Profile: the pieces of a GPU's released intervals, the board's power over each,
// and the collections' mean activity over each, for ProfileCollections (collection_profile.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/attribution/accountant.h"

namespace gpumeter::attribution {
namespace {

// A unit's floor weight: one that looked steady across collections still takes a little of a
// change no other unit can (its neighbours at 0 or 1).
constexpr double kWeightFloor = 1e-4;

struct Span {
  double from_s, to_s;
};

// The driver periods of the interval's power samples, end to end over (from_s, to_s], when they
// cover it (no gap wider than 1.5 periods, none at either end); else none. The period is the
// median spacing of the stamps.
std::vector<std::pair<Span, double>> PowerPieces(const std::vector<gpu::PowerSample>& samples,
                                                 double from_s, double to_s) {
  std::vector<std::pair<double, double>> in;  // (stamp s, watts) up to a period past to_s
  for (const auto& p : samples) in.emplace_back(static_cast<double>(p.timestamp_us) / 1e6, p.watts);
  if (in.size() < 3) return {};
  std::vector<double> gaps;
  for (size_t k = 1; k < in.size(); ++k) gaps.push_back(in[k].first - in[k - 1].first);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  const double period = gaps[gaps.size() / 2];
  if (!(period > 0) || period * 3 > to_s - from_s) return {};
  std::vector<std::pair<Span, double>> out;
  double at = from_s;
  for (const auto& [stamp, watts] : in) {
    if (stamp <= from_s) continue;
    if (stamp - period * 1.5 > at) return {};  // a gap, or the first stamp too late
    const double end = std::min(stamp, to_s);
    if (end > at) out.push_back({{at, end}, watts});
    at = end;
    if (at >= to_s) break;
  }
  if (to_s - at > period * 1.5) return {};  // the last stamp too early
  if (!out.empty()) out.back().first.to_s = to_s;
  return out;
}

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

}  // namespace

std::vector<Accountant::HeldProfile> Accountant::Profile(const std::deque<HeldInterval>& queue,
                                                         const std::vector<Means>& known,
                                                         const PastActivityOf& activity) {
  if (known.empty()) return {};
  const gpu::DeviceSample& first = queue.front().device;
  const auto idle = IdleWatts(first.uuid);
  std::vector<double> share;
  std::vector<std::optional<uint32_t>> gi;
  if (!Units(first, share, gi)) return {};
  ProfileInput in;
  in.share = share;
  std::vector<size_t> first_piece;  // per interval: its first piece
  for (size_t q = 0; q < known.size(); ++q) {
    const HeldInterval& h = queue[q];
    // The same units throughout, every activity known, the energy counted.
    if (h.device.mig_instances.size() != first.mig_instances.size() ||
        known[q].activity.size() != share.size())
      return {};
    std::vector<double> prior;
    for (const auto& a : known[q].activity) {
      if (!a) return {};
      prior.push_back(std::clamp(*a, 0.0, 1.0));
    }
    Rule rule = Rule::kNone;
    const auto energy =
        GpuEnergyJoules(h.previous ? &*h.previous : nullptr, h.device, h.seconds, &rule);
    if (!energy || rule != Rule::kEnergyCounterDelta || h.seconds <= 0) return {};
    first_piece.push_back(in.pieces.size());
    auto spans = PowerPieces(h.device.power_samples, h.from_s, h.to_s);
    double sampled = 0;
    for (const auto& [span, watts] : spans) sampled += watts * (span.to_s - span.from_s);
    if (spans.empty() || sampled <= 0) {
      in.pieces.push_back({h.seconds, *energy / h.seconds, false, prior});
      continue;
    }
    // The counter is the interval's energy; the samples give its shape.
    const double scale = *energy / sampled;
    for (const auto& [span, watts] : spans) {
      ProfilePiece p{span.to_s - span.from_s, watts * scale, true, prior};
      for (size_t i = 0; i < share.size(); ++i) {
        const auto a = activity(h.device.uuid, gi[i], span.from_s, span.to_s);
        if (!a.pending && a.mean) p.prior[i] = std::clamp(*a.mean, 0.0, 1.0);
      }
      in.pieces.push_back(std::move(p));
    }
  }
  const auto last = last_released_.find(first.uuid);
  SetIdleAndWeights(in, idle,
                    last == last_released_.end() ? in.pieces.front().prior : last->second);
  last_released_[first.uuid] = in.pieces.back().prior;
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
