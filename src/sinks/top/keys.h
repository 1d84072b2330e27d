// What a key does in `gpumeter top`'s interactive view: switch views, sort, filter by namespace,
// pause, scroll, quit. The screen turns the terminal's keys into Key; the rules are here, pure,
// so they are tested without a terminal.
#pragma once

#include "sinks/top/layout.h"

namespace gpumeter::top {

struct Key {
  enum Kind {
    kNone,
    kChar,
    kEnter,
    kEscape,
    kBackspace,
    kTab,
    kUp,
    kDown,
    kPageUp,
    kPageDown,
    kLeft,
    kRight,
    kInterrupt  // Ctrl-C: quits from anywhere, also while a filter is typed
  };
  Kind kind = kNone;
  char c = 0;  // kChar: a printable character
};

// The view state and the first line shown (scrolling), as the keys change them.
struct Interaction {
  ViewState view;
  int scroll = 0;
  bool quit = false;
  int hscroll = 0;  // the first column shown under the title and status lines
};

// Columns one Left or Right key moves the view by.
constexpr int kColumnStep = 10;

// Applies one key. While a namespace filter is being typed (`/`), keys edit it: Enter applies
// it, Escape cancels; while the help is shown, any key closes it (Ctrl-C still quits); otherwise
// u p f / Tab switch views, s cycles the sort, space pauses, ? shows the help, Escape clears the
// filter, Left/Right scroll columns, q quits. Up/Down (j/k) and the page keys scroll lines in
// the units view and in a detail pane, and move the selected row in the pods and findings views,
// where Enter opens the row's detail pane and Enter or Escape closes it.
void ApplyKey(Interaction& state, const Key& key, int page_lines);

}  // namespace gpumeter::top
