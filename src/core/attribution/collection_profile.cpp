#include "core/attribution/collection_profile.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpumeter::attribution {
namespace {

constexpr double kTiny = 1e-9;
constexpr int kRounds = 40;  // alternations between the pieces' power and the units' means

bool SamePrior(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 1e-9) return false;
  return true;
}

// The group's slice-weighted activity per piece, as its power says: the group's mean activity S
// spread over the pieces in proportion to their power above idle (capped at what the units can
// do). Uniform where the power did not rise above idle.
std::vector<double> TargetActivity(const ProfileInput& in, size_t b, size_t e, double s,
                                   double cap) {
  double seconds = 0, dynamic = 0;
  for (size_t k = b; k < e; ++k) {
    seconds += in.pieces[k].seconds;
    dynamic += in.pieces[k].seconds * std::max(0.0, in.pieces[k].watts - in.idle_watts);
  }
  std::vector<double> r(e - b, s);
  if (dynamic <= kTiny * seconds) return r;
  for (size_t k = b; k < e; ++k)
    r[k - b] =
        std::min(cap, s * std::max(0.0, in.pieces[k].watts - in.idle_watts) * seconds / dynamic);
  return r;
}

// Moves units' activity in one piece so the slice-weighted sum reaches `target`, each by its
// weight, none outside [0, 1].
void MeetPiece(const ProfileInput& in, double target, std::vector<double>& x) {
  for (int pass = 0; pass < 4; ++pass) {
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i) sum += in.share[i] * x[i];
    const double r = target - sum;
    if (std::abs(r) < kTiny) return;
    double denom = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if ((r > 0 && x[i] < 1) || (r < 0 && x[i] > 0)) denom += in.share[i] * in.weight[i];
    if (denom <= 0) return;
    for (size_t i = 0; i < x.size(); ++i)
      if ((r > 0 && x[i] < 1) || (r < 0 && x[i] > 0))
        x[i] = std::clamp(x[i] + r * in.weight[i] / denom, 0.0, 1.0);
  }
}

// Shifts unit i's activity over the group's pieces by one constant (clamped to [0, 1]) so that its
// busy seconds are `want` again: the collection's mean is kept exactly.
void MeetMean(const ProfileInput& in, size_t b, size_t e, size_t i, double want,
              std::vector<std::vector<double>>& x) {
  auto busy = [&](double c) {
    double sum = 0;
    for (size_t k = b; k < e; ++k) sum += in.pieces[k].seconds * std::clamp(x[k][i] + c, 0.0, 1.0);
    return sum;
  };
  double lo = -1, hi = 1;
  for (int n = 0; n < 60; ++n) {
    const double mid = (lo + hi) / 2;
    (busy(mid) < want ? lo : hi) = mid;
  }
  const double c = (lo + hi) / 2;
  for (size_t k = b; k < e; ++k) x[k][i] = std::clamp(x[k][i] + c, 0.0, 1.0);
}

// The range of Σ seconds × activity² over the group for unit i, over every profile with its
// busy seconds `want` that the power allows: in a resolved piece its activity lies in [l, u] (the
// others' slices can give or take no more than they have); in an unresolved piece only the mean
// does, and inside it the unit may be fully busy part of the time (the most) or even (the least).
std::pair<double, double> SquareRange(const ProfileInput& in, size_t b, size_t e, size_t i,
                                      const std::vector<double>& target, double want) {
  struct Span {
    double h, l, u;
    bool resolved;
  };
  std::vector<Span> spans;
  // What the other units can cover: a unit idle over the group is idle in each piece, one fully
  // busy over it is busy in each.
  const double share = in.share[i];
  double others_most = 0, others_least = 0;
  for (size_t j = 0; j < in.share.size(); ++j) {
    if (j == i) continue;
    const double a = in.pieces[b].prior[j];
    if (a > kTiny) others_most += in.share[j];
    if (a >= 1 - kTiny) others_least += in.share[j];
  }
  for (size_t k = b; k < e; ++k) {
    const double r = target[k - b];
    spans.push_back({in.pieces[k].seconds, std::clamp((r - others_most) / share, 0.0, 1.0),
                     std::clamp((r - others_least) / share, 0.0, 1.0), in.pieces[k].resolved});
  }
  // Least: one water level, clamped to each piece's range.
  auto mass = [&](double level) {
    double m = 0;
    for (const auto& s : spans) m += s.h * std::clamp(level, s.l, s.u);
    return m;
  };
  double lo = 0, hi = 1;
  for (int n = 0; n < 60; ++n) ((mass((lo + hi) / 2) < want) ? lo : hi) = (lo + hi) / 2;
  double least = 0;
  for (const auto& s : spans) least += s.h * std::pow(std::clamp((lo + hi) / 2, s.l, s.u), 2);
  // Most: each piece at its floor, then the rest where a second of activity adds the most to the
  // square (u + l in a resolved piece, 1 in an unresolved one, whose busy time is all at 1).
  double most = 0, left = want;
  for (const auto& s : spans) {
    most += s.h * s.l * (s.resolved ? s.l : 1.0);
    left -= s.h * s.l;
  }
  std::vector<size_t> order(spans.size());
  std::iota(order.begin(), order.end(), 0);
  auto gain = [&](const Span& s) { return s.resolved ? s.u + s.l : 1.0; };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t c) { return gain(spans[a]) > gain(spans[c]); });
  for (size_t j : order) {
    if (left <= 0) break;
    const double add = std::min(left, spans[j].h * (spans[j].u - spans[j].l));
    most += add * gain(spans[j]);
    left -= add;
  }
  return {least, std::max(least, most)};
}

// What a collection's edges may move: each is up to seen_within_s late on the pieces' clock, so
// that much of the neighbour's activity (its change across the edge; where the neighbour is not
// known yet, anything) is booked on this side, at up to the unit's full power per second.
double EdgeMargin(const ProfileInput& in, size_t b, size_t e, size_t i, double extra_watts) {
  if (in.seen_within_s <= 0) return 0;
  const double x = in.pieces[b].prior[i];
  const double unknown = std::max(x, 1 - x);
  const double before = b > 0                  ? std::abs(x - in.pieces[b - 1].prior[i])
                        : in.before.size() > i ? std::abs(x - in.before[i])
                                               : unknown;
  const double after = e < in.pieces.size() ? std::abs(x - in.pieces[e].prior[i]) : unknown;
  const double full_power = in.share[i] * (std::max(0.0, in.idle_watts) + extra_watts);
  return in.seen_within_s * full_power * (before + after);
}

// Each unit's energy and busy energy in each piece of [b, e): the piece's idle energy by share,
// the rest by activity × share (the rule of SplitMigEnergy); busy energy is activity × that.
void PieceEnergy(const ProfileInput& in, size_t b, size_t e, const std::vector<double>& target,
                 double cap, ProfileResult& out) {
  const size_t n = in.share.size();
  double s = 0, seconds = 0, dynamic = 0, energy_sum = 0;
  for (size_t i = 0; i < n; ++i) s += in.share[i] * in.pieces[b].prior[i];
  for (size_t k = b; k < e; ++k) {
    const auto& p = in.pieces[k];
    seconds += p.seconds;
    dynamic += p.seconds * std::max(0.0, p.watts - in.idle_watts);
    const double energy = p.watts * p.seconds;
    energy_sum += energy;
    const double idle = std::min(energy, std::max(0.0, in.idle_watts) * p.seconds);
    double weighted = 0;
    for (size_t i = 0; i < n; ++i) weighted += in.share[i] * out.busy[k][i];
    out.units[k].assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      const double x = out.busy[k][i];
      const double dyn_part = weighted > kTiny ? in.share[i] * x / weighted : in.share[i] / cap;
      UnitProfile& u = out.units[k][i];
      u.busy_seconds = x * p.seconds;
      u.energy_joules = idle * in.share[i] + (energy - idle) * dyn_part;
      u.busy_energy_joules = x * u.energy_joules;
    }
  }
  if (s <= kTiny) return;  // nobody busy: nothing to bound
  // Under the linear model a unit's busy energy is share × (idle × A + κ × Σ h x²), κ the
  // dynamic power per unit of slice-weighted activity; the range of Σ h x² bounds it.
  const double kappa = dynamic / (s * seconds);
  for (size_t i = 0; i < n; ++i) {
    double want = 0, square = 0, est = 0;
    for (size_t k = b; k < e; ++k) {
      want += in.pieces[k].seconds * in.pieces[k].prior[i];
      square += in.pieces[k].seconds * out.busy[k][i] * out.busy[k][i];
      est += out.units[k][i].busy_energy_joules;
    }
    const auto [least, most] = SquareRange(in, b, e, i, target, want);
    const double model = in.share[i] * (std::max(0.0, in.idle_watts) * want + kappa * square);
    // The idle power is a fit, good to max(1 W, 2 % of mean power) (IdlePowerFit): an error in
    // it moves energy between the unit's busy and idle time, directly and through κ.
    const double idle_error =
        std::max({1.0, 0.02 * (seconds > 0 ? energy_sum / seconds : 0.0), in.idle_watts_error});
    const double bound = in.share[i] * kappa * std::max({most - square, square - least, 0.0}) +
                         std::abs(est - model) +
                         in.share[i] * idle_error * (want + square / std::max(s, kTiny)) +
                         EdgeMargin(in, b, e, i, kappa + idle_error);
    // Spread over the pieces by their busy energy (by seconds where there is none).
    for (size_t k = b; k < e; ++k) {
      const double part =
          est > kTiny ? out.units[k][i].busy_energy_joules / est : in.pieces[k].seconds / seconds;
      out.units[k][i].busy_energy_bound_joules = bound * part;
    }
  }
}

void ProfileGroup(const ProfileInput& in, size_t b, size_t e, ProfileResult& out) {
  const size_t n = in.share.size();
  const auto& prior = in.pieces[b].prior;
  double s = 0, cap = 0;
  for (size_t i = 0; i < n; ++i) s += in.share[i] * prior[i], cap += in.share[i];
  const auto target = TargetActivity(in, b, e, s, cap);
  for (size_t k = b; k < e; ++k) out.busy[k] = prior;
  if (s > kTiny) {
    std::vector<double> want(n, 0);
    for (size_t k = b; k < e; ++k)
      for (size_t i = 0; i < n; ++i) want[i] += in.pieces[k].seconds * prior[i];
    for (int round = 0; round < kRounds; ++round) {
      for (size_t k = b; k < e; ++k) MeetPiece(in, target[k - b], out.busy[k]);
      for (size_t i = 0; i < n; ++i) MeetMean(in, b, e, i, want[i], out.busy);
    }
  }
  PieceEnergy(in, b, e, target, cap, out);
}

}  // namespace

ProfileResult ProfileCollections(const ProfileInput& in) {
  ProfileResult out;
  const size_t n = in.share.size();
  if (n == 0 || in.weight.size() != n || in.pieces.empty()) return out;
  for (const auto& p : in.pieces)
    if (p.prior.size() != n || !(p.seconds > 0) || !std::isfinite(p.watts)) return out;
  for (size_t i = 0; i < n; ++i)
    if (!(in.share[i] > 0) || !(in.weight[i] > 0)) return out;
  out.busy.resize(in.pieces.size());
  out.units.resize(in.pieces.size());
  for (size_t b = 0; b < in.pieces.size();) {
    size_t e = b + 1;
    while (e < in.pieces.size() && SamePrior(in.pieces[e].prior, in.pieces[b].prior)) ++e;
    ProfileGroup(in, b, e, out);
    b = e;
  }
  return out;
}

}  // namespace gpumeter::attribution
