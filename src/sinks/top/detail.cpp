#include "sinks/top/detail.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "common/text_cell.h"

namespace gpumeter::top {
namespace {

// `text` in lines of at most `width` columns, broken between words (a word longer than a line
// is cut into pieces): nothing of it is lost off the edge. Control and bidi characters are
// escaped first (common/text_cell.h): names and evidence come from pods and drivers.
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::istringstream words(TerminalCell(text));
  std::string word, line;
  while (words >> word) {
    while (word.size() > width) {
      if (!line.empty()) out.push_back(line), line.clear();
      // Cut between characters (every width here is 8 or more: a piece is never empty).
      out.push_back(ValidUtf8(word, width));
      word.erase(0, out.back().size());
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) out.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

Line Field(const std::string& name, const std::string& value) {
  return {{fmt::format("    {:<16}", name), Style::kDim}, {value, Style::kNormal}};
}

// The text's columns on a screen of `width` (0: 100): its indent and a margin off.
size_t TextWidth(int width) {
  return static_cast<size_t>(std::max(24, (width > 0 ? width : 100) - 6));
}

}  // namespace

std::vector<Line> FindingDetail(const FindingNow& x, int width) {
  const size_t w = TextWidth(width);
  std::vector<Line> out{
      {{"  Finding  ", Style::kHeading},
       {Fit(x.severity, 10), x.severity == "critical" ? Style::kAlert : Style::kWarn},
       {"  " + Fit(x.kind, 30), Style::kHeading}},
      Field("who", x.who.empty() ? "-" : Fit(x.who, w - 16)),
      Field("node", Fit(x.node, w - 16)),
      Field("unit", x.unit.empty() ? "-" : Fit(x.unit, w - 16)),
      Field("first seen", UtcClock(static_cast<int64_t>(x.first_seen_unix_s))),
      {},
      {{"  Evidence", Style::kHeading}}};
  for (const auto& l : Wrap(x.evidence, w)) out.push_back({{"    " + l}});
  out.push_back({});
  for (const auto& l :
       Wrap("Enter or Escape: back to the list (docs/guardrails.md says what to do).", w))
    out.push_back({{"  " + l, Style::kDim}});
  return out;
}

std::vector<Line> GroupDetail(const FrameData& f, const GroupRow& r, const std::string& by,
                              const Filter& filter, int width) {
  const size_t w = TextWidth(width);
  std::string name;
  for (const auto& k : r.key) name += (name.empty() ? "" : "/") + k;
  std::vector<Line> out{
      {{"  " + Fit(by, 20) + "  ", Style::kHeading}, {Fit(name, w - 22), Style::kHeading}},
      Field("held", Percent(r.held_gpus) + " of one GPU"),
      Field("compute", ComputePercent(r.compute_gpus, r.compute_bound_gpus, r.compute_unknown) +
                           " of one GPU"),
      Field("memory busy",
            ComputePercent(r.memory_busy_gpus, r.memory_busy_bound_gpus, r.memory_busy_unknown) +
                " of one GPU"),
      Field("memory", Gib(r.memory_bytes)),
      Field("power", Watts(r.power_watts, r.power_bound_watts)),
      Field("cost per hour", Money(r.cost_per_hour) + " " + Fit(f.currency, 8)),
      Field("waste", Percent(r.waste_gpus) + " of one GPU (held - used)")};
  // The pods' labels, where the row is of pods or containers.
  if (r.key.size() >= 2)
    if (const auto it = f.labels.find({r.key[0], r.key[1]}); it != f.labels.end()) {
      std::string kv;
      for (const auto& [k, v] : it->second) kv += (kv.empty() ? "" : ", ") + k + "=" + v;
      for (const auto& l : Wrap(kv, w - 16)) out.push_back(Field("labels", l));
    }
  out.push_back({});
  out.push_back({{"  Containers, on each unit", Style::kHeading}});
  // Each member on each unit: its names whole on a line, its figures (in % of that unit, a MIG
  // instance being its own 100 %) on the next, so nothing is cut at 80 columns.
  for (const auto& u : f.units)
    for (const auto& o : u.owners) {
      if (o.owner.kind != domain::OwnerKind::kContainer || !filter.Matches(o.owner) ||
          GroupKeyOf(f, o.owner, by) != r.key)
        continue;
      for (const auto& l :
           Wrap(u.label + ": " + o.owner.ns + "/" + o.owner.pod + "/" + o.owner.container, w))
        out.push_back({{"    " + l, Style::kNormal}});
      out.push_back(
          {{fmt::format("      held {}  compute {}  memory {}  power {}  cost/h {}",
                        Percent(o.held_share),
                        ComputePercent(o.compute_ratio, o.compute_bound_ratio, o.compute_unknown),
                        Gib(o.memory_bytes), Watts(o.power_watts, o.power_bound_watts),
                        Money(o.cost_per_hour)),
            Style::kDim}});
    }
  out.push_back({});
  for (const auto& l :
       Wrap("Per container: held and compute in % of its unit (a MIG instance is its "
            "own 100 %); the totals above in % of one GPU. Enter or Escape: back "
            "to the list.",
            w))
    out.push_back({{"  " + l, Style::kDim}});
  return out;
}

}  // namespace gpumeter::top
