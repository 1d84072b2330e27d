#include "common/json/key_case.h"

#include <cctype>
#include <functional>
#include <map>

namespace gpumeter::json_case {
namespace {

using nlohmann::json;
using Respell = std::function<std::string(const std::string&)>;

// `data_keys` name the members whose values are data-keyed objects: their keys are kept. Matched
// in either spelling, so one set serves both directions.
// Deeper than this is no document of ours, and a file's nesting must not exhaust the stack.
constexpr int kMaxDepth = 64;

Expected<json> Walk(const json& in, const Respell& respell, const std::set<std::string>& data_keys,
                    int depth = 0) {
  if ((in.is_array() || in.is_object()) && depth >= kMaxDepth)
    return MakeError(ErrorCode::kInvalidInput,
                     "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (in.is_array()) {
    json out = json::array();
    for (const auto& e : in) {
      auto v = Walk(e, respell, data_keys, depth + 1);
      if (!v) return v;
      out.push_back(std::move(*v));
    }
    return out;
  }
  if (!in.is_object()) return in;
  json out = json::object();
  std::map<std::string, std::string> from;  // new key -> the key it came from
  for (const auto& [key, value] : in.items()) {
    const std::string k = respell(key);
    if (const auto [it, fresh] = from.emplace(k, key); !fresh)
      return MakeError(ErrorCode::kInvalidInput, "JSON keys '" + it->second + "' and '" + key +
                                                     "' would both be '" + k + "'");
    if (data_keys.count(key) || data_keys.count(k)) {
      out[k] = value;
      continue;
    }
    auto v = Walk(value, respell, data_keys, depth + 1);
    if (!v) return v;
    out[k] = std::move(*v);
  }
  return out;
}

}  // namespace

std::string CamelCase(const std::string& key) {
  std::string out;
  out.reserve(key.size());
  bool up = false;
  for (const char c : key) {
    if (c == '_' && !out.empty()) {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  if (up) out += '_';  // a trailing '_' is kept: "a_" would otherwise meet "a"
  return out;
}

std::string SnakeCase(const std::string& key) {
  std::string out;
  out.reserve(key.size() + 4);
  for (const char c : key) {
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) {
      out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

Expected<json> ToCamelCase(const json& doc, const std::set<std::string>& data_keys) {
  return Walk(doc, CamelCase, data_keys);
}

Expected<json> ToSnakeCase(const json& doc, const std::set<std::string>& data_keys) {
  return Walk(doc, SnakeCase, data_keys);
}

}  // namespace gpumeter::json_case
