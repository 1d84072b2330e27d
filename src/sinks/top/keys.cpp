#include "sinks/top/keys.h"

#include <algorithm>

namespace gpumeter::top {
namespace {

// Namespaces are DNS labels: lower-case letters, digits and '-', at most 63 characters.
bool NamespaceChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

void EditFilter(Interaction& s, const Key& key) {
  auto& text = *s.view.editing;
  switch (key.kind) {
    case Key::kEnter:
      s.view.filter.text = text;
      s.view.editing.reset();
      s.scroll = 0, s.view.selected = 0;
      return;
    case Key::kEscape:
      s.view.editing.reset();
      return;
    case Key::kBackspace:
      if (!text.empty()) text.pop_back();
      return;
    case Key::kChar:
      if (NamespaceChar(key.c) && text.size() < 63) text += key.c;
      return;
    default:
      return;
  }
}

// The pods and findings views select rows; the units view and a detail pane scroll.
bool Selecting(const Interaction& s) {
  return !s.view.detail && (s.view.view == View::kPods || s.view.view == View::kFindings);
}

// Up/Down and the page keys: `lines` down (negative: up).
void Move(Interaction& s, int lines) {
  if (Selecting(s)) {
    s.view.selected = std::max(0, std::max(0, s.view.selected) + lines);
    s.view.selected_id.clear();  // the place now names the row, until the next frame
  } else
    s.scroll = std::max(0, s.scroll + lines);
}

void SwitchView(Interaction& s, View v) {
  s.view.view = v, s.scroll = 0;
  s.view.selected = 0, s.view.selected_id.clear(), s.view.detail = false;
}

View NextView(View v) {
  return v == View::kUnits ? View::kPods : v == View::kPods ? View::kFindings : View::kUnits;
}

void Command(Interaction& s, char c) {
  switch (c) {
    case 'q':
    case 'Q':
      s.quit = true;
      return;
    case 'u':
      return SwitchView(s, View::kUnits);
    case 'p':
      return SwitchView(s, View::kPods);
    case 'f':
      return SwitchView(s, View::kFindings);
    case 's':
      s.view.sort = NextSortKey(s.view.sort);
      return;
    case ' ':
      s.view.paused = !s.view.paused;
      return;
    case '/':
      s.view.editing = s.view.filter.text;
      return;
    case 'j':
      return Move(s, 1);
    case 'k':
      return Move(s, -1);
    case '?':
      s.view.help = true, s.scroll = 0;
      return;
    default:
      return;
  }
}

}  // namespace

void ApplyKey(Interaction& s, const Key& key, int page_lines) {
  if (key.kind == Key::kInterrupt) {
    s.quit = true;
    return;
  }
  if (s.view.editing) return EditFilter(s, key);
  if (s.view.help) {
    if (key.kind != Key::kNone) s.view.help = false;
    return;
  }
  const int page = std::max(1, page_lines);
  switch (key.kind) {
    case Key::kChar:
      return Command(s, key.c);
    case Key::kTab:
      return SwitchView(s, NextView(s.view.view));
    case Key::kEnter:
      if (s.view.view != View::kUnits) s.view.detail = !s.view.detail, s.scroll = 0;
      return;
    case Key::kEscape:
      if (s.view.detail)
        s.view.detail = false, s.scroll = 0;
      else
        s.view.filter.text.clear();
      return;
    case Key::kDown:
      return Move(s, 1);
    case Key::kUp:
      return Move(s, -1);
    case Key::kPageDown:
      return Move(s, page);
    case Key::kPageUp:
      return Move(s, -page);
    case Key::kLeft:
      s.hscroll = std::max(0, s.hscroll - kColumnStep);
      return;
    case Key::kRight:
      s.hscroll += kColumnStep;
      return;
    default:
      return;
  }
}

}  // namespace gpumeter::top
