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
      s.scroll = 0;
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
      s.view.view = View::kUnits, s.scroll = 0;
      return;
    case 'p':
      s.view.view = View::kPods, s.scroll = 0;
      return;
    case 'f':
      s.view.view = View::kFindings, s.scroll = 0;
      return;
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
      ++s.scroll;
      return;
    case 'k':
      s.scroll = std::max(0, s.scroll - 1);
      return;
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
      s.view.view = NextView(s.view.view), s.scroll = 0;
      return;
    case Key::kEscape:
      s.view.filter.text.clear();
      return;
    case Key::kDown:
      ++s.scroll;
      return;
    case Key::kUp:
      s.scroll = std::max(0, s.scroll - 1);
      return;
    case Key::kPageDown:
      s.scroll += page;
      return;
    case Key::kPageUp:
      s.scroll = std::max(0, s.scroll - page);
      return;
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
