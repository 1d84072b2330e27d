// Which parts of a window a report reads from gpumeter's hourly recorded series and which from the
// raw counters (docs/fleet.md). The rule group `gpumeter.hourly` (deploy/kubernetes/monitoring)
// evaluates every hour at a phase Prometheus picks per group; each evaluation at T records the
// counters' growth over (T - 1 h, T] and the marker series gpumeter:hourly_rules:evaluation.
// Coverage is read from the marker's samples: an evaluation at T covers the hour before it; runs
// of evaluations 1 h apart (within a second) are recorded segments; everything else in the window
// (before the rules were deployed, the part of an hour at each end, evaluations Prometheus missed)
// is read from the raw counters. Pure; times in Unix seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpumeter::history {

struct Segment {
  int64_t from = 0, to = 0;  // [from, to)
  bool recorded = false;     // from the hourly recorded series (to is an evaluation time)
};

// The window [from, to) cut into segments in time order, covering it without overlap. Only the
// `max_recorded` longest recorded runs are used (each costs its own queries); the rest is raw.
std::vector<Segment> PlanSegments(int64_t from, int64_t to, std::vector<int64_t> evaluations,
                                  size_t max_recorded = 8);

// "recorded hourly series for 720 h (2026-11-03T10:17:00Z .. …), raw series for 1.4 h" — for the
// output to say which series a report or rightsizing used.
std::string DescribeSegments(const std::vector<Segment>& segments);

}  // namespace gpumeter::history
