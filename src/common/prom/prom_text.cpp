#include "common/prom/prom_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "common/excerpt.h"

namespace gpumeter::prom {
namespace {

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }

class Line {
 public:
  Line(std::string_view s, size_t number) : s_(s), n_(number) {}
  bool Done() const { return i_ >= s_.size(); }
  char Peek() const { return Done() ? '\0' : s_[i_]; }
  void SkipSpaces() {
    while (!Done() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }
  std::string Name(bool label) {
    const size_t start = i_;
    if (!Done() && (label ? (NameStart(s_[i_]) && s_[i_] != ':') : NameStart(s_[i_])))
      ++i_;
    else
      return "";
    while (!Done() && NameChar(s_[i_]) && !(label && s_[i_] == ':')) ++i_;
    return std::string(s_.substr(start, i_ - start));
  }
  Expected<std::string> Quoted() {
    if (!Eat('"')) return Fail("expected '\"' to open a label value");
    std::string out;
    while (!Done()) {
      const char c = s_[i_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (Done()) break;
      const char e = s_[i_++];
      if (e == 'n')
        out += '\n';
      else if (e == '\\' || e == '"')
        out += e;
      else
        return Fail(std::string("unknown escape \\") + e + " in a label value");
    }
    return Fail("label value not closed");
  }
  std::string_view Rest() const { return s_.substr(std::min(i_, s_.size())); }
  std::string_view Word() {
    SkipSpaces();
    const size_t start = i_;
    while (!Done() && s_[i_] != ' ' && s_[i_] != '\t') ++i_;
    return s_.substr(start, i_ - start);
  }
  tl::unexpected<Error> Fail(const std::string& what) const {
    return MakeError(ErrorCode::kInvalidInput, "line " + std::to_string(n_) + ": " + what);
  }

 private:
  std::string_view s_;
  size_t n_;
  size_t i_ = 0;
};

Expected<double> Number(std::string_view w, const Line& line) {
  if (w == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (w == "+Inf" || w == "Inf") return std::numeric_limits<double>::infinity();
  if (w == "-Inf") return -std::numeric_limits<double>::infinity();
  const std::string s(w);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end != '\0') return line.Fail("'" + s + "' is not a number");
  return v;
}

Expected<PromSample> Sample(Line& line, size_t number) {
  PromSample s;
  s.line = number;
  s.name = line.Name(false);
  if (s.name.empty()) return line.Fail("expected a metric name");
  if (line.Eat('{')) {
    for (;;) {
      line.SkipSpaces();
      if (line.Eat('}')) break;
      const std::string key = line.Name(true);
      if (key.empty()) return line.Fail("expected a label name in " + s.name + "{…}");
      line.SkipSpaces();
      if (!line.Eat('=')) return line.Fail("expected '=' after label " + key);
      line.SkipSpaces();
      auto value = line.Quoted();
      if (!value) return tl::unexpected(value.error());
      if (!s.labels.emplace(key, *value).second) return line.Fail("label " + key + " repeated");
      line.SkipSpaces();
      if (line.Eat(',')) continue;
      if (line.Eat('}')) break;
      return line.Fail("expected ',' or '}' after label " + key);
    }
  }
  if (line.Peek() != ' ' && line.Peek() != '\t')
    return line.Fail("expected a space before the value of " + s.name);
  auto v = Number(line.Word(), line);
  if (!v) return tl::unexpected(v.error());
  s.value = *v;
  const auto ts = line.Word();  // optional timestamp (ms)
  if (!ts.empty()) {
    auto t = Number(ts, line);
    if (!t) return tl::unexpected(t.error());
  }
  line.SkipSpaces();
  if (!line.Done()) return line.Fail("unexpected text after the sample of " + s.name);
  return s;
}

}  // namespace

PromStream::PromStream(Handlers handlers, size_t max_line_bytes)
    : handlers_(std::move(handlers)), max_line_bytes_(max_line_bytes) {}

Expected<void> PromStream::Failed(Error e) {
  error_ = std::move(e);
  partial_ = std::string();  // nothing more is parsed: give the line's memory back
  return tl::unexpected(*error_);
}

// The line being read, `more` of it in this piece, is over the cap: named by its number and start.
Error PromStream::TooLong(std::string_view more) const {
  std::string start = partial_.substr(0, 60);
  start += more.substr(0, 60 - start.size());
  return Error{ErrorCode::kInvalidInput, "line " + std::to_string(number_ + 1) + ": longer than " +
                                             std::to_string(max_line_bytes_) +
                                             " bytes (refused): " + Excerpt(start, 60) + "..."};
}

Expected<void> PromStream::Feed(std::string_view chunk) {
  while (!error_ && !ended_ && !chunk.empty()) {
    const size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    if (piece.size() > max_line_bytes_ - std::min(partial_.size(), max_line_bytes_))
      return Failed(TooLong(piece));
    if (nl == std::string_view::npos) {
      partial_ += piece;
      break;
    }
    chunk.remove_prefix(nl + 1);
    Expected<void> parsed;
    if (partial_.empty()) {
      parsed = ParseLine(piece);  // whole in this piece: parsed where it lies
    } else {
      partial_ += piece;
      parsed = ParseLine(partial_);
      partial_.clear();
    }
    if (!parsed) return Failed(parsed.error());
  }
  if (error_) return tl::unexpected(*error_);
  return {};
}

Expected<void> PromStream::Finish() {
  if (!error_ && !ended_ && !partial_.empty()) {
    auto parsed = ParseLine(partial_);
    if (!parsed) return Failed(parsed.error());
  }
  ended_ = true;
  partial_ = std::string();
  if (error_) return tl::unexpected(*error_);
  return {};
}

Expected<void> PromStream::CheckRepeat(const PromSample& s) {
  if (handlers_.check_repeats && !handlers_.check_repeats(s.name)) return {};
  std::string id = s.name;
  for (const auto& [k, v] : s.labels) id += '\0' + k + '=' + v;
  if (auto [it, fresh] = series_line_.emplace(std::move(id), s.line); !fresh)
    return MakeError(ErrorCode::kInvalidInput, "line " + std::to_string(s.line) + ": series " +
                                                   s.name + " repeats the one on line " +
                                                   std::to_string(it->second) +
                                                   " with the same labels");
  return {};
}

Expected<void> PromStream::ParseLine(std::string_view raw) {
  const size_t number = ++number_;
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  Line line(raw, number);
  line.SkipSpaces();
  if (line.Done()) return {};
  if (line.Peek() == '#') {
    const std::string_view rest = line.Rest();
    if (rest == "# EOF") ended_ = true;
    if (rest == "# TYPE" || rest.substr(0, 7) == "# TYPE ") {
      Line t(rest.substr(std::min<size_t>(7, rest.size())), number);
      std::string name = t.Name(false);
      const auto type = t.Word();
      if (name.empty() || type.empty()) return t.Fail("malformed # TYPE line");
      if (handlers_.type) handlers_.type(std::move(name), std::string(type));
    }
    return {};  // HELP and other comments
  }
  auto s = Sample(line, number);
  if (!s) return tl::unexpected(s.error());
  if (auto fresh = CheckRepeat(*s); !fresh) return fresh;
  return handlers_.sample(std::move(*s));
}

Expected<PromPage> ParsePromText(std::string_view text) {
  PromPage page;
  PromStream stream(
      {.sample = [&page](PromSample&& s) -> Expected<void> {
         page.samples.push_back(std::move(s));
         return {};
       },
       .type = [&page](std::string name,
                       std::string type) { page.types[std::move(name)] = std::move(type); },
       .check_repeats = nullptr},
      std::numeric_limits<size_t>::max());
  if (auto fed = stream.Feed(text); !fed) return tl::unexpected(fed.error());
  if (auto end = stream.Finish(); !end) return tl::unexpected(end.error());
  return page;
}

}  // namespace gpumeter::prom
