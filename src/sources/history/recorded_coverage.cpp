#include "sources/history/recorded_coverage.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/rfc3339.h"

namespace gpumeter::history {

std::vector<Segment> PlanSegments(int64_t from, int64_t to, std::vector<int64_t> evaluations,
                                  size_t max_recorded) {
  std::sort(evaluations.begin(), evaluations.end());
  evaluations.erase(std::unique(evaluations.begin(), evaluations.end()), evaluations.end());
  // Runs of whole hours inside the window: (T - 1 h, T] with T - 1 h >= from and T <= to.
  std::vector<Segment> runs;
  for (const int64_t t : evaluations) {
    if (t - 3600 < from || t > to) continue;
    // The next evaluation of a run comes an hour after the last (a second of drift allowed).
    if (!runs.empty() && t - runs.back().to <= 3601 && t - runs.back().to >= 3599)
      runs.back().to = t;
    else
      runs.push_back({t - 3600, t, true});
  }
  if (runs.size() > max_recorded) {
    std::stable_sort(runs.begin(), runs.end(), [](const Segment& a, const Segment& b) {
      return a.to - a.from > b.to - b.from;
    });
    runs.resize(max_recorded);
    std::sort(runs.begin(), runs.end(),
              [](const Segment& a, const Segment& b) { return a.from < b.from; });
  }
  std::vector<Segment> out;
  int64_t at = from;
  for (auto r : runs) {
    // A run that overlaps the previous one (two evaluators at different phases) is read raw:
    // a recorded segment must be whole hours of one evaluator's, or its range selector would
    // take the other's hour too.
    if (r.from < at) continue;
    if (r.from > at) out.push_back({at, r.from, false});
    out.push_back(r);
    at = r.to;
  }
  if (at < to) out.push_back({at, to, false});
  return out;
}

std::string DescribeSegments(const std::vector<Segment>& segments) {
  double recorded_h = 0, raw_h = 0;
  int64_t first = 0, last = 0;
  for (const auto& s : segments) {
    if (!s.recorded) {
      raw_h += static_cast<double>(s.to - s.from) / 3600;
      continue;
    }
    if (recorded_h == 0) first = s.from;
    recorded_h += static_cast<double>(s.to - s.from) / 3600;
    last = s.to;
  }
  if (recorded_h == 0) return fmt::format("raw series for {:.1f} h", raw_h);
  return fmt::format("recorded hourly series for {:.0f} h ({} .. {}), raw series for {:.1f} h",
                     recorded_h, Rfc3339(first), Rfc3339(last), raw_h);
}

}  // namespace gpumeter::history
