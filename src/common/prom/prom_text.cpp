#include "common/prom/prom_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

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

Expected<PromPage> ParsePromText(std::string_view text) {
  PromPage page;
  size_t number = 0;
  // A series written twice on one page is a broken exporter: summing it would count it twice.
  std::map<std::string, size_t> series_line;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    Line line(raw, number);
    line.SkipSpaces();
    if (line.Done()) continue;
    if (line.Peek() == '#') {
      const std::string_view rest = line.Rest();
      if (rest == "# EOF") break;
      if (rest == "# TYPE" || rest.substr(0, 7) == "# TYPE ") {
        Line t(rest.substr(std::min<size_t>(7, rest.size())), number);
        const std::string name = t.Name(false);
        const auto type = t.Word();
        if (name.empty() || type.empty()) return t.Fail("malformed # TYPE line");
        page.types[name] = std::string(type);
      }
      continue;  // HELP and other comments
    }
    auto s = Sample(line, number);
    if (!s) return tl::unexpected(s.error());
    std::string id = s->name;
    for (const auto& [k, v] : s->labels) id += '\0' + k + '=' + v;
    if (auto [it, fresh] = series_line.emplace(std::move(id), number); !fresh)
      return line.Fail("series " + s->name + " repeats the one on line " +
                       std::to_string(it->second) + " with the same labels");
    page.samples.push_back(std::move(*s));
  }
  return page;
}

}  // namespace gpumeter::prom
