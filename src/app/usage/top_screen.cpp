#include "app/usage/top_screen.h"

#include <curses.h>

#include <algorithm>
#include <cstdio>

namespace gpumeter::app {
namespace {

// Colour pairs, one per coloured style (0 is the terminal's default).
enum Pair : short { kTitle = 1, kAlert, kBar, kIdle, kWarn };

bool SetUpColours() {
  if (!has_colors() || start_color() == ERR) return false;
  // -1: the terminal's own background; without use_default_colors, black.
  const short bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
  return init_pair(kTitle, COLOR_CYAN, bg) != ERR && init_pair(kAlert, COLOR_RED, bg) != ERR &&
         init_pair(kBar, COLOR_GREEN, bg) != ERR && init_pair(kIdle, COLOR_BLUE, bg) != ERR &&
         init_pair(kWarn, COLOR_YELLOW, bg) != ERR;
}

}  // namespace

Expected<std::unique_ptr<Screen>> Screen::Open(bool colour) {
  // newterm, not initscr: initscr exits the process on an unknown terminal; newterm says so.
  ::screen* s = newterm(nullptr, stdout, stdin);
  if (!s)
    return MakeError(ErrorCode::kUnavailable,
                     "top: cannot drive this terminal (TERM unknown to ncurses?); try --once");
  std::unique_ptr<Screen> out(new Screen(s, false));  // from here on, the destructor ends it
  // raw, not cbreak: Ctrl-C arrives as a key that quits through the destructor, rather than as
  // a signal that would end the process with the terminal left raw.
  if (raw() == ERR || noecho() == ERR || keypad(stdscr, TRUE) == ERR)
    return MakeError(ErrorCode::kUnavailable, "top: cannot set the terminal's input mode");
  // Cosmetic: a terminal without an invisible cursor keeps its cursor, nothing else changes.
  (void)curs_set(0);
  // Escape alone is a key here (cancel, clear): do not wait a second for a sequence after it.
  (void)set_escdelay(25);
  out->colour_ = colour && SetUpColours();
  return out;
}

Screen::~Screen() {
  // endwin fails only when the screen was never set up; there is nothing left to undo then.
  (void)endwin();
  delscreen(screen_);
}

unsigned Screen::Attribute(top::Style style) const {
  using top::Style;
  const auto pair = [&](Pair p) { return colour_ ? static_cast<unsigned>(COLOR_PAIR(p)) : 0u; };
  switch (style) {
    case Style::kTitle:
      return A_BOLD | pair(kTitle);
    case Style::kHeading:
      return A_BOLD;
    case Style::kDim:
      return A_DIM;
    case Style::kAlert:
      return A_BOLD | (colour_ ? pair(kAlert) : A_REVERSE);
    case Style::kBar:
      return pair(kBar);
    case Style::kIdle:
      return pair(kIdle);
    case Style::kWarn:
      return A_BOLD | pair(kWarn);
    case Style::kSelected:
      return A_REVERSE;
    case Style::kNormal:
      break;
  }
  return A_NORMAL;
}

void Screen::Draw(const std::vector<top::Line>& lines, int first, int first_column) {
  // erase and refresh fail only without a screen, which Open guarantees; a frame that did not
  // reach the terminal is redrawn with the next one anyway.
  (void)erase();
  const int height = LINES, width = COLS;
  for (int row = 0; row < height; ++row) {
    // The title and status lines stay on top; the rest scrolls under them.
    const int index = row < 2 ? row : first + row;
    if (index >= static_cast<int>(lines.size())) break;
    // Lines under them also scroll sideways: `skip` columns of the line are left of the window.
    int skip = row < 2 ? 0 : std::max(0, first_column);
    int col = 0;
    for (const auto& span : lines[static_cast<size_t>(index)]) {
      if (col >= width) break;
      const int len = static_cast<int>(span.text.size());  // layout text is ASCII: bytes = columns
      const int cut = std::min(skip, len);
      skip -= cut;
      if (cut == len) continue;
      (void)attrset(static_cast<int>(Attribute(span.style)));
      // ERR here only means the text reached the window's edge: it is cut, as intended.
      (void)mvaddnstr(row, col, span.text.c_str() + cut, width - col);
      col += len - cut;
    }
  }
  (void)attrset(A_NORMAL);
  (void)refresh();
}

top::Key Screen::ReadKey(std::chrono::milliseconds wait) {
  timeout(static_cast<int>(wait.count()));
  const int c = getch();
  using top::Key;
  switch (c) {
    case ERR:
      return {};
    case 3:  // Ctrl-C, a key in raw mode
      return {Key::kInterrupt};
    case '\n':
    case '\r':
    case KEY_ENTER:
      return {Key::kEnter};
    case 27:
      return {Key::kEscape};
    case KEY_BACKSPACE:
    case 127:
    case 8:
      return {Key::kBackspace};
    case '\t':
      return {Key::kTab};
    case KEY_UP:
      return {Key::kUp};
    case KEY_DOWN:
      return {Key::kDown};
    case KEY_PPAGE:
      return {Key::kPageUp};
    case KEY_NPAGE:
      return {Key::kPageDown};
    case KEY_LEFT:
      return {Key::kLeft};
    case KEY_RIGHT:
      return {Key::kRight};
    default:
      break;
  }
  if (c >= 32 && c < 127) return {Key::kChar, static_cast<char>(c)};
  return {};
}

int Screen::rows() const { return LINES; }
int Screen::columns() const { return COLS; }

}  // namespace gpumeter::app
