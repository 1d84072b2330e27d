#include "sinks/top/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>

#include "common/text_cell.h"
#include "sinks/top/detail.h"

namespace gpumeter::top {
namespace {

using domain::OwnerKind;

std::string OwnerName(const domain::Owner& o) {
  return o.kind == OwnerKind::kContainer ? o.ns + "/" + o.pod + "/" + o.container
                                         : std::string(domain::ToString(o.kind));
}

Line Title(const ViewState& v) {
  Line l{{"gpumeter top  ", Style::kTitle}};
  for (View x : {View::kUnits, View::kPods, View::kFindings}) {
    const std::string name = ToString(x);
    l.push_back({x == v.view ? "[" + name + "]" : " " + name + " ",
                 x == v.view ? Style::kTitle : Style::kDim});
  }
  if (v.interactive) {
    // On a narrow terminal the key list gives way to its short form: these two lines do not
    // scroll sideways, and a line cut mid-word says nothing.
    size_t used = 0;
    for (const auto& span : l) used += span.text.size();
    const std::string keys =
        "   keys: u p f (tab) view  / filter  s sort  space pause  ? help  q quit";
    const std::string brief = "   ? help  q quit";
    if (v.width <= 0 || used + keys.size() <= static_cast<size_t>(v.width))
      l.push_back({keys, Style::kDim});
    else if (used + brief.size() <= static_cast<size_t>(v.width))
      l.push_back({brief, Style::kDim});
  }
  return l;
}

// The status line's parts, most telling first; on a narrow terminal (ViewState::width) a part
// that does not fit is left out whole (a later, shorter one may still fit), never cut mid-word.
// PAUSED always shows.
Line StatusLine(const FrameData* f, const ViewState& v, const FetchStatus& st) {
  std::vector<std::string> parts{f ? f->source : "no data yet"};
  if (f)
    parts.push_back(
        fmt::format("data at {}", UtcClock(f->at_unix_s)) +
        (f->span_seconds > 0 ? fmt::format(" (means over {:.0f} s)", f->span_seconds) : ""));
  if (!v.filter.ns.empty()) parts.push_back("namespace " + v.filter.ns);
  if (!v.filter.text.empty()) parts.push_back("filter \"" + v.filter.text + "\"");
  parts.push_back(fmt::format("sort {}", ToString(v.sort)));
  parts.push_back(fmt::format("by {}", v.by));
  parts.push_back(fmt::format("every {:g} s", st.interval_s));
  const size_t room = v.width > 0 ? static_cast<size_t>(v.width) - (v.paused ? 8 : 0) : SIZE_MAX;
  std::string text;
  for (const auto& p : parts) {
    const std::string next = text.empty() ? p : text + "  " + p;
    if (next.size() > room && !text.empty()) continue;
    text = next.size() > room ? next.substr(0, room) : next;  // the first part alone: cut
  }
  Line l{{text, Style::kDim}};
  if (v.paused) l.push_back({"  PAUSED", Style::kWarn});
  return l;
}

std::vector<Line> UnitsView(const FrameData& f, const ViewState& v) {
  std::vector<Line> out;
  for (const auto* u : FilteredUnits(f, v.filter)) {
    out.push_back({{fmt::format("{:<14}", TerminalCell(u->label)), Style::kTitle},
                   {fmt::format("{}  {}  {}  node {}", TerminalCell(u->key.model),
                                domain::ToStringOr(u->key.mode, "mode ?"),
                                TerminalCell(u->key.uuid), TerminalCell(u->key.node)),
                    Style::kNormal}});
    out.push_back(
        {{fmt::format("  busy {}  memory {} / {}  power {}  cost/h {}", Percent(u->busy_ratio),
                      Gib(u->memory_used_bytes), Gib(u->memory_total_bytes), Watts(u->power_watts),
                      Money(u->cost_per_hour)),
          Style::kNormal}});
    out.push_back({{fmt::format("  {:<42} {:>6} {:<12} {:>7} {:>8} {:>10} {:>8} {:>8}", "OWNER",
                                "HELD", "COMPUTE", "", "MEMBUSY", "MEMORY", "POWER", "COST/H"),
                    Style::kHeading}});
    for (const auto& o : u->owners) {
      const bool special = o.owner.kind != OwnerKind::kContainer;
      out.push_back(
          {{fmt::format("  {:<42} {:>6} ", Fit(OwnerName(o.owner), 42),
                        special ? "-" : Percent(o.held_share)),
            special ? Style::kIdle : Style::kNormal},
           {Bar(o.compute_ratio, 10), Style::kBar},
           {fmt::format(" {:>7} {:>8} {:>10} {:>8} {:>8}",
                        ComputePercent(o.compute_ratio, o.compute_bound_ratio, o.compute_unknown),
                        ComputePercent(o.memory_busy_ratio, o.memory_busy_bound_ratio,
                                       o.memory_busy_unknown),
                        Gib(o.memory_bytes), Watts(o.power_watts, o.power_bound_watts),
                        Money(o.cost_per_hour)),
            special ? Style::kIdle : Style::kNormal}});
    }
    const auto s = SumOwners(*u);
    out.push_back({{fmt::format("  {:<42} {:>6} {:<12} {:>7} {:>8} {:>10} {:>8} {:>8}", "= total",
                                Percent(s.held_share), "", Percent(s.compute_ratio),
                                Percent(s.memory_busy_ratio), Gib(s.memory_bytes),
                                Watts(s.power_watts), Money(s.cost_per_hour)),
                    Style::kDim}});
    out.push_back({});
  }
  if (out.empty()) out.push_back({{"  no unit matches", Style::kDim}});
  out.push_back(
      {{"  busy, HELD, COMPUTE and MEMBUSY (memory busy time) in % of the unit (a MIG instance "
        "is its own 100 %); a+-b: an estimated split; >=a: some unmeasured (? for help)",
        Style::kDim}});
  return out;
}

std::vector<Line> PodsView(const FrameData& f, const ViewState& v) {
  std::vector<Line> out;
  out.push_back(
      {{fmt::format("  {:<44} {:>6} {:>8} {:>8} {:>10} {:>8} {:>8} {:>6}  {}",
                    Fit(v.by == "container" ? "NAMESPACE/POD/CONTAINER" : v.by, 44), "HELD",
                    "COMPUTE", "MEMBUSY", "MEMORY", "POWER", "COST/H", "WASTE", "GPUS"),
        Style::kHeading}});
  std::string name;
  int i = 0;
  for (const auto& r : GroupRows(f, v.by, v.sort, v.filter)) {
    const bool selected = i++ == v.selected;
    name.clear();
    for (const auto& k : r.key) name += (name.empty() ? "" : "/") + k;
    std::string units;
    for (const auto& u : r.units) units += (units.empty() ? "" : ",") + u;
    const bool wasteful = r.waste_gpus && *r.waste_gpus >= 0.5;
    out.push_back(
        {{fmt::format(
              "{:<2}{:<44} {:>6} {:>8} {:>8} {:>10} {:>8} {:>8} ", selected ? ">" : "",
              Fit(name, 44), Percent(r.held_gpus),
              ComputePercent(r.compute_gpus, r.compute_bound_gpus, r.compute_unknown),
              ComputePercent(r.memory_busy_gpus, r.memory_busy_bound_gpus, r.memory_busy_unknown),
              Gib(r.memory_bytes), Watts(r.power_watts, r.power_bound_watts),
              Money(r.cost_per_hour)),
          selected ? Style::kSelected : Style::kNormal},
         {fmt::format("{:>6}", Percent(r.waste_gpus)), wasteful ? Style::kWarn : Style::kNormal},
         {"  " + TerminalCell(units), Style::kDim}});
  }
  if (out.size() == 1) out.push_back({{"  no container matches", Style::kDim}});
  out.push_back(
      {{"  HELD, COMPUTE, MEMBUSY (memory busy time) and WASTE (held - used) in % of one GPU; "
        "a+-b: an estimated split, the truth within; >=a: some of it unmeasured (? for help)",
        Style::kDim}});
  return out;
}

std::vector<Line> FindingsView(const FrameData& f, const ViewState& v) {
  if (!f.findings) return {{{"  findings: not available from this source", Style::kDim}}};
  std::vector<Line> out;
  out.push_back({{fmt::format("  {:<9} {:<24} {:<40} {:<9} {}", "SEVERITY", "KIND", "WHO", "SINCE",
                              "EVIDENCE"),
                  Style::kHeading}});
  int i = 0;
  for (const auto& x : SortedFindings(f, v.filter)) {
    const bool selected = i++ == v.selected;
    const Style severity = selected                   ? Style::kSelected
                           : x.severity == "critical" ? Style::kAlert
                                                      : Style::kWarn;
    out.push_back({{fmt::format("{:<2}{:<9} ", selected ? ">" : "", Fit(x.severity, 9)), severity},
                   {fmt::format("{:<24} {:<40} {:<9} {}", Fit(x.kind, 24), Fit(x.who, 40),
                                UtcClock(static_cast<int64_t>(x.first_seen_unix_s)),
                                TerminalCell(x.evidence)),
                    Style::kNormal}});
  }
  if (out.size() == 1) out.push_back({{"  no open finding", Style::kDim}});
  return out;
}

std::string RowId(const GroupRow& r) {
  std::string id;
  for (const auto& k : r.key) id += k + '\x1f';
  return id;
}
std::string RowId(const FindingNow& x) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", x.kind, x.node, x.who, x.unit,
                     x.first_seen_unix_s);
}

// The selected row in detail (by what it is, else by its place); the list without one.
std::vector<Line> DetailView(const FrameData& f, const ViewState& v) {
  const auto pick = [&](const auto& rows) -> decltype(&rows[0]) {
    for (size_t i = 0; i < rows.size(); ++i)
      if (v.selected_id.empty() ? static_cast<int>(i) == v.selected
                                : RowId(rows[i]) == v.selected_id)
        return &rows[i];
    return nullptr;
  };
  if (v.view == View::kPods) {
    const auto rows = GroupRows(f, v.by, v.sort, v.filter);
    if (const auto* r = pick(rows)) return GroupDetail(f, *r, v.by, v.filter, v.width);
    return PodsView(f, v);
  }
  if (v.view == View::kFindings) {
    if (!f.findings) return FindingsView(f, v);
    const auto found = SortedFindings(f, v.filter);
    if (const auto* x = pick(found)) return FindingDetail(*x, v.width);
    return FindingsView(f, v);
  }
  return UnitsView(f, v);
}

}  // namespace

std::string Fit(const std::string& text, size_t width) {
  const std::string s = TerminalCell(text);
  // Cut between characters: half of one is invalid UTF-8 on the screen.
  return s.size() <= width ? s : ValidUtf8(s, width - 2) + "..";
}

std::string Percent(Amount r) { return r ? fmt::format("{:.1f}%", 100 * *r) : "?"; }
std::string ComputePercent(Amount r, Amount bound, bool unknown) {
  if (!r) return "?";
  // ASCII: the screen counts columns in bytes, and a terminal in the C locale has no ± or ≥.
  if (unknown) return fmt::format(">={:.1f}%", 100 * *r);  // a lower bound: some went unmeasured
  // An estimated split: the truth within ± (whole percent: the bound is rarely narrow).
  if (bound && *bound >= 0.0005) return fmt::format("{:.0f}+-{:.0f}%", 100 * *r, 100 * *bound);
  return Percent(r);
}
std::string Gib(Amount b) {
  return b ? fmt::format("{:.2f} GiB", *b / (1024.0 * 1024 * 1024)) : "?";
}
std::string Watts(Amount w) { return w ? fmt::format("{:.0f} W", *w) : "?"; }
std::string Watts(Amount w, Amount bound) {
  // An estimated energy split (a DCGM collection's profile): the truth within ±, in whole watts.
  if (w && bound && *bound >= 0.5) return fmt::format("{:.0f}+-{:.0f}W", *w, *bound);
  return Watts(w);
}
std::string Money(Amount a) { return a ? fmt::format("{:.3f}", *a) : "?"; }

std::string Bar(Amount r, int width) {
  const auto w = static_cast<size_t>(std::max(width, 2));
  if (!r) return "[" + std::string(w / 2, ' ') + "?" + std::string(w - w / 2 - 1, ' ') + "]";
  const auto n = static_cast<size_t>(
      std::clamp(std::lround(*r * static_cast<double>(w)), 0L, static_cast<long>(w)));
  return "[" + std::string(n, '#') + std::string(w - n, '.') + "]";
}

std::string UtcClock(int64_t unix_s) {
  std::tm tm{};
  const std::time_t t = unix_s;
  if (!gmtime_r(&t, &tm)) return "?";
  return fmt::format("{:02}:{:02}:{:02}Z", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::vector<Line> HelpView() {
  const std::pair<const char*, const char*> keys[] = {
      {"u p f, Tab", "the units, pods or findings view"},
      {"/", "filter by part of a namespace, pod or container name (Enter applies, Escape cancels)"},
      {"Escape", "close the detail pane, else clear the filter"},
      {"s", "sort by compute, memory, cost or waste"},
      {"space", "pause: the frame stays, the status line goes on"},
      {"Up Down PgUp PgDn", "move the selected row (pods, findings); scroll the lines (units)"},
      {"Enter", "the selected row in detail: a finding's whole evidence, a row's containers"},
      {"Left Right", "scroll the columns (every column is reachable on a narrow terminal)"},
      {"?", "this help; any key closes it"},
      {"q, Ctrl-C", "quit"}};
  std::vector<Line> out{{{"  Keys", Style::kHeading}}};
  for (const auto& [k, what] : keys)
    out.push_back({{fmt::format("    {:<20}", k), Style::kNormal}, {what, Style::kDim}});
  const char* columns[] = {
      "units view: HELD, COMPUTE and MEMBUSY in % of the unit (a MIG instance is its own 100 %); "
      "MEMORY GiB; POWER W; COST/H in the pricing's currency",
      "pods view: HELD, COMPUTE, MEMBUSY and WASTE (held - used) in % of one GPU: a container on "
      "two whole GPUs holds 200 %",
      "MEMBUSY: memory busy time, the share of the memory's busy time (per-process samples) or of "
      "its peak bandwidth (GPM, DCGM) the owner used (docs/attribution.md, definitions of use)",
      "COMPUTE 30+-25%: an estimated split, the truth within 25 points; >=12.0%: some of it was "
      "not measured, so 12 % is a lower bound; ?: unknown (never shown as 0)",
      "POWER 350+-40W: energy estimated inside DCGM collections, the truth within 40 W",
      "findings: critical first, then warning and info, newest first within each",
      "detail of a pods row: its totals in % of one GPU, each container in % of its unit"};
  out.push_back({});
  out.push_back({{"  Columns", Style::kHeading}});
  for (const char* c : columns) out.push_back({{std::string("    ") + c, Style::kNormal}});
  return out;
}

std::vector<Line> Layout(const FrameData* f, const ViewState& v, const FetchStatus& st) {
  std::vector<Line> out{Title(v), StatusLine(f, v, st)};
  if (st.failing_since_unix_s)
    out.push_back({{fmt::format("STALE since {} ({} s): {}", UtcClock(*st.failing_since_unix_s),
                                st.now_unix_s - *st.failing_since_unix_s, st.error),
                    Style::kAlert}});
  if (v.editing)
    out.push_back({{"filter (namespace, pod or container): " + *v.editing + "_", Style::kWarn}});
  out.push_back({});
  if (!f) {
    out.push_back({{"  waiting for the first reply", Style::kDim}});
    return out;
  }
  auto body = v.help                      ? HelpView()
              : v.detail                  ? DetailView(*f, v)
              : v.view == View::kPods     ? PodsView(*f, v)
              : v.view == View::kFindings ? FindingsView(*f, v)
                                          : UnitsView(*f, v);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<std::string> RowIds(const FrameData* f, const ViewState& v) {
  std::vector<std::string> ids;
  if (!f) return ids;
  if (v.view == View::kPods)
    for (const auto& r : GroupRows(*f, v.by, v.sort, v.filter)) ids.push_back(RowId(r));
  if (v.view == View::kFindings && f->findings)
    for (const auto& x : SortedFindings(*f, v.filter)) ids.push_back(RowId(x));
  return ids;
}

void Reanchor(ViewState& v, const FrameData* f) {
  const auto ids = RowIds(f, v);
  if (ids.empty()) {
    v.selected = 0, v.selected_id.clear(), v.detail = false;
    return;
  }
  if (!v.selected_id.empty()) {
    const auto it = std::find(ids.begin(), ids.end(), v.selected_id);
    if (it != ids.end())
      v.selected = static_cast<int>(it - ids.begin());
    else
      v.detail = false;  // its row went away: the list again, near where it was
  }
  v.selected = std::clamp(v.selected, 0, static_cast<int>(ids.size()) - 1);
  v.selected_id = ids[static_cast<size_t>(v.selected)];
}

int FollowSelection(const std::vector<Line>& lines, int scroll, int rows) {
  for (size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i].front().style != Style::kSelected) continue;
    const int line = static_cast<int>(i);
    // Line L shows on screen row L - scroll, which must be in [2, rows - 1].
    return std::clamp(scroll, std::max(0, line - std::max(2, rows - 1)), std::max(0, line - 2));
  }
  return scroll;
}

std::string PlainText(const std::vector<Line>& lines) {
  std::string out;
  for (const auto& l : lines) {
    std::string text;
    for (const auto& s : l) text += s.text;
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace gpumeter::top
