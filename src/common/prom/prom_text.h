// A parser for the Prometheus text exposition format (0.0.4) as exporters write it: # HELP and
// # TYPE lines, samples `name{label="value",…} value [timestamp]`, escaped label values (\\ \" \n),
// NaN/±Inf, Windows line ends, blank lines and other comments. OpenMetrics' `# EOF` ends the
// page. Errors name the line and what is wrong.
//
// Two forms over one line parser: ParsePromText keeps a whole page (small pages, tests), and
// PromStream reads a page as it arrives, in pieces split anywhere, handing each sample over and
// keeping only the line being read: a reader that keeps a few families of a large page holds
// those, not the page. Pure; not thread-safe (a PromStream is one reader's).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpumeter::prom {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
  size_t line = 0;  // 1-based, for messages
  bool operator==(const PromSample&) const = default;
};

struct PromPage {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> types;  // family name → counter, gauge, …
};

// Every series is checked for repeats; no cap on a line's length (the caller read the page).
Expected<PromPage> ParsePromText(std::string_view text);

// The longest line a streamed page may have: dcgm-exporter's, every label included, are well
// under 1 KiB; a page with no line end (a binary, a wrong URL) must not be held whole.
inline constexpr size_t kMaxLineBytes = 64u << 10;

class PromStream {
 public:
  struct Handlers {
    // Each sample, in page order; an error ends the parse and is Feed's (or Finish's).
    std::function<Expected<void>(PromSample&&)> sample = nullptr;
    // Each # TYPE line; may be null.
    std::function<void(std::string name, std::string type)> type = nullptr;
    // Which families' series are checked for repeats (null: all). A series written twice is a
    // broken exporter, and a sum would count it twice; the check keeps each series' name and
    // labels, so a streamed reader keeps it to the families it keeps.
    std::function<bool(const std::string& name)> check_repeats = nullptr;
  };

  explicit PromStream(Handlers handlers, size_t max_line_bytes = kMaxLineBytes);

  // The next piece of the page, split anywhere. After an error every call returns it again and
  // nothing more is handed over; after # EOF the rest is ignored.
  Expected<void> Feed(std::string_view chunk);
  // The page's end: its last line, if that had no line end.
  Expected<void> Finish();

 private:
  Expected<void> ParseLine(std::string_view raw);
  Expected<void> CheckRepeat(const PromSample& s);
  Error TooLong(std::string_view more) const;
  Expected<void> Failed(Error e);

  Handlers handlers_;
  size_t max_line_bytes_;
  std::string partial_;  // a line begun in an earlier piece
  size_t number_ = 0;    // lines parsed
  bool ended_ = false;   // # EOF, or Finish
  std::optional<Error> error_;
  std::map<std::string, size_t> series_line_;  // the checked series → their line
};

}  // namespace gpumeter::prom
