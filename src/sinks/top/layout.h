// The layout of a `gpumeter top` frame: lines of styled text, the same for the plain-text frame
// of --once and the ncurses screen, which maps each style to a colour (or to none). A header
// names the view and the keys, a status line says the source, the data's time and, when the
// last fetches failed, since when the data is stale and why. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/top/frame.h"

namespace gpumeter::top {

// kSelected: the row the detail pane (Enter) would show, drawn reversed.
enum class Style { kNormal, kTitle, kHeading, kDim, kAlert, kBar, kIdle, kWarn, kSelected };

struct Span {
  std::string text;
  Style style = Style::kNormal;
};
using Line = std::vector<Span>;

// What the user chose. `editing`: the namespace filter being typed (not yet applied).
struct ViewState {
  View view = View::kUnits;
  SortKey sort = SortKey::kCompute;
  std::string by = "container";
  Filter filter;  // ns from --namespace; text typed after '/'

  bool paused = false;
  bool interactive = false;  // the key help belongs on the screen, not in --once
  bool help = false;         // `?`: the keys and what the columns mean, in place of the view
  int width = 0;             // the terminal's columns: the fixed lines fit it (0: unlimited)
  std::optional<std::string> editing;
  // The pods and findings views of the interactive screen: the selected row (-1: none, as in
  // --once), which row it is (RowIds; "" once a key moved the selection), and whether its
  // detail pane is shown in place of the list.
  int selected = -1;
  std::string selected_id;
  bool detail = false;
};

// How the fetching goes: the last failure (if the latest fetch failed) and since when.
struct FetchStatus {
  int64_t now_unix_s = 0;
  double interval_s = 1;
  std::optional<int64_t> failing_since_unix_s;  // first failure of the current streak
  std::string error;                            // the latest failure
};

// `frame`: null before the first good fetch.
std::vector<Line> Layout(const FrameData* frame, const ViewState& view, const FetchStatus& status);
// The rows the view can select, in order, each named by what it is (a pods row by its key, a
// finding by kind, node, who, unit and first seen): none in the units view or before a frame.
std::vector<std::string> RowIds(const FrameData* frame, const ViewState& view);
// Once per frame, before Layout: the selection follows its row when the rows re-sort or others
// come and go; a row that went away closes its detail pane, and the selection stays in range.
void Reanchor(ViewState& view, const FrameData* frame);
// The first line to show so that the selected row's line (kSelected) is on a screen of `rows`
// lines, whose first two (title, status) do not scroll; `scroll` when nothing is selected.
int FollowSelection(const std::vector<Line>& lines, int scroll, int rows);
// The lines as text, without styles, one per line.
std::string PlainText(const std::vector<Line>& lines);

// Every name reaches the screen through here: control and bidi characters escaped (TerminalCell),
// then cut to `width` columns with "..".
std::string Fit(const std::string& text, size_t width);
// Shared by the views: "63.0%", "10.00 GiB", "212 W", "3.50", a bar of `width`; `?` if unknown.
std::string Percent(Amount ratio);
// The help `?` shows: every key, and the unit of every column in each view.
std::vector<Line> HelpView();
// A compute share: "12.0%"; "12+-40%" where it is an estimated split with that bound; ">=12.0%"
// where some of it was unmeasured (the value a lower bound); "?" unknown.
std::string ComputePercent(Amount ratio, Amount bound, bool unknown);
std::string Gib(Amount bytes);
std::string Watts(Amount watts);
// Watts with the ± of an estimated energy split ("350+-40W"); as Watts(watts) where there is none.
std::string Watts(Amount watts, Amount bound);
std::string Money(Amount amount);
std::string Bar(Amount ratio, int width);
std::string UtcClock(int64_t unix_s);

}  // namespace gpumeter::top
