// Cells of our outputs that hold text we did not write (namespaces, pod names, label values from a
// pods file or a non-validating API server, command names from /proc, names from the driver): they
// must not be turned against their reader.
//   ValidUtf8 / AppendValidUtf8: for Prometheus label values (the one path of every value in
//     sinks/metrics/exposition.cpp) and any other output that must be UTF-8. Each invalid sequence
//     becomes U+FFFD, one per maximal subpart as the Unicode Standard (§3.9) and WHATWG's decoder
//     do: a byte that starts no sequence, an overlong form, a surrogate, a code point above
//     U+10FFFF, a sequence cut short. The result is cut at `max_bytes` bytes (of output, not of
//     input), before the code point that would pass them, never inside one.
//   TerminalCell: for tables on a terminal. C0/C1 control characters, DEL, invalid UTF-8 and the
//     Unicode bidi controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069, which reorder what
//     follows them, e.g. a name that displays as another) are written as \xNN or \u{NNNN}; other
//     UTF-8 passes as is.
//   SpreadsheetCell: for CSV cells. A cell that starts with = + - @, a tab or a CR is a formula
//     to Excel, LibreOffice and Google Sheets (`=cmd|' -C calc'!A0`); it gets a leading ' as
//     OWASP's CSV-injection advice says, unless the whole cell is a plain number ("-0.5").
// Pure: each returns a string the caller owns (AppendValidUtf8 appends to the caller's); no
// state, so thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace gpumeter {

namespace text_cell_detail {

// The UTF-8 sequence at s[i] (i < s.size()): `length` bytes, and when `valid` its code point.
// When not valid, `length` is the maximal subpart: the longest start of a well-formed sequence
// there, at least 1 byte (so one U+FFFD stands for it).
struct Utf8Sequence {
  size_t length = 1;
  uint32_t cp = 0;
  bool valid = false;
};

inline Utf8Sequence Utf8At(std::string_view s, size_t i) {
  const unsigned b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return {1, b, true};
  // The Unicode Standard's table 3-7: the lead byte sets the length and the range of the second
  // byte, which is what rules out overlong forms (E0, F0), surrogates (ED) and code points above
  // U+10FFFF (F4); the other bytes are 80..BF.
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    lo = b == 0xe0 ? 0xa0 : 0x80;
    hi = b == 0xed ? 0x9f : 0xbf;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    lo = b == 0xf0 ? 0x90 : 0x80;
    hi = b == 0xf4 ? 0x8f : 0xbf;
  } else {
    return {1, 0, false};  // 80..C1 and F5..FF start no sequence
  }
  uint32_t cp = b & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return {k, 0, false};  // cut short by the end of the text
    const unsigned c = static_cast<unsigned char>(s[i + k]);
    if (c < lo || c > hi) return {k, 0, false};
    lo = 0x80, hi = 0xbf;
    cp = (cp << 6) | (c & 0x3fu);
  }
  return {n, cp, true};
}

inline bool IsBidiControl(uint32_t cp) {
  return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace text_cell_detail

// The most bytes a label value keeps. Far above any value that means something (Kubernetes label
// values are at most 63 bytes, object names 253, command names 15, NVML names and UUIDs under
// 96), yet it bounds what a hostile pods file or driver can put in every series: Prometheus keeps
// each value in its index, and one longer than a scrape's label_value_length_limit fails the
// whole scrape.
inline constexpr size_t kMaxLabelValueBytes = 1024;

inline void AppendValidUtf8(std::string& out, std::string_view text,
                            size_t max_bytes = kMaxLabelValueBytes) {
  static constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
  // Short ASCII, the common case (every label value of every scrape comes here): one append.
  if (text.size() <= max_bytes && std::all_of(text.begin(), text.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x80;
      })) {
    out.append(text);
    return;
  }
  size_t used = 0;
  for (size_t i = 0; i < text.size();) {
    const auto seq = text_cell_detail::Utf8At(text, i);
    const std::string_view piece = seq.valid ? text.substr(i, seq.length) : kReplacement;
    if (piece.size() > max_bytes - used) break;
    out.append(piece);
    used += piece.size();
    i += seq.length;
  }
}

inline std::string ValidUtf8(std::string_view text, size_t max_bytes = kMaxLabelValueBytes) {
  std::string out;
  AppendValidUtf8(out, text, max_bytes);
  return out;
}

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
    const auto seq =
        b >= 0x80 ? text_cell_detail::Utf8At(text, i) : text_cell_detail::Utf8Sequence{};
    if (!seq.valid) {  // a control character, DEL, or a byte that is not UTF-8
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
      ++i;
    } else if ((seq.cp >= 0x80 && seq.cp < 0xa0) || text_cell_detail::IsBidiControl(seq.cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(seq.cp));
      out += buf;
      i += seq.length;
    } else {
      out.append(text.substr(i, seq.length));
      i += seq.length;
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
