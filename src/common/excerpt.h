// Quoting untrusted text in error messages and tables: at most `max_chars` printable characters,
// every other byte (control characters, NUL, non-ASCII) written as \xNN, and a mark saying how
// much was cut. A reply's body or a label value can then never break a terminal, a log line or a
// table, however hostile. `whole_size`, when larger than the text, says the text is the start of
// that many bytes (a reply's body not kept whole): the mark then counts them. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpumeter {

inline std::string Excerpt(std::string_view text, size_t max_chars = 200, size_t whole_size = 0) {
  std::string out;
  size_t used = 0, i = 0;
  for (; i < text.size() && used < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++used;
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      used += 4;
    }
  }
  const size_t total = whole_size > text.size() ? whole_size : text.size();
  if (i < total) out += "... (" + std::to_string(total) + " bytes)";
  return out;
}

}  // namespace gpumeter
