// Small filters over findings for the guard's tests.
#pragma once

#include <string>
#include <vector>

#include "core/guard/findings.h"

namespace gpumeter::guard::testing {

inline std::vector<Finding> Of(const std::vector<Finding>& all, Kind k) {
  std::vector<Finding> out;
  for (const auto& f : all)
    if (f.kind == k) out.push_back(f);
  return out;
}

inline bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace gpumeter::guard::testing
