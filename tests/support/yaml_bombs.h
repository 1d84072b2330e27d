// Small YAML documents that stand for huge ones or nest deep: what each YAML input must refuse at
// once instead of expanding (common/yaml/reader.h has the rules). fuzz/corpus/yaml_formats has
// seeds of the same kinds.
#pragma once

#include <cstddef>
#include <string>

namespace gpumeter::testing {

// "Billion laughs": nine levels of nine aliases each, 9^9 (387 million) x's in under 400 bytes.
// The first alias, *a, is at line 2, column 8.
inline std::string BillionLaughs() {
  std::string doc = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    const std::string below(1, static_cast<char>(level - 1));
    doc += std::string(1, level) + ": &" + level + " [";
    for (int i = 0; i < 9; ++i) doc += (i == 0 ? "*" : ", *") + below;
    doc += "]\n";
  }
  return doc;
}

// A mapping merged into another through an alias (a merge key); the alias is at line 3, column 7.
inline const char* const kMergedAlias = "base: &base {gpus: 8}\nnode:\n  <<: *base\n  cpus: 4\n";

// `depth` lists, each the only item of the one around it: "[[[…]]]".
inline std::string NestedLists(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace gpumeter::testing
