// JSON read strictly, for documents from outside (a pods file, the API server's replies): an
// object with the same key twice is refused, where nlohmann would keep the last value in silence
// (a pod with two `uid`s or two values for one label is malformed, not a choice to make), and so
// is nesting past a bound (a hostile document must not cost memory for nothing). Pure;
// thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter::json_strict {

// Parses `text`. Errors (kInvalidInput) start with `what`: "<what>: not valid JSON: <where and
// why, from the parser>", "<what>: nested deeper than <max_depth> levels", "<what>: duplicate key
// '<key>'" (the first one met; the same key in two different objects is not a duplicate).
Expected<nlohmann::json> Parse(std::string_view text, const std::string& what, int max_depth);

}  // namespace gpumeter::json_strict
