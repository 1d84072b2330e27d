// The terminal of `gpumeter top`'s interactive view, through ncurses (docs/top.md says why
// ncurses). ncurses is process-global state; this object owns it: Open() sets the terminal up
// (newterm, raw, noecho, keypad) and the destructor gives it back (endwin, delscreen), on
// every path out, so a failure or an exception never leaves the user's terminal raw.
// One Screen at a time, used from one thread.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "common/error.h"
#include "sinks/top/keys.h"
#include "sinks/top/layout.h"

struct screen;  // ncurses' SCREEN

namespace gpumeter::app {

class Screen {
 public:
  // `colour`: use colours when the terminal has them (the caller decides NO_COLOR). Errors: not
  // a terminal ncurses knows (TERM), or a mode that cannot be set.
  static Expected<std::unique_ptr<Screen>> Open(bool colour);
  ~Screen();
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  // Draws `lines` from `first` on, cut to the window; styles become colours or attributes. The
  // lines under the title and status start at column `first_column` (horizontal scrolling).
  void Draw(const std::vector<top::Line>& lines, int first, int first_column);
  int columns() const;
  // The next key, waiting at most `wait`; kind kNone when none came.
  top::Key ReadKey(std::chrono::milliseconds wait);
  int rows() const;  // the window's height

 private:
  explicit Screen(::screen* s, bool colour) : screen_(s), colour_(colour) {}
  unsigned Attribute(top::Style style) const;  // an ncurses attr_t

  ::screen* screen_;
  bool colour_;
};

}  // namespace gpumeter::app
