// Cells of our outputs that hold text we did not write (namespaces, pod names, label values from a
// pods file or a non-validating API server): they must not be turned against their reader.
//   TerminalCell: for tables on a terminal. C0/C1 control characters, DEL, invalid UTF-8 and the
//     Unicode bidi controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069, which reorder what
//     follows them, e.g. a name that displays as another) are written as \xNN or \u{NNNN}; other
//     UTF-8 passes as is.
//   SpreadsheetCell: for CSV cells. A cell that starts with = + - @, a tab or a CR is a formula
//     to Excel, LibreOffice and Google Sheets (`=cmd|' -C calc'!A0`); it gets a leading ' as
//     OWASP's CSV-injection advice says, unless the whole cell is a plain number ("-0.5").
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace gpumeter {

namespace text_cell_detail {

// The length of the UTF-8 sequence at s[i] and its code point; 0 when it is not valid UTF-8.
inline size_t Utf8At(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = b & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

inline bool IsBidiControl(uint32_t cp) {
  return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace text_cell_detail

inline std::string TerminalCell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = b >= 0x80 ? text_cell_detail::Utf8At(text, i, cp) : 0;
    if (n == 0) {  // a control character, DEL, or a byte that is not UTF-8
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
      ++i;
    } else if ((cp >= 0x80 && cp < 0xa0) || text_cell_detail::IsBidiControl(cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
      out += buf;
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

inline std::string SpreadsheetCell(std::string_view text) {
  if (text.empty()) return std::string();
  const char c = text.front();
  if (c != '=' && c != '+' && c != '-' && c != '@' && c != '\t' && c != '\r')
    return std::string(text);
  const std::string s(text);
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (end == s.c_str() + s.size() && s.find_first_of("\t\r") == std::string::npos) return s;
  return "'" + s;
}

}  // namespace gpumeter
