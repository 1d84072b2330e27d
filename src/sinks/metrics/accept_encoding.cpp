#include "sinks/metrics/accept_encoding.h"

#include <algorithm>
#include <optional>
#include <string>

namespace gpumeter::metrics {
namespace {

std::string_view Trim(std::string_view s) {
  const auto ows = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && ows(s.back())) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// A qvalue in thousandths: "0" ["." 0*3DIGIT] or "1" ["." 0*3"0"]; nullopt when malformed.
std::optional<int> QValue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return std::nullopt;
  const int whole = v[0] - '0';
  if (v.size() == 1) return whole * 1000;
  if (v[1] != '.' || v.size() > 5) return std::nullopt;
  int fraction = 0;
  for (size_t i = 2; i < 5; ++i) {
    const char c = i < v.size() ? v[i] : '0';
    if (c < '0' || c > '9') return std::nullopt;
    fraction = fraction * 10 + (c - '0');
  }
  if (whole == 1 && fraction != 0) return std::nullopt;
  return whole * 1000 + fraction;
}

// The weight of one list element from what follows its coding (";q=0.5"), in thousandths: 1000
// when none is given, 0 when it is malformed (what the client meant is unknown: not taken).
// Other parameters are not in the grammar; they are passed over.
int Weight(std::string_view params) {
  int weight = 1000;
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const auto param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    const size_t eq = param.find('=');
    if (eq == std::string_view::npos || Lower(Trim(param.substr(0, eq))) != "q") continue;
    weight = QValue(Trim(param.substr(eq + 1))).value_or(0);
  }
  return weight;
}

}  // namespace

bool AcceptsGzip(std::string_view header) {
  std::optional<int> gzip, identity, any;
  while (!header.empty()) {
    const size_t comma = header.find(',');
    const auto element = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    if (element.empty()) continue;  // "#" lists allow empty elements
    const size_t semi = element.find(';');
    const std::string coding = Lower(Trim(element.substr(0, semi)));
    const int weight = semi == std::string_view::npos ? 1000 : Weight(element.substr(semi + 1));
    std::optional<int>* slot = coding == "gzip" || coding == "x-gzip" ? &gzip
                               : coding == "identity"                 ? &identity
                               : coding == "*"                        ? &any
                                                                      : nullptr;
    // Named twice: a refusal in either wins.
    if (slot) *slot = std::min(slot->value_or(1000), weight);
  }
  const int g = gzip ? *gzip : any.value_or(0);
  return g > 0 && (!identity || g >= *identity);
}

}  // namespace gpumeter::metrics
