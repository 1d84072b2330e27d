// Recommendations as a table (for people) or JSON (for tools; unknown values are null). Pure.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rightsize/recommend.h"

namespace gpumeter::rightsize {

std::string RenderTable(const std::vector<Recommendation>& rs, const RecommendOptions& o);
nlohmann::json ToJson(const std::vector<Recommendation>& rs, const RecommendOptions& o);
// A section of the HTML report: a heading, the method in a line, and a table (escaped HTML).
std::string RenderHtmlSection(const std::vector<Recommendation>& rs, const RecommendOptions& o);

}  // namespace gpumeter::rightsize
