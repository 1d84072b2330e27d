#include "common/json/strict_parse.h"

#include <set>
#include <vector>

#include "common/excerpt.h"

namespace gpumeter::json_strict {

using nlohmann::json;

Expected<json> Parse(std::string_view text, const std::string& what, int max_depth) {
  std::vector<std::set<std::string>> keys;  // of each open object, innermost last
  std::string duplicate;
  bool too_deep = false;
  // Values deeper than the bound are dropped as they are parsed (the callback says so), and the
  // document refused after.
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_depth) {
      too_deep = true;
      return false;
    }
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, check);
  } catch (const json::exception& e) {
    // The parser's text says where and why (a number too large, a bad escape); its prefix goes.
    std::string why = e.what();
    if (const auto close = why.find("] ");
        why.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      why = why.substr(close + 2);
    return MakeError(ErrorCode::kInvalidInput, what + ": not valid JSON: " + Excerpt(why, 200));
  }
  if (too_deep)
    return MakeError(ErrorCode::kInvalidInput,
                     what + ": nested deeper than " + std::to_string(max_depth) + " levels");
  if (!duplicate.empty())
    return MakeError(ErrorCode::kInvalidInput,
                     what + ": duplicate key '" + Excerpt(duplicate, 200) + "'");
  return doc;
}

}  // namespace gpumeter::json_strict
