// When each unit of a DCGM-fed GPU was busy inside a collection, from the board's power.
//
// DCGM tells each unit's mean activity over a collection (30 s by default), not in which of its
// seconds the unit was busy; energy follows a unit's time at the power drawn in it, so a burst
// shorter than a collection drew more than the collection's mean power. The board's power over
// finer pieces (the energy counter per pass, or the driver's power samples per period) tells how
// the GPU's slice-weighted activity moved inside the collection: power is close to linear in it
// (idle_power.h). ProfileCollections finds, per piece and unit, an activity profile that keeps
// each collection's measured mean exactly (compute over a collection does not change), follows
// the power within it, and moves the units whose activity changed between collections first (a
// unit steady across collections is taken as steady within them). It is an estimate: the busy
// energy of each unit carries a bound, the range every profile the constraints allow gives
// (docs/attribution.md, "DCGM activity"). Pure; no state.
#pragma once

#include <cstddef>
#include <vector>

namespace gpumeter::attribution {

struct ProfilePiece {
  double seconds = 0;  // > 0
  double watts = 0;    // the board's mean power over the piece
  // Activity is taken as constant over the piece (a driver period of power samples); else only
  // its mean is known and anything in [0, 1] may lie inside (a whole pass).
  bool resolved = false;
  std::vector<double> prior;  // per unit: the collections' mean activity over the piece, [0, 1]
};

struct ProfileInput {
  std::vector<ProfilePiece> pieces;  // in time order
  std::vector<double> share;         // per unit: its part of the GPU (slices / total), (0, 1]
  // Per unit: how freely it takes up power changes inside a collection, > 0 (its activity's
  // change between the collections around this one, plus a floor).
  std::vector<double> weight;
  double idle_watts = 0;  // the GPU's idle power (fitted or configured)
  // How far off idle_watts may be, watts: at least max(1 W, 2 % of the mean power), what the fit
  // guarantees (IdlePowerFit); more where idle power is not known and is taken from the power.
  double idle_watts_error = 0;
  // Per unit: its activity over the piece before the first one (the last released); empty when
  // not known. With seen_within_s, how late a collection's edge may be on the pieces' clock (the
  // source's poll): activity across an edge may be booked on its other side, and the bound says
  // so (at most seen_within_s × the change in activity across it, at full power).
  std::vector<double> before;
  double seen_within_s = 0;
};

// One unit over a run of pieces.
struct UnitProfile {
  double busy_seconds = 0;   // Σ activity × seconds (the collections' own, over whole groups)
  double energy_joules = 0;  // the unit's part of the board's energy
  double busy_energy_joules = 0;  // of which drawn while it was busy (its tenants'); rest idle's
  // The truth of busy_energy_joules lies within ± this, under the linear power model.
  double busy_energy_bound_joules = 0;
};

struct ProfileResult {
  std::vector<std::vector<double>> busy;        // [piece][unit], [0, 1]
  std::vector<std::vector<UnitProfile>> units;  // [piece][unit]
};

// Empty when the input is malformed (sizes differ, no units). Pieces whose prior vectors are equal
// and adjacent form one group (a collection, or the part of one these pieces cover); a group whose
// power did not rise above idle, or whose units were all idle, keeps its priors.
ProfileResult ProfileCollections(const ProfileInput& in);

}  // namespace gpumeter::attribution
